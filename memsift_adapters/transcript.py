"""Reading the last turns of an agent's transcript from its end (docs/agents.md, Transcripts).

>>> recent_turns("/home/u/.claude/projects/-src-shop/s1.jsonl", claude_turn, 4)
[('user', 'why Stripe?'), ('assistant', 'Mollie dropped webhooks under load.')]
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    from typing import Any

    from .agent import TurnReader, TurnText

# A transcript is read from its end, in a window four times wider each pass.
_FIRST_WINDOW = 64 * 1024
_LAST_WINDOW = 4 * 1024 * 1024


def recent_turns(path: object, read_turn: TurnReader, limit: int) -> list[TurnText]:
    """The last ``limit`` turns of a transcript, oldest first, reading only its tail.

    Consecutive lines of one role make one turn (an answer split around tool
    calls). A missing or unreadable transcript has no turns.
    """
    if not isinstance(path, str) or not path:
        return []
    from memsift.hooks import open_regular  # a FIFO given as the transcript must not hang the hook

    try:
        with open_regular(path) as file:
            size = file.seek(0, os.SEEK_END)
            window = _FIRST_WINDOW
            while True:
                start = max(0, size - window)
                file.seek(start)
                lines = file.read(size - start).split(b"\n")
                turns = _turns(lines[1:] if start else lines, read_turn)  # the first line is cut
                # One turn more than asked: the oldest may be cut by the window.
                if len(turns) > limit or start == 0 or window >= _LAST_WINDOW:
                    return turns[-limit:]
                window *= 4
    except (OSError, ValueError):  # ValueError: a path with a NUL byte in it
        return []


def _turns(lines: list[bytes], read_turn: TurnReader) -> list[TurnText]:
    turns: list[TurnText] = []
    for line in lines:
        turn = read_turn(line)
        if turn is None:
            continue
        if turns and turns[-1][0] == turn[0]:
            turns[-1] = (turn[0], f"{turns[-1][1]}\n{turn[1]}")
        else:
            turns.append(turn)
    return turns


def entry(line: bytes, *markers: bytes) -> dict[str, Any] | None:
    """The JSON object on a line that names one of the markers; None for any other line.

    The markers spare parsing the big lines (tool output, prompt snapshots)
    that cannot hold a turn.
    """
    if not any(marker in line for marker in markers):
        return None
    try:
        found = json.loads(line)
    except ValueError:  # a torn or foreign line: the rest is still worth reading
        return None
    return found if isinstance(found, dict) else None


def turn(role: object, content: object) -> TurnText | None:
    """A turn from a role and a content: a string, or blocks with a ``text`` each."""
    if isinstance(content, list):
        content = "\n".join(block["text"] for block in content
                            if isinstance(block, dict) and isinstance(block.get("text"), str))
    if role not in ("user", "assistant") or not isinstance(content, str) or not content.strip():
        return None
    return ("user" if role == "user" else "assistant", content)
