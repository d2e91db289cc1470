"""``memsift hook claude-code|codex EVENT``: one hook of an agent, its payload on stdin.

EVENT is the agent's own event name:

- ``UserPromptSubmit``: recall. Prints
  ``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "..."}}``
  when memory adds something (with a top-level ``systemMessage`` for the user
  when memory is paused), and nothing otherwise.
- ``Stop``: retain the exchange, in a process detached from the agent. Prints nothing.
- ``SessionStart``: the session brief (the facts of the project's memory
  chosen for this session, within ``brief_chars``) for the model, and one
  line, for the user and the model, when memory is paused or misconfigured.
  Where the agent's mode shows the user no hook message
  (``Agent.shows_notices``: ``claude -p``, Codex), the line is held for the
  session's next prompt, which gives it to the model with a request to pass
  it on (``RELAY``).
- ``SessionEnd``: drain the outbox to the store, detached. Prints nothing.

    $ echo '{"session_id": "s1", "cwd": "/src/shop", "prompt": "why Stripe?"}' \\
        | memsift hook claude-code UserPromptSubmit

Most messages end in ``memsift._hooks.quiet``, before the pipeline is imported.
The project is the git work tree around the payload's ``cwd``. Both agents
take the same output; they differ in their transcripts and instruction files
(``claude_code.py``, ``codex.py``). Fail open: whatever the input, the exit
code is 0, stdout is empty or valid output, and what went wrong is one line
on stderr (for the detached work: in ``<memsift home>/hooks.log``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Literal

    from .agent import Agent, Payload

    from memsift.services import Services
    from memsift.types import Exchange, Message, Recall, Retained

LOG = "hooks.log"  # in memsift's home: the detached work's one-line errors
DETACHED_WAIT = 30.0  # seconds a detached retain waits for a model server it started (about 1 s idle, far more busy)


class BadInput(Exception):
    """The payload is not what the agent's hook contract promises."""


class MemoryOff(BadInput):
    """The settings do not load: nothing is done, and the agent hears why once per session."""

    def __init__(self, why: str, notice: str | None) -> None:
        super().__init__(f"settings: {why}")
        self.notice = notice


def main(args: Sequence[str]) -> int:
    agent = _agent(args[0]) if len(args) == 2 else None
    if agent is None or args[1] not in EVENTS:
        return _misconfigured(args)
    event = args[1]
    if sys.stdin.isatty():  # someone trying it by hand: the agent sends the payload, not a person
        sys.stderr.write(f"memsift hook {agent.name} {event}: reading the agent's JSON payload on standard "
                         "input (end it with Ctrl-D)\n")
    try:
        raw = sys.stdin.buffer.read()
        if not raw.strip():
            return 0  # nothing was sent: nothing to do, and nothing to tell the agent
        payload = _payload(raw)
        if _home_is_yours(event) and _first_call(agent, event, payload):
            EVENTS[event](agent, payload)
    except Exception as exc:  # fail open: the agent goes on, the reason is one line
        why = str(exc) if isinstance(exc, BadInput) else f"{type(exc).__name__}: {exc}"
        return _complain(f"{agent.name} {event} hook: {why}")
    return 0


def _home_is_yours(event: str) -> bool:
    """False, and the agent told why memory is off, when memsift's home (or a folder or file it uses
    there, links resolved) is not the user's own: nothing in it is read or written, no server in it is
    talked to. Said on every prompt: there is nowhere of the user's to note it was said."""
    from memsift.hooks import default_home, home_not_yours

    foreign = home_not_yours(default_home(os.environ))
    if foreign is None:
        return True
    why = f"{foreign.reason} (memsift doctor says how to fix it)"
    if event in ("UserPromptSubmit", "SessionStart"):
        _say(event, "", f"memory off: {why}; reminders are off")
    _complain(f"memory off: {why}")
    return False


def prompt(agent: Agent, payload: Payload) -> None:
    """UserPromptSubmit: print what memory adds to the prompt, or nothing."""
    from memsift.hooks import surely_quiet

    text = _required(payload, "prompt")
    _required(payload, "cwd")
    tell = _teller(agent, payload)
    if surely_quiet(text):
        _decided(agent, "UserPromptSubmit", payload, None)
        tell("", _quiet_news(payload))
        return  # what recall would conclude, without paying for it: most messages end here

    if _recalled_in_server(agent, payload, tell):
        return  # the warm model server recalled it: nothing of the pipeline is imported here

    # Module by module: the lazy names of ``memsift`` do not show in ``python -X importtime``.
    import contextlib

    from memsift.hooks import answered, project_root

    message = recall_message(agent, payload)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the agent's: nothing else may reach it
            services = _services(agent, payload, with_loaded_files=True)
    except MemoryOff as off:
        tell("", off.notice)
        raise
    with contextlib.redirect_stdout(sys.stderr):
        added, notice = answered(services, message, agent.name, str(project_root(payload["cwd"])))
    tell(added, notice)


def _teller(agent: Agent, payload: Payload) -> Callable[[str, str | None], None]:
    """What prints a prompt's answer: what memory adds, and the notices, the one its session's start
    held first (``session_start``), asked to be passed on when the user does not see hook messages."""
    from memsift.hooks import default_home, take_held

    def tell(added: str, notice: str | None) -> None:
        session = _optional(payload, "session_id")
        held = take_held(default_home(os.environ), session) if session else None
        _say("UserPromptSubmit", added, _joined(held, notice), relay=not agent.shows_notices(os.environ))

    return tell


def _joined(*notices: str | None) -> str | None:
    return "; ".join(dict.fromkeys(notice for notice in notices if notice)) or None


def _recalled_in_server(agent: Agent, payload: Payload, tell: Callable[[str, str | None], None]) -> bool:
    """True once the warm model server took this message (``memsift._hooks.served``) and what it added
    is said; False when none runs or it declined, and the hook recalls in process."""
    from memsift.hooks import (
        MAX_MESSAGE_CHARS, NotHeard, default_home, listening, project_root, request_for, served_recall,
    )

    home, text = default_home(os.environ), payload["prompt"]
    if not listening(home) or len(text) > MAX_MESSAGE_CHARS or "\0" in payload["cwd"]:
        return False
    root = project_root(payload["cwd"])
    request = request_for(os.environ, home, root, _optional(payload, "session_id"), agent.name, text,
                          prompt_turns(agent, payload), agent.loaded_files(payload, root))
    try:
        answer = served_recall(home, request)
    except NotHeard:
        return True  # the server has it and is slow: this message gets nothing (fail open), and only once
    if answer is None:
        return False
    from memsift.screen import screened_text, terminal_safe

    # Screened as any memory text is, and the notice one printable line: whatever the answer holds.
    notice = answer.get("notice")
    tell(screened_text(str(answer.get("text") or "")),
         terminal_safe(" ".join(notice.split())) if isinstance(notice, str) else None)
    return True


def stop(agent: Agent, payload: Payload) -> None:
    """Stop: retain the exchange just finished, off the agent's critical path.

    The user prompt comes from the transcript, which the agent wrote when the
    turn began; the answer from ``last_assistant_message``, or the transcript
    when the agent does not send it.
    """
    exchange = finished_exchange(agent, payload)
    if exchange is None or not _in_background():
        return
    from memsift.hooks import project_root, retain_or_wait

    services = _detached(_services(agent, payload, detached=True))
    result = retain_or_wait(exchange, services, project_root(payload["cwd"]))
    if result is None:
        return  # it waits in the spool, and the next prompt says so
    _decided(agent, "Stop", payload, result)
    if services.config.brief_chars > 0:  # kept notes, a fact recall gave: the next session's brief may change
        _brief_for_next_session(agent, payload, services)
    if services.config.reviser != "duplicates":  # a model reviser: here, in this detached child, never in the hook
        from memsift.model_reviser import revise_when_due

        try:
            revise_when_due(services.config, services.notebook)  # type: ignore[arg-type]
        except Exception as error:  # the notes are untouched; say why in hooks.log
            print(f"memsift: the model reviser failed: {type(error).__name__}: {error}", file=sys.stderr)


def session_start(agent: Agent, payload: Payload) -> None:
    """SessionStart (a session starts, resumes, is cleared or compacted): the session brief, the
    facts of the project's memory chosen for it, and one line when memory is paused or misconfigured.

    Only what is known is told (a breaker an earlier hook opened, settings that
    do not load, names that are no setting): no service is called, the session
    does not wait on one. When the user does not see this hook's message (``claude
    -p``, Codex), the line is held for the session's next prompt, which says it.
    """
    from memsift.hooks import default_home, forget_old, hold

    home, session = default_home(os.environ), _optional(payload, "session_id")
    forget_old(home)
    notice = start_notice(agent, payload)
    if notice and session and not agent.shows_notices(os.environ) and hold(home, session, notice):
        notice = None  # the next prompt says it
    _say("SessionStart", session_brief(agent, payload), notice)


def session_brief(agent: Agent, payload: Payload) -> str:
    """The session's brief: the facts of the project's memory chosen for it ('' when memory is off,
    which ``start_notice`` tells, or holds nothing worth the budget). Cleared or compacted, the
    session's context no longer holds what it was given: it is forgotten, and given again.

    Remembered (``memsift.hooks.remembered_brief``): when nothing it follows from changed since a hook
    last made it (the detached Stop makes it after each exchange), it is read back, and neither the
    settings nor the pipeline are loaded; else it is made here and remembered.
    """
    from memsift.hooks import (
        SessionLog, branch, brief_key, default_home, project_folder, project_root, remember_brief, remembered_brief,
        settings_verdict, untrusted_files,
    )

    home, session = default_home(os.environ), _optional(payload, "session_id")
    root = project_root(_required(payload, "cwd"))
    folder = project_folder(home, root)
    if _optional(payload, "source") in FORGOTTEN:
        SessionLog(home / "sessions").forget(session)  # what it was given is no longer in its context
    if not os.path.exists(folder / "notes.md") or settings_verdict(os.environ, root).error \
            or untrusted_files(home, folder):
        return ""  # no memory yet; or memory is off, and start_notice says why
    focus, loaded = branch(root), agent.loaded_files(payload, root)
    key = brief_key(os.environ, home, folder, focus, loaded)
    kept = remembered_brief(folder, key)
    if kept is not None:
        text, given = kept
        SessionLog(home / "sessions").record(session, given, asked=False)
        return text
    text, given = _made_brief(agent, payload, session, focus)
    remember_brief(folder, key, text, given)
    return text


def _made_brief(agent: Agent, payload: Payload, session: str, focus: str,
                services: Services | None = None) -> tuple[str, list[str]]:
    """The brief made now by the pipeline (on *services*, else those the settings name), and the ids
    it gave the session."""
    import contextlib

    from memsift.pipeline import brief
    from memsift.stages.brief import given_ids

    try:
        services = services or _services(agent, payload, with_loaded_files=True)
    except MemoryOff:
        return "", []
    with contextlib.redirect_stdout(sys.stderr):  # stdout is the agent's: nothing else may reach it
        result = brief(services, session=session, focus=focus)
    return result.text, given_ids(result.items)


def _brief_for_next_session(agent: Agent, payload: Payload, services: Services) -> None:
    """After each exchange, in the detached Stop: the brief the project's next session would get, made
    now and remembered when what it follows from changed (a line kept, a fact recall gave this
    session), so that its SessionStart reads it back."""
    from attrs import evolve

    from memsift.hooks import (
        branch, brief_key, default_home, project_folder, project_root, remember_brief, remembered_brief,
        settings_verdict,
    )

    home, root = default_home(os.environ), project_root(_required(payload, "cwd"))
    folder, focus, loaded = project_folder(home, root), branch(root), agent.loaded_files(payload, root)
    key = brief_key(os.environ, home, folder, focus, loaded)
    if remembered_brief(folder, key) is None:
        text, given = _made_brief(agent, payload, "", focus, evolve(services, loaded_files=loaded))
        remember_brief(folder, key, text, given)
    settings_verdict(os.environ, root)  # what the settings come to, remembered too: SessionStart loads none


def start_notice(agent: Agent, payload: Payload) -> str | None:
    """What a session is told as it starts, once: memory paused or off, exchanges that cannot be
    kept, names in the settings that are no setting (each once per session). Neither attrs nor the
    pipeline is imported while the settings are as a hook last found them (``memsift._hooks.checked``)."""
    from memsift.hooks import default_home, first_call, project_root, start_news

    session = _optional(payload, "session_id")
    notice, unknown = start_news(project_root(_required(payload, "cwd")), session)
    home = default_home(os.environ)
    # A typo the settings cannot see: ignored, but said once per session (again if it changes).
    mistakes = [line for line in unknown if not session or first_call(home, ["told", session, line])]
    return _joined(notice, *mistakes)


def session_end(agent: Agent, payload: Payload) -> None:
    """SessionEnd: send what the outbox holds to the store, in a detached process."""
    _required(payload, "cwd")
    if not _in_background():
        return
    from memsift.hooks import replay
    from memsift.stages.retain import flush

    services = _detached(_services(agent, payload, detached=True))
    replay(services)  # what waited for the home, before the outbox it goes through drains
    flush(services, _optional(payload, "session_id"))


FORGOTTEN = ("clear", "compact")  # SessionStart sources after which the session's context no longer holds its past

EVENTS: dict[str, Callable[[Agent, Payload], None]] = {
    "UserPromptSubmit": prompt, "Stop": stop, "SessionStart": session_start, "SessionEnd": session_end}
AGENTS = ("claude-code", "codex")
# What tells one hook call from another; the transcript's size and time only when the agent sends no turn id.
_CALL_KEYS = ("session_id", "cwd", "prompt_id", "turn_id", "source", "reason", "prompt", "last_assistant_message")


def _first_call(agent: Agent, event: str, payload: Payload) -> bool:
    """False when another route (plugin and install both) already runs this very call: do nothing."""
    from memsift.hooks import default_home, first_call

    # A session starts once: before its transcript is written, its start is told apart by its source.
    starting = event == "SessionStart" and _optional(payload, "source") == "startup"
    turn = (_optional(payload, "prompt_id") or _optional(payload, "turn_id")
            or _transcript_stamp(payload.get("transcript_path")) or ("startup" if starting else ""))
    if not (_optional(payload, "session_id") and turn):
        return True  # nothing tells a second route's call from the user asking the same again: run
    parts = [agent.name, event, *(_optional(payload, key) for key in _CALL_KEYS), turn]
    return first_call(default_home(os.environ), parts)


def _transcript_stamp(path: object) -> str:
    """The transcript's size and change time: the same for two hooks of one call, new for the next call."""
    try:
        found = os.stat(path) if isinstance(path, str) and path else None
    except OSError:
        return ""
    return f"{found.st_size}:{found.st_mtime_ns}" if found else ""


def _misconfigured(args: Sequence[str]) -> int:
    """A hook command that names no agent or event memsift knows: said where the user looks, once a session.

    The agents take the same top-level ``systemMessage`` for every event, shown to the user.
    """
    from memsift.hooks import default_home, first_call

    usage = f"memsift hook {'|'.join(AGENTS)} {'|'.join(EVENTS)}"
    wrong = ("no agent and event" if len(args) != 2 else f"an unknown agent {args[0]!r}"
             if _agent(args[0]) is None else f"an unknown event {args[1]!r}")
    line = f"the hook command `memsift hook {' '.join(args)}` names {wrong}: memory is off (write {usage})"
    try:
        payload = _payload(sys.stdin.buffer.read())
    except (BadInput, OSError):
        payload = {}
    from memsift.hooks import home_not_yours

    session, home = _optional(payload, "session_id"), default_home(os.environ)
    if not session or home_not_yours(home) or first_call(home, ["misconfigured", session, *args]):
        sys.stdout.write(json.dumps({"systemMessage": f"memsift: {line}"}) + "\n")
    return _complain(line)


def _agent(name: str) -> Agent | None:
    if name == "claude-code":
        from .claude_code import AGENT
    elif name == "codex":
        from .codex import AGENT
    else:
        return None
    return AGENT


def _services(agent: Agent, payload: Payload, *, with_loaded_files: bool = False,
              detached: bool = False) -> Services:
    """The services for the project around the payload's cwd; ``MemoryOff`` when the settings do not load.

    The model is reached through the warm server (``memsift serve``): a hook never loads it. On the
    agent's path it never waits for one starting either; ``detached`` work waits a little for it, and
    why memory is off is then news for the next prompt (no session hears it here).
    """
    from attrs import evolve

    from memsift.hooks import open_guarded, project_root

    root = project_root(_required(payload, "cwd"))
    opened = open_guarded(root, "" if detached else _optional(payload, "session_id"),
                          served_wait=DETACHED_WAIT if detached else 0.0)
    services = opened.services
    if services is None:
        raise MemoryOff(opened.why, opened.notice)
    if with_loaded_files:  # paths only: the files are read if recall is about to add something
        services = evolve(services, loaded_files=agent.loaded_files(payload, root))
    return services


def _detached(services: Services) -> Services:
    """The services for work nobody listens to: what it sees is told at the session's next prompt."""
    from attrs import evolve

    return evolve(services, health=services.health.unheard()) if services.health is not None else services


def _quiet_news(payload: Payload) -> str | None:
    """What a quiet message is told, without the services: a home that cannot keep exchanges, or
    what the detached Stop found (memory off, a file set aside), once per session."""
    from memsift.hooks import default_home, keeping_news, project_folder, project_root

    if "\0" in payload["cwd"]:
        return None  # no folder: nothing to tell about it
    home, session = default_home(os.environ), _optional(payload, "session_id")
    notice = keeping_news(home, [project_folder(home, project_root(payload["cwd"]))], session)
    if notice is None and os.path.exists(home / "health.json"):
        from memsift.hooks import Health

        notice = Health(home).news(session)
    return notice


def _decided(agent: Agent, event: str, payload: Payload, result: Recall | Retained | None) -> None:
    """One line in the decision log, which ``memsift doctor`` shows (None: found quiet here); never fails."""
    from memsift.hooks import DecisionLog, default_home, project_root

    DecisionLog(default_home(os.environ)).record(agent.name, event, str(project_root(_required(payload, "cwd"))),
                                                 result, session=_optional(payload, "session_id"))


# What a hook prints stays whole in both agents, whatever the settings (max_items, a long note):
# Claude Code saves output over 10,000 characters to a file and shows a 2 KB preview, Codex does
# past 2,500 tokens (about 10,000 bytes). Measured on the JSON line, escapes included.
OUTPUT_CHARS = 8_000
OUTPUT_ITEMS = 5


def _say(event: str, context: str, notice: str | None, *, relay: bool = False) -> None:
    """The agent's output: the context for the model, and a notice for the user too; or nothing.

    Exactly these keys: Codex rejects the whole output over one it does not know.
    """
    if context or notice:
        sys.stdout.write(output_line(event, context, notice, relay=relay) + "\n")


def output_line(event: str, context: str, notice: str | None, *, relay: bool = False) -> str:
    """The JSON line for the agent, at most ``OUTPUT_ITEMS`` items of recall (a brief's, as many as its
    budget holds) and ``OUTPUT_CHARS`` characters.

    >>> len(output_line("UserPromptSubmit", "Project memory ...\\n- " + "x" * 20_000, None)) <= OUTPUT_CHARS
    True
    """
    most = OUTPUT_ITEMS if event == "UserPromptSubmit" else None
    return json.dumps(hook_output(event, context, notice, relay=relay, most=most))


# The notice's line in the model's context when the user does not see hook messages (claude -p,
# codex exec): a request, not an order, so that no injection screen takes it for one.
RELAY = "memsift notice for the user, who does not see hook messages here (please pass it on in one line): "


def hook_output(event: str, context: str, notice: str | None, *, relay: bool = False,
                most: int | None = OUTPUT_ITEMS) -> dict[str, Any]:
    """What a hook answers the agent for ``event`` (``output_line``'s object, for a harness that takes
    it as is): the ``context`` for the model, at most ``most`` of its items (None: as many as
    ``OUTPUT_CHARS`` holds: a brief is bounded by its own budget), a ``notice`` for the user too
    (``relay``: with a request to the model to pass it on, for a mode that shows the user no hook
    message); ``{}`` when there is neither."""
    if not (context or notice):
        return {}
    budget = OUTPUT_CHARS - 120  # the keys, the event's name and the quotes
    output: dict[str, Any] = {}
    if notice:
        output["systemMessage"] = _fitted(f"memsift: {notice}", budget // 4)
        budget -= _size(output["systemMessage"])
    lines = [*([f"{RELAY if relay else ''}{notice}"] if notice else []), *(context.split("\n") if context else [])]
    kept: list[str] = []
    for line in lines:
        items = sum(kept_line.startswith("- ") for kept_line in kept)
        if line.startswith("- ") and items == most:
            break
        if _size(line) + 2 > budget:  # the items are best first: a later one is left out, a first one shortened
            if not (line.startswith("- ") and items):
                kept.append(_fitted(line, budget - 2))
            break
        kept.append(line)
        budget -= _size(line) + 2  # and the line break, escaped
    output["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": "\n".join(kept)}
    return output


def _size(text: str) -> int:
    return len(json.dumps(text)) - 2  # as the agent receives it: escapes included


def _fitted(text: str, chars: int) -> str:
    """*text*, shortened with an ellipsis so that it takes at most *chars* characters in JSON."""
    while _size(text) > chars:  # each pass shortens: chars < the size
        if len(text) <= 1:
            return ""
        text = text[: max(0, len(text) * chars // _size(text) - 1)].rstrip() + "…"
    return text


def recall_message(agent: Agent, payload: Payload) -> Message:
    """A UserPromptSubmit payload's prompt, with the turns before it from the agent's transcript."""
    from memsift.types import Message, Turn

    return Message(_required(payload, "prompt"), tuple(Turn(role, said) for role, said in prompt_turns(agent, payload)),
                   _optional(payload, "session_id"))


def prompt_turns(agent: Agent, payload: Payload) -> list[tuple[Literal["user", "assistant"], str]]:
    """(role, text) of the turns before a UserPromptSubmit payload's prompt, from the agent's transcript."""
    from memsift.hooks import RECENT_TURNS

    from .transcript import recent_turns

    text = _required(payload, "prompt")
    turns = recent_turns(payload.get("transcript_path"), agent.read_turn, RECENT_TURNS + 1)
    if turns and turns[-1] == ("user", text):
        turns.pop()  # the agent already wrote this very prompt down
    return turns[-RECENT_TURNS:]


def finished_exchange(agent: Agent, payload: Payload, prompt: str | None = None) -> Exchange | None:
    """A Stop payload's exchange: the user prompt (``prompt``, when the caller saw it, else from the
    transcript, which the agent wrote when the turn began) and the answer from
    ``last_assistant_message`` (or the transcript). None when the agent goes on because a Stop hook
    asked it to: the exchange is not over."""
    from memsift.types import Exchange

    from .transcript import recent_turns

    _required(payload, "cwd")
    if payload.get("stop_hook_active") is True:
        return None
    turns = recent_turns(payload.get("transcript_path"), agent.read_turn, 2)
    users = [i for i, (role, _) in enumerate(turns) if role == "user"]
    if not users and not prompt:
        raise BadInput("no user prompt in the transcript, nothing retained")
    answers = [said for role, said in turns[users[-1] + 1:] if role == "assistant"] if users else []
    answer = _optional(payload, "last_assistant_message") or (answers[-1] if answers else "")
    if not answer.strip():
        raise BadInput("no answer in the payload or the transcript, nothing retained")
    return Exchange(prompt or turns[users[-1]][1], answer, _optional(payload, "session_id"))


# -- the payload -------------------------------------------------------------------

def _payload(raw: bytes) -> Payload:
    try:
        payload = json.loads(raw)
    except ValueError as exc:  # UnicodeDecodeError included: binary junk
        raise BadInput(f"stdin is not a JSON hook payload ({exc})") from None
    if not isinstance(payload, dict):
        raise BadInput(f"stdin is JSON but not an object ({type(payload).__name__})")
    return payload


def _required(payload: Payload, key: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str):
        raise BadInput(f"the payload has no {key!r} string")
    return value


def _optional(payload: Payload, key: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) else ""


# -- detaching ---------------------------------------------------------------------

def _in_background() -> bool:
    """Fork a child that outlives the hook and holds none of the agent's pipes.

    True in the child, False in the hook itself, which returns at once: the
    agent waits for neither, and an agent tearing down does not kill the work
    half way. The child's errors go to ``<memsift home>/hooks.log``.
    """
    import contextlib

    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork():
        return False
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    from memsift.config import default_home

    with contextlib.suppress(OSError):  # no log: the work is still done, its errors go nowhere
        _stderr_to(default_home(os.environ) / LOG)
    return True


def _stderr_to(path: Path) -> None:
    from memsift.hooks import private_folder

    private_folder(path.parent)
    os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), 2)


def _complain(message: str) -> int:
    sys.stderr.write("memsift: " + " ".join(message.split())[:500] + "\n")
    return 0
