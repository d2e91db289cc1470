"""What an agent's hooks are built on, beyond the two paths: memsift's own (``memsift_adapters``) and
one you write for another agent.

A hook is a process per event, on the agent's hot path: it decides most
messages before any pipeline is imported, finds the project, opens the
services the settings name without ever failing the agent, recalls through
the warm model server when one listens, keeps an exchange in a detached
process (or spools it when the home cannot be written), tells each session
its news once, and records what it decided for ``memsift doctor``.

    >>> from memsift.hooks import open_guarded, project_root, surely_quiet
    >>> surely_quiet("thanks, perfect")
    True
    >>> opened = open_guarded(project_root("/src/shop/api"), session="s1")
    >>> opened.services, opened.why, opened.notice   # the services; or None, why not, and the line for the agent

The names, one line each. What their arguments mean: ``home`` is memsift's
home (``default_home``), ``environ`` the environment the settings are read
from (``os.environ`` when None), ``root`` / ``project_root`` the project's
root (``project_root``), ``session`` the agent's session id, ``services``
what ``open_guarded`` opened.

- ``surely_quiet(text, environ=None)``: the message ``text`` needs no memory, decided with no
  pipeline imported.
- ``project_root(folder)``: the git work tree around ``folder`` (else the folder): one memory a project;
  ``branch(root)``: the branch checked out there ('' when none), what a session brief prefers.
- ``default_home(environ)``, ``project_folder(home, root)``: memsift's home, and the project's
  folder in it, without reading the settings.
- ``RECENT_TURNS``: how many turns before a message a hook reads from the transcript.
- ``open_guarded(project_root, session, environ=None, *, served_wait=None)``: the services, or why
  memory is off and the line for the session (``Opened``); never raises.
- ``Health(home, *, cooldown=30.0, clock=time.time, listening=True)``: the breakers and notices
  every hook shares (``news(session)``: what a session has not heard yet); ``cooldown`` seconds
  before a service down is tried again, ``clock`` what time is read from, ``listening`` False for
  a process nobody hears (its news waits for the next prompt). ``failed(service, reason, *,
  kind="down", session="")``, ``broken(what, reason, *, session="")``: something went wrong, and
  why; ``damaged(path, aside)``: a file was set aside.
- ``keeping_news(home, folders, session, environ=None)``, ``services_keeping_news(services,
  session, environ=None)``: the line for a session when exchanges cannot be kept in these
  ``folders`` (a full or read-only home).
- ``retain_or_wait(exchange, services, root, environ=None)``: ``retain``, or the exchange spooled
  until the home can keep it; ``replay(services, environ=None, limit=20)``: keep at most ``limit``
  exchanges that wait in the spool.
- ``listening(home)``, ``request_for(environ, root, session, agent, message, turns,
  loaded_files)``, ``served_recall(home, request)``, ``NotHeard``, ``MAX_MESSAGE_CHARS``: recall
  ``message`` (with the ``turns`` before it, and the ``loaded_files`` the ``agent`` loads) in the
  warm model server; ``answered(services, message, agent, root, environ=None)``: recall in process
  and record it.
- ``first_call(home, parts)``: False when another route already runs this very hook call;
  ``forget_old(home, now=None)``: forget the calls older than two days before ``now``;
  ``hold(home, session, notice)``, ``take_held(home, session)``: a line SessionStart could not
  show (a mode that shows the user no hook message), held for the session's next prompt.
- ``brief_key(environ, home, folder, focus, loaded)``, ``remembered_brief(folder, key)``,
  ``remember_brief(folder, key, text, given)``: the session brief of the project whose memory is in
  ``folder`` for the branch ``focus`` and the ``loaded`` files, kept under a key of all it follows
  from, so that a session starts with it without the pipeline loaded; ``SessionLog(folder)``: what
  each session was given (``record(session, ids, *, asked=True)``, ``forget(session)``).
- ``settings_verdict(environ, project_root)``: what the settings come to (``.error``: why they do not
  load, '' when they do), remembered while they do not change; ``untrusted_files(home, folder)``: what
  of the home and the project's memory files is not the user's own.
- ``start_news(project_root, session, environ=None)``: what a starting session is told (memory off
  and why, a paused service, exchanges that cannot be kept) and the names in the settings that are
  no setting, without loading the settings when they are as a hook last found them.
- ``DecisionLog(home, *, max_bytes=...)``: what the hooks decided, one line per path, in a log
  rotated past ``max_bytes`` (``record(agent, event, project, result, *, session)``, ``last(count)``).
- ``private_folder(folder)``, ``open_regular(path)``: a folder its owner alone reads; a file opened
  only if it is a regular file (a FIFO must not hang a hook).
- ``home_not_yours(home)``: why memsift's ``home`` (or a folder or file it uses there, links
  resolved) is not the user's own, or None: then nothing in it is read, written or talked to.

Names are imported on first use: ``from memsift.hooks import surely_quiet``
imports that one's module, and nothing else.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: every hook imports this module
if TYPE_CHECKING:
    from ._runtime.bounds import RECENT_TURNS
    from ._hooks.decisions import DecisionLog
    from ._fs.files import open_regular, private_folder
    from ._hooks.guarded import Opened, open_guarded
    from ._runtime.health import Health
    from ._fs.home import default_home, project_folder
    from ._hooks.guarded import start_news
    from ._hooks.once import first_call, forget_old, hold, take_held
    from ._fs.project import branch, project_root
    from ._hooks.quiet import surely_quiet
    from ._hooks.served import MAX_MESSAGE_CHARS, NotHeard, answered, listening, request_for, served_recall
    from ._hooks.brief_cache import brief_key
    from ._hooks.brief_cache import remember as remember_brief
    from ._hooks.brief_cache import remembered as remembered_brief
    from ._hooks.checked import checked as settings_verdict
    from ._notes.sessions import SessionLog
    from ._keeping.spool import keeping_news, replay, retain_or_wait, services_keeping_news
    from ._fs.trust import home_not_yours, untrusted_files

__all__ = [
    "MAX_MESSAGE_CHARS", "RECENT_TURNS", "DecisionLog", "Health", "NotHeard", "Opened", "SessionLog", "answered",
    "branch", "brief_key", "default_home", "first_call", "forget_old", "hold", "home_not_yours", "keeping_news",
    "listening", "open_guarded", "open_regular", "private_folder", "project_folder", "project_root",
    "remember_brief", "remembered_brief", "replay", "request_for", "retain_or_wait", "served_recall",
    "services_keeping_news", "settings_verdict", "start_news", "surely_quiet", "take_held", "untrusted_files",
]

_MODULE_OF: dict[str, str | tuple[str, str]] = {
    "RECENT_TURNS": "_runtime.bounds", "DecisionLog": "_hooks.decisions", "open_regular": "_fs.files",
    "private_folder": "_fs.files", "Opened": "_hooks.guarded", "open_guarded": "_hooks.guarded",
    "Health": "_runtime.health", "default_home": "_fs.home", "project_folder": "_fs.home", "first_call": "_hooks.once",
    "forget_old": "_hooks.once", "hold": "_hooks.once", "take_held": "_hooks.once", "start_news": "_hooks.guarded",
    "project_root": "_fs.project", "branch": "_fs.project", "surely_quiet": "_hooks.quiet",
    "MAX_MESSAGE_CHARS": "_hooks.served", "NotHeard": "_hooks.served", "answered": "_hooks.served",
    "listening": "_hooks.served", "request_for": "_hooks.served", "served_recall": "_hooks.served",
    "keeping_news": "_keeping.spool", "replay": "_keeping.spool", "retain_or_wait": "_keeping.spool",
    "services_keeping_news": "_keeping.spool", "home_not_yours": "_fs.trust", "untrusted_files": "_fs.trust",
    "SessionLog": "_notes.sessions", "brief_key": "_hooks.brief_cache",
    "remember_brief": ("_hooks.brief_cache", "remember"), "remembered_brief": ("_hooks.brief_cache", "remembered"),
    "settings_verdict": ("_hooks.checked", "checked"),
}


def __getattr__(name: str) -> object:
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'memsift.hooks' has no attribute {name!r}")
    where = _MODULE_OF[name]
    module, attribute = where if isinstance(where, tuple) else (where, name)  # a name of its own here
    # The import statement's own machinery, not importlib's: ``python -X importtime`` then shows what
    # a hook imported, as the hook tests and benchmarks read it.
    return getattr(__import__(f"memsift.{module}", fromlist=[attribute]), attribute)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
