"""Claude Code: its transcript lines, and the CLAUDE.md files it loads itself."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .agent import Agent, folders_down_to
from .transcript import entry, turn

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    from .agent import Payload, TurnText


def read_turn(line: bytes) -> TurnText | None:
    """A line of a Claude Code transcript: user text, or an assistant's text blocks."""
    found = entry(line, b'"user"', b'"assistant"')
    message = found.get("message") if found else None
    if not isinstance(message, dict) or not found or found.get("isSidechain") or found.get("isMeta"):
        return None
    content = message.get("content")
    if isinstance(content, list) and any(isinstance(block, dict) and block.get("type") == "tool_result"
                                         for block in content):
        return None  # a tool's output, not something the user said
    return turn(found.get("type"), content)


def loaded_files(payload: Payload, root: Path) -> tuple[Path, ...]:
    """The user's CLAUDE.md, the project's from its root down to the session's folder, and the
    project's auto memory (``memory/MEMORY.md`` beside the session's transcript, and its topic files)."""
    config = Path(os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude"))
    files = [config / "CLAUDE.md"]
    for folder in folders_down_to(Path(os.path.abspath(payload["cwd"])), root):
        files += [folder / "CLAUDE.md", folder / ".claude" / "CLAUDE.md", folder / "CLAUDE.local.md"]
    transcript = payload.get("transcript_path")
    if isinstance(transcript, str) and transcript:
        # Auto memory: MEMORY.md is loaded at start, its topic files read when the model wants them.
        memory = Path(transcript).parent / "memory"
        files.append(memory / "MEMORY.md")
        files += sorted(path for path in _markdown_in(memory) if path.name != "MEMORY.md")
    return tuple(files)


def _markdown_in(folder: Path) -> list[Path]:
    try:
        return [Path(entry.path) for entry in os.scandir(folder) if entry.name.endswith(".md")]
    except OSError:  # no auto memory for this project: the usual case
        return []


def shows_notices(environ: Mapping[str, str]) -> bool:
    """Only the interactive CLI shows a hook's ``systemMessage``: ``claude -p`` (entry point
    ``sdk-cli``) drops SessionStart's and prints UserPromptSubmit's only in its stream-json events,
    the SDKs leave them to their caller. An unknown entry point counts as not shown: the notice
    then reaches the model too, which is asked to pass it on."""
    return environ.get("CLAUDE_CODE_ENTRYPOINT") == "cli"


AGENT = Agent("claude-code", read_turn, loaded_files, shows_notices)
