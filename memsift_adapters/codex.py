"""Codex: its rollout lines, and the AGENTS.md files it loads itself."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .agent import Agent, folders_down_to
from .transcript import entry, turn

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    from .agent import Payload, TurnText

# Codex 0.171 writes ``item_completed`` events holding these items; earlier
# releases wrote ``user_message`` and ``agent_message`` events.
_ROLES = {"UserMessage": "user", "AgentMessage": "assistant",
          "user_message": "user", "agent_message": "assistant"}


def read_turn(line: bytes) -> TurnText | None:
    """A line of a Codex rollout: a user or agent message event."""
    found = entry(line, b'"event_msg"')
    event = found.get("payload") if found and found.get("type") == "event_msg" else None
    if isinstance(event, dict) and event.get("type") == "item_completed":
        event = event.get("item")
    if not isinstance(event, dict):
        return None
    return turn(_ROLES.get(str(event.get("type"))), event.get("content", event.get("message")))


def loaded_files(payload: Payload, root: Path) -> tuple[Path, ...]:
    """``$CODEX_HOME/AGENTS.md`` and the project's, from its root down to the session's folder
    (each folder's override too: Codex reads the one there is), and Codex's memories
    (``$CODEX_HOME/memories/memory_summary.md`` and ``MEMORY.md``)."""
    home = Path(os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex"))
    files = [home / "AGENTS.override.md", home / "AGENTS.md"]
    for folder in folders_down_to(Path(os.path.abspath(payload["cwd"])), root):
        files += [folder / "AGENTS.override.md", folder / "AGENTS.md"]
    # Codex's own memories (off by default): the summary is in every session, MEMORY.md searched on demand.
    files += [home / "memories" / "memory_summary.md", home / "memories" / "MEMORY.md"]
    return tuple(files)


def shows_notices(environ: Mapping[str, str]) -> bool:
    """``codex exec`` shows no hook's ``systemMessage`` and nothing tells it from the TUI in a
    hook's environment; and Codex runs SessionStart with the first prompt anyway. So a notice goes
    with the prompt, for the TUI to show and the model to pass on."""
    return False


AGENT = Agent("codex", read_turn, loaded_files, shows_notices)
