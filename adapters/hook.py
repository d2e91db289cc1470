"""memsift in Claude Code's and Codex's hooks: ``python adapters/hook.py <agent> <event>``.

The agent pipes the hook's JSON payload to stdin; ``agent`` is ``claude`` or
``codex``, ``event`` one of:

- ``prompt`` (UserPromptSubmit): recall. Prints
  ``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "..."}}``
  when memory adds something or is paused, and nothing otherwise.
- ``stop`` (Stop): retain the exchange, in a process detached from the agent.
  Prints nothing; the detached retain's errors go to ``<memsift home>/hooks.log``.

    $ echo '{"session_id": "s1", "cwd": "/src/shop", "prompt": "why Stripe?"}' \\
        | .venv/bin/python adapters/hook.py claude prompt

Both agents take the same output; they differ only in their transcript files,
read here for the recent turns and the exchange's user prompt. Fail open:
whatever the input, the exit code is 0, stdout is empty or valid output, and
what went wrong is one line on stderr.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

# (role, text): memsift's Turn is built later, so the Stop hook forks before paying attrs' import.
TurnText = tuple[str, str]
TurnReader = Callable[[bytes], "TurnText | None"]  # one line of a transcript

# A transcript is read from its end, in a window four times wider each pass.
_FIRST_WINDOW = 64 * 1024
_LAST_WINDOW = 4 * 1024 * 1024
LOG = "hooks.log"  # in memsift's home: the detached retain's one-line errors


class BadInput(Exception):
    """The payload is not what the agent's hook contract promises."""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in TURN_READERS or args[1] not in EVENTS:
        return _complain("usage: adapters/hook.py claude|codex prompt|stop")
    agent, event = args
    try:
        EVENTS[event](TURN_READERS[agent], _payload(sys.stdin.buffer.read()))
    except Exception as exc:  # fail open: the agent goes on, the reason is one line
        why = str(exc) if isinstance(exc, BadInput) else f"{type(exc).__name__}: {exc}"
        return _complain(f"{agent} {event} hook: {why}")
    return 0


def prompt(read_turn: TurnReader, payload: Mapping[str, Any]) -> None:
    """UserPromptSubmit: print what memory adds to the prompt, or nothing."""
    import contextlib

    # Module by module: the lazy names of ``memsift`` do not show in ``python -X importtime``.
    from memsift.config import load_config
    from memsift.pipeline import recall
    from memsift.services import open_services
    from memsift.stages import RECENT_TURNS
    from memsift.types import Message, Turn

    text, root = _required(payload, "prompt"), _required(payload, "cwd")
    turns = recent_turns(payload.get("transcript_path"), read_turn, RECENT_TURNS + 1)
    if turns and turns[-1] == ("user", text):
        turns.pop()  # the agent already wrote this very prompt down
    message = Message(text, [Turn(role, said) for role, said in turns[-RECENT_TURNS:]],
                      _optional(payload, "session_id"))
    with contextlib.redirect_stdout(sys.stderr):  # stdout is the agent's: nothing else may reach it
        result = recall(message, open_services(load_config(), root))
    context = "\n".join(part for part in (result.notice, result.text) if part)
    if context:
        sys.stdout.write(json.dumps({"hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit", "additionalContext": context}}) + "\n")


def stop(read_turn: TurnReader, payload: Mapping[str, Any]) -> None:
    """Stop: retain the exchange just finished, off the agent's critical path.

    The user prompt comes from the transcript, which the agent wrote when the
    turn began; the answer from ``last_assistant_message``, or the transcript
    when the agent does not send it.
    """
    root = _required(payload, "cwd")
    if payload.get("stop_hook_active") is True:
        return  # the agent goes on because a Stop hook asked it to: the exchange is not over
    turns = recent_turns(payload.get("transcript_path"), read_turn, 2)
    users = [i for i, (role, _) in enumerate(turns) if role == "user"]
    if not users:
        raise BadInput("no user prompt in the transcript, nothing retained")
    answers = [said for role, said in turns[users[-1] + 1:] if role == "assistant"]
    answer = _optional(payload, "last_assistant_message") or (answers[-1] if answers else "")
    if not answer.strip():
        raise BadInput("no answer in the payload or the transcript, nothing retained")
    if not _in_background():
        return
    from memsift.config import default_home, load_config
    from memsift.pipeline import retain
    from memsift.services import open_services
    from memsift.types import Exchange

    _stderr_to(default_home(os.environ) / LOG)  # the agent stopped listening: errors go there
    config = load_config()
    services = open_services(config, root)
    retain(Exchange(turns[users[-1]][1], answer, _optional(payload, "session_id")), services)
    if config.reviser != "duplicates":  # a model reviser: here, in this detached child, never in the hook
        from memsift.model_reviser import revise_when_due

        try:
            revise_when_due(config, services.notebook)  # type: ignore[arg-type]
        except Exception as error:  # the notes are untouched; say why in hooks.log
            print(f"memsift: the model reviser failed: {type(error).__name__}: {error}", file=sys.stderr)


EVENTS: dict[str, Callable[[TurnReader, Mapping[str, Any]], None]] = {"prompt": prompt, "stop": stop}


# -- transcripts (hooks.md section 5) -------------------------------------------

def claude_turn(line: bytes) -> TurnText | None:
    """A line of a Claude Code transcript: user text, or an assistant's text blocks."""
    entry = _entry(line, b'"user"', b'"assistant"')
    message = entry.get("message") if entry else None
    if not isinstance(message, dict) or entry.get("isSidechain") or entry.get("isMeta"):
        return None
    content = message.get("content")
    if isinstance(content, list) and any(isinstance(block, dict) and block.get("type") == "tool_result"
                                         for block in content):
        return None  # a tool's output, not something the user said
    return _turn(entry.get("type"), content)


# Codex 0.171 writes ``item_completed`` events holding these items; earlier
# releases wrote ``user_message`` and ``agent_message`` events.
_CODEX_ROLES = {"UserMessage": "user", "AgentMessage": "assistant",
                "user_message": "user", "agent_message": "assistant"}


def codex_turn(line: bytes) -> TurnText | None:
    """A line of a Codex rollout: a user or agent message event."""
    entry = _entry(line, b'"event_msg"')
    event = entry.get("payload") if entry and entry.get("type") == "event_msg" else None
    if isinstance(event, dict) and event.get("type") == "item_completed":
        event = event.get("item")
    if not isinstance(event, dict):
        return None
    return _turn(_CODEX_ROLES.get(event.get("type")), event.get("content", event.get("message")))


TURN_READERS: dict[str, TurnReader] = {"claude": claude_turn, "codex": codex_turn}


def recent_turns(path: object, read_turn: TurnReader, limit: int) -> list[TurnText]:
    """The last ``limit`` turns of a transcript, oldest first, reading only its tail.

    Consecutive lines of one role make one turn (an answer split around tool
    calls). A missing or unreadable transcript has no turns.

    >>> recent_turns("/home/u/.claude/projects/-src-shop/s1.jsonl", claude_turn, 4)
    [('user', 'why Stripe?'), ('assistant', 'Mollie dropped webhooks under load.')]
    """
    if not isinstance(path, str) or not path:
        return []
    try:
        with open(path, "rb") as file:
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
    except OSError:
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


def _entry(line: bytes, *markers: bytes) -> dict[str, Any] | None:
    """The JSON object on a line that names one of the markers; None for any other line.

    The markers spare parsing the big lines (tool output, prompt snapshots)
    that cannot hold a turn.
    """
    if not any(marker in line for marker in markers):
        return None
    try:
        entry = json.loads(line)
    except ValueError:  # a torn or foreign line: the rest is still worth reading
        return None
    return entry if isinstance(entry, dict) else None


def _turn(role: object, content: object) -> TurnText | None:
    """A turn from a role and a content: a string, or blocks with a ``text`` each."""
    if isinstance(content, list):
        content = "\n".join(block["text"] for block in content
                            if isinstance(block, dict) and isinstance(block.get("text"), str))
    if role not in ("user", "assistant") or not isinstance(content, str) or not content.strip():
        return None
    return (str(role), content)


# -- the payload -------------------------------------------------------------------

def _payload(raw: bytes) -> Mapping[str, Any]:
    try:
        payload = json.loads(raw)
    except ValueError as exc:  # UnicodeDecodeError included: binary junk
        raise BadInput(f"stdin is not a JSON hook payload ({exc})") from None
    if not isinstance(payload, dict):
        raise BadInput(f"stdin is JSON but not an object ({type(payload).__name__})")
    return payload


def _required(payload: Mapping[str, Any], key: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str):
        raise BadInput(f"the payload has no {key!r} string")
    return value


def _optional(payload: Mapping[str, Any], key: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) else ""


def _in_background() -> bool:
    """Fork a child that outlives the hook and holds none of the agent's pipes.

    True in the child, False in the hook itself, which returns at once: the
    agent waits for neither, and a ``claude -p`` tearing down does not kill
    the retain half way.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork():
        return False
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    return True


def _stderr_to(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), 2)


def _complain(message: str) -> int:
    sys.stderr.write("memsift: " + " ".join(message.split())[:500] + "\n")
    return 0


if __name__ == "__main__":
    # The hook configs run this file by path (no runpy, no cd): memsift sits
    # beside this folder, whether or not it is installed.
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
