"""What differs between agents: how a transcript line reads, which files the agent loads itself."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    from typing import Any, Literal, TypeAlias

    Role: TypeAlias = Literal["user", "assistant"]
    TurnText: TypeAlias = tuple[Role, str]  # (role, text): memsift's Turn is built later, after Stop forked
    TurnReader: TypeAlias = Callable[[bytes], "TurnText | None"]  # one line of a transcript
    Payload: TypeAlias = Mapping[str, Any]


def shown(environ: Mapping[str, str]) -> bool:
    return True


class Agent:
    """One agent's side of the translation (a plain class: a NamedTuple would import typing on
    every hook).

    ``loaded_files(payload, root)`` names the instruction files the agent puts
    in its own context for a session in ``payload["cwd"]`` (it reads none of them).
    ``shows_notices(environ)``: whether the user sees a hook's ``systemMessage``
    in the mode the agent runs in (its environment says); when not, a notice is
    given with a prompt, and the agent is asked to pass it on.
    """

    __slots__ = ("loaded_files", "name", "read_turn", "shows_notices")

    def __init__(self, name: str, read_turn: TurnReader, loaded_files: Callable[[Payload, Path], tuple[Path, ...]],
                 shows_notices: Callable[[Mapping[str, str]], bool] = shown) -> None:
        self.name = name
        self.read_turn = read_turn
        self.loaded_files = loaded_files
        self.shows_notices = shows_notices


def folders_down_to(cwd: Path, root: Path) -> list[Path]:
    """``root`` and every folder under it down to ``cwd``, where agents look for instruction files.

    >>> folders_down_to(Path("/src/shop/api"), Path("/src/shop"))
    [PosixPath('/src/shop'), PosixPath('/src/shop/api')]
    """
    if cwd == root or root not in cwd.parents:
        return [cwd]
    below = [folder for folder in (cwd, *cwd.parents) if root in folder.parents]
    return [root, *reversed(below)]
