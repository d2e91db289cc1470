"""A searching message recalled in the warm server, so that a hook pays neither imports nor loads.

A hook that finds a message worth a search asks the model server (``memsift
serve``, ``semantic/_serve.py``) to recall it: the server has the pipeline
imported, the weights and the model loaded, and answers in milliseconds what
the hook would need a hundred to reach. The request carries what the recall
needs and nothing more: memsift's settings from the environment (its
``MEMSIFT_*`` variables but the keys and passwords, the home the hook found
the socket in, and the folders exchanges wait in), the project, the session,
the message and the turns before it, the files the agent loaded; never the
rest of the environment. It goes only to the user's own server: the socket
and the process behind it are checked first (``semantic/_serve.py``). The
server opens the services as the hook would, with its own model behind the
project's vector cache, runs ``recall`` and records the decision. Its answer
is read up to ``ANSWER_BYTES`` and screened as any memory text is
(``memsift.screen``).

>>> request = request_for(os.environ, home, Path("/src/shop"), "s1", "codex", "why Stripe over Mollie?", [], [])
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
    from ..services import Services
    from ..types import Message

ANSWER_TIMEOUT = 3.0  # seconds a hook waits for the server's recall (a warm one takes tens of milliseconds)
MAX_MESSAGE_CHARS = 1_000_000  # a bigger paste is recalled in process: the wire takes 16 MB, and it is rare
ANSWER_BYTES = 256 * 1024  # what a hook reads of the answer: it prints 8,000 characters at most
# The variables a request carries beside memsift's settings: where exchanges wait when the home is full.
SPOOL_VARIABLES = ("XDG_RUNTIME_DIR", "TMPDIR")
SECRET_SUFFIXES = ("_KEY", "_PASSWORD", "_TOKEN", "_SECRET")  # settings a request never carries


class NotHeard(Exception):
    """The server took the request but did not answer in time: the message gets nothing."""


def listening(home: Path) -> bool:
    """Whether a server's socket is there: one stat, and nothing imported, for the common case of none."""
    from .._fs.home import server_socket

    return os.path.exists(server_socket(home))


def served_recall(home: Path, request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The server's answer ``{"ok": True, "text", "notice"}``; None when no server took the request
    (none answers, one of another version, a refusal): the caller recalls in process. Raises
    ``NotHeard`` when one took it and did not answer within ``ANSWER_TIMEOUT``."""
    from .. import __version__
    from ..semantic import _serve

    try:
        with _serve.connected(_serve.socket_path(home), _serve.CONNECT_TIMEOUT) as conn:
            conn.settimeout(ANSWER_TIMEOUT)
            _serve.send(conn, {**request, "op": "recall", "memsift": __version__})
            try:  # sent whole: the request is the server's now, whatever happens next
                answer = _serve.receive_json(conn, ANSWER_BYTES)
            except (OSError, ValueError) as exc:
                raise NotHeard(f"the model server did not answer the recall: {type(exc).__name__}") from None
    except (OSError, ValueError):
        return None
    return answer if answer.get("ok") else None


def answered(services: Services, message: Message, agent: str, root: str,
             environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """Recall ``message`` and record the decision: (what memory adds, the notice for the user)."""
    from .decisions import DecisionLog
    from .._keeping.spool import services_keeping_news
    from ..pipeline import recall

    result = recall(message, services)
    notice = result.notice or services_keeping_news(services, message.session, environ)
    DecisionLog(services.config.home).record(agent, "UserPromptSubmit", root, result, session=message.session)
    return result.text, notice


def answer_recall(request: Mapping[str, Any], model_name: str) -> dict[str, Any]:
    """The server's side: ``{"ok": True, "text", "notice"}``, or ``{"ok": False, "why"}`` before
    anything is recalled, for the hook to recall in process."""
    from attrs import evolve

    from .guarded import open_guarded
    from ..types import Message, Turn

    try:
        environ = {str(k): str(v) for k, v in request["environ"].items()}
        root, session, agent = str(request["root"]), str(request["session"]), str(request["agent"])
        turns = tuple(Turn(_role(role), str(text)) for role, text in request["turns"])
        message = Message(str(request["message"]), turns, session)
        loaded = tuple(Path(str(p)) for p in request["loaded_files"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a malformed request
        return {"ok": False, "why": f"{type(exc).__name__}: {exc}"}
    refusal = _not_here(environ)
    if refusal:
        return {"ok": False, "why": refusal}
    # No session hears here why memory is off: declined, the hook's own path tells its session, once.
    opened = open_guarded(root, "", environ)
    services = opened.services
    if services is None:
        return {"ok": False, "why": opened.why}
    refusal = _elsewhere(services, model_name)
    # What the services hold open (SQLite files, threads) is closed: the server goes on to the next hook.
    with services:
        if refusal:
            return {"ok": False, "why": refusal}
        text, notice = answered(evolve(services, loaded_files=loaded), message, agent, root, environ)
    return {"ok": True, "text": text, "notice": notice}


def _role(role: object) -> Literal["user", "assistant"]:
    if role == "user" or role == "assistant":
        return role
    raise ValueError(f"a turn's role is 'user' or 'assistant', not {role!r}")


def _not_here(environ: Mapping[str, str]) -> str:
    """Why the settings are not the server's to recall with ('' when they are), before anything is opened:
    settings that do not load, or that send questions or the store elsewhere (the request carries no keys
    for them). The hook then recalls in process, and says what is wrong."""
    from ..config import load_config

    try:
        config = load_config(environ)
    except Exception as exc:  # a settings error above all: the hook's own path records and tells it
        return f"{type(exc).__name__}: {exc}"
    if config.decider != "embedded" or config.decider_by_task or config.store != "embedded":
        return "the settings send questions or the store elsewhere"
    return ""


def _elsewhere(services: Services, model_name: str) -> str:
    """Why this server does not recall for these services ('' when it does): another model is not the
    one it holds."""
    embedder = services.embedder
    if embedder is not None and embedder.name != model_name:
        return f"the settings name the model {embedder.name}, this server holds {model_name}"
    return ""


def request_for(environ: Mapping[str, str], home: Path, root: Path, session: str, agent: str, message: str,
                turns: Sequence[tuple[str, str]], loaded_files: Sequence[Path]) -> dict[str, Any]:
    """What a hook sends: what ``answer_recall`` needs to recall as the hook would, and nothing more
    (``settings_of`` the environment, never the environment).

    >>> request_for({"AWS_SECRET_ACCESS_KEY": "...", "MEMSIFT_JUDGE": "semantic"}, home, root, ...)["environ"]
    {'MEMSIFT_JUDGE': 'semantic', 'MEMSIFT_HOME': '/home/u/.local/share/memsift'}
    """
    return {"environ": settings_of(environ, home), "root": str(root), "session": session, "agent": agent,
            "message": message, "turns": [list(turn) for turn in turns], "loaded_files": [str(p) for p in loaded_files]}


def settings_of(environ: Mapping[str, str], home: Path) -> dict[str, str]:
    """The variables a recall reads: memsift's settings but its keys and passwords, the home, and where
    exchanges wait."""
    kept = {name: value for name, value in environ.items()
            if (name.startswith("MEMSIFT_") and not name.endswith(SECRET_SUFFIXES)) or name in SPOOL_VARIABLES}
    return {**kept, "MEMSIFT_HOME": str(home)}
