"""A searching message recalled in the warm server, so that a hook pays neither imports nor loads.

A hook that finds a message worth a search asks the model server (``memsift
serve``, ``semantic/_serve.py``) to recall it: the server has the pipeline
imported, the weights and the model loaded, and answers in milliseconds what
the hook would need a hundred to reach. The request carries everything the
hook knows (its environment, which the settings are read from, the project,
the session, the message and the turns before it, the files the agent
loaded); the server opens the services as the hook would, with its own model
behind the project's vector cache, runs ``recall`` and records the decision.

>>> request = request_for(os.environ, Path("/src/shop"), "s1", "codex", "why Stripe over Mollie?", [], [])
>>> served_recall(home, request)
{'ok': True, 'text': 'Project memory from earlier sessions...', 'notice': None}

Refused before anything is done (a server of another version, settings that
do not open the services or that send a question or the store elsewhere, a
model other than the one it holds), the hook recalls in process, as without a
server. Once sent, a request is the server's: a hook that does not hear back
in time adds nothing (fail open), it never recalls the message a second time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .services import Services
    from .types import Message

ANSWER_TIMEOUT = 3.0  # seconds a hook waits for the server's recall (a warm one takes tens of milliseconds)
MAX_MESSAGE_CHARS = 1_000_000  # a bigger paste is recalled in process: the wire takes 16 MB, and it is rare


class NotHeard(Exception):
    """The server took the request but did not answer in time: the message gets nothing."""


def listening(home: Path) -> bool:
    """Whether a server's socket is there: one stat, and nothing imported, for the common case of none."""
    from ._home import server_socket

    return os.path.exists(server_socket(home))


def served_recall(home: Path, request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The server's answer ``{"ok": True, "text", "notice"}``; None when no server took the request
    (none answers, one of another version, a refusal): the caller recalls in process. Raises
    ``NotHeard`` when one took it and did not answer within ``ANSWER_TIMEOUT``."""
    from . import __version__
    from .semantic import _serve

    try:
        with _serve.connected(_serve.socket_path(home), _serve.CONNECT_TIMEOUT) as conn:
            conn.settimeout(ANSWER_TIMEOUT)
            _serve.send(conn, {**request, "op": "recall", "memsift": __version__})
            try:  # sent whole: the request is the server's now, whatever happens next
                answer = _serve.receive_json(conn)
            except (OSError, ValueError) as exc:
                raise NotHeard(f"the model server did not answer the recall: {type(exc).__name__}") from None
    except (OSError, ValueError):
        return None
    return answer if answer.get("ok") else None


def answered(services: Services, message: Message, agent: str, root: str,
             environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """Recall ``message`` and record the decision: (what memory adds, the notice for the user)."""
    from ._decisions import DecisionLog
    from ._spool import services_keeping_news
    from .pipeline import recall

    result = recall(message, services)
    notice = result.notice or services_keeping_news(services, message.session, environ)
    DecisionLog(services.config.home).record(agent, "UserPromptSubmit", root, result, session=message.session)
    return result.text, notice


def answer_recall(request: Mapping[str, Any], model_name: str) -> dict[str, Any]:
    """The server's side: ``{"ok": True, "text", "notice"}``, or ``{"ok": False, "why"}`` before
    anything is recalled, for the hook to recall in process."""
    from attrs import evolve

    from ._guarded import open_guarded
    from .types import Message, Turn

    try:
        environ = {str(k): str(v) for k, v in request["environ"].items()}
        root, session, agent = str(request["root"]), str(request["session"]), str(request["agent"])
        turns = tuple(Turn(_role(role), str(text)) for role, text in request["turns"])
        message = Message(str(request["message"]), turns, session)
        loaded = tuple(Path(str(p)) for p in request["loaded_files"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a malformed request
        return {"ok": False, "why": f"{type(exc).__name__}: {exc}"}
    # No session hears here why memory is off: declined, the hook's own path tells its session, once.
    opened = open_guarded(root, "", environ)
    services = opened.services
    if services is None:
        return {"ok": False, "why": opened.why}
    refusal = _elsewhere(services, model_name)
    if refusal:
        _close(services)
        return {"ok": False, "why": refusal}
    try:
        text, notice = answered(evolve(services, loaded_files=loaded), message, agent, root, environ)
    finally:
        _close(services)
    return {"ok": True, "text": text, "notice": notice}


def _close(services: Services) -> None:
    """Close what the services hold open (the store's, the outbox's and the vector cache's SQLite
    connections): a hook's process ends with its message, the server's goes on to the next."""
    cache = getattr(services.embedder, "cache", None)
    for part in (services.store, services.outbox, cache):
        close = getattr(part, "close", None)
        if close is not None:
            close()


def _role(role: object) -> Literal["user", "assistant"]:
    if role == "user" or role == "assistant":
        return role
    raise ValueError(f"a turn's role is 'user' or 'assistant', not {role!r}")


def _elsewhere(services: Services, model_name: str) -> str:
    """Why this server does not recall for these services ('' when it does): a remote decider or
    store would hold it up for every other hook; another model is not the one it holds."""
    config, embedder = services.config, services.embedder
    if config.decider != "embedded" or config.decider_by_task or config.store != "embedded":
        return "the settings send questions or the store elsewhere"
    if embedder is not None and embedder.name != model_name:
        return f"the settings name the model {embedder.name}, this server holds {model_name}"
    return ""


def request_for(environ: Mapping[str, str], root: Path, session: str, agent: str, message: str,
                turns: Sequence[tuple[str, str]], loaded_files: Sequence[Path]) -> dict[str, Any]:
    """What a hook sends: everything ``answer_recall`` needs to recall as the hook would."""
    return {"environ": dict(environ), "root": str(root), "session": session, "agent": agent, "message": message,
            "turns": [list(turn) for turn in turns], "loaded_files": [str(p) for p in loaded_files]}
