"""The services as a hook or the command line opens them: settings read, trust checked, and
memory never off in silence.

When the settings cannot be read (``config.toml`` that is no TOML, a bad
value there or in a ``MEMSIFT_*`` variable) or the services cannot be
opened, nothing is recalled or retained, and the agent is told why in one
line, once per session and again when it changes, through the same health
file as a paused service:

>>> open_guarded("/src/shop", session="s1").notice
"memory off: memsift's settings: .../config.toml: store must be 'embedded' or 'cognee', not 'mongo'; reminders are off"

Once the settings read again, the next path closes the entry, and a session
that heard "memory off" hears "memory back on" once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .._runtime.health import Health
from ..errors import MemsiftError
from .._fs.trust import Distrust, home_not_yours, untrusted_files

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: SessionStart reads this module
if TYPE_CHECKING:
    from ..services import Services

SETTINGS = "memsift's settings"  # the health file's name for a configuration that does not load


class Opened:
    """The services; or None, why not, and the line for the agent (None when it already heard it).
    A plain class: SessionStart imports this module, and a NamedTuple would import typing."""

    __slots__ = ("notice", "services", "why")

    def __init__(self, services: Services | None, why: str = "", notice: str | None = None) -> None:
        self.services, self.why, self.notice = services, why, notice


def open_guarded(project_root: str | os.PathLike[str], session: str,
                 environ: Mapping[str, str] | None = None, *, served_wait: float | None = None) -> Opened:
    """The services the settings name, or why memory is off (recorded, and said once per session).
    ``served_wait``: the model through the warm server, as hooks reach it (``embedder_for``).

    >>> open_guarded("/src/shop", "s1").services.config.store
    'embedded'
    """
    from .._fs.home import default_home
    from ..config import load_config
    from ..services import open_services

    environ = os.environ if environ is None else environ
    home = default_home(environ)
    unusable = _unusable(home, project_root, session)
    if unusable is not None:
        return unusable
    health = Health(home)
    try:
        config = load_config(environ)
        distrust = untrusted_files(home, config.project_dir(project_root))
        services = None if distrust else open_services(config, project_root, served_wait=served_wait)
    except Exception as exc:  # a settings error above all; whatever it is, memory is off: say so
        return _settings_off(health, session, str(exc) if isinstance(exc, MemsiftError)
                             else f"{type(exc).__name__}: {exc}")
    settings_loaded(health)
    if services is None:  # this project only: no entry in the health file, which every session reads
        return _distrusted(home, project_root, session, distrust)
    return Opened(services)


class NotYours(MemsiftError):
    """memsift's home, or a project's memory files, are not the user's own: nothing is read from them."""


def open_trusted(project_root: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> Services:
    """The services for the command line (``memsift search``, ``show``, ``notes``, ``recall``, ``retain``):
    ``open_services``, once the home and the project's memory files are known to be the user's own.
    Raises ``NotYours`` (why, and that ``memsift doctor`` says how to fix it) otherwise, and the settings'
    own errors as they are.

    >>> open_trusted("/src/shop")
    NotYours: memory off: /home/u/.local/share/memsift/projects/shop-1a2b3c4d/notes.md can be written by others
    (mode 0o666) (memsift doctor says how to fix it)
    """
    from ..config import default_home, load_config
    from ..services import open_services

    environ = os.environ if environ is None else environ
    foreign = home_not_yours(default_home(environ))
    if foreign is None:
        config = load_config(environ)
        distrust = untrusted_files(config.home, config.project_dir(project_root))
        if not distrust:
            return open_services(config, project_root)
        foreign = distrust[0]
    raise NotYours(f"memory off: {foreign.reason} (memsift doctor says how to fix it)")


def start_news(project_root: str | os.PathLike[str], session: str,
               environ: Mapping[str, str] | None = None) -> tuple[str | None, list[str]]:
    """What a starting session is told about memory, as its first prompt's path would find it
    (memory off and why, a paused service it uses, exchanges that cannot be kept), and the lines
    naming what in the settings is no setting; without loading the settings when they are as
    they were (``_hooks/checked.py``).
    """
    from .checked import checked
    from .._fs.home import default_home, project_folder
    from .._keeping.spool import folders_of, keeping_news

    environ = os.environ if environ is None else environ
    home = default_home(environ)
    unusable = _unusable(home, project_root, session)
    if unusable is not None:
        return unusable.notice, []
    verdict = checked(environ, project_root)
    health = Health(home)
    if verdict.error:
        return _settings_off(health, session, verdict.error).notice, verdict.unknown
    settings_loaded(health)
    folder = project_folder(home, project_root)
    distrust = untrusted_files(home, folder)
    if distrust:
        return _distrusted(home, project_root, session, distrust).notice, verdict.unknown
    news = health.news(session, verdict.in_use) or keeping_news(
        home, folders_of(folder / name for name in verdict.keeps), session, environ)
    return news, verdict.unknown


def _unusable(home: Path, project_root: str | os.PathLike[str], session: str) -> Opened | None:
    """Memory off before any setting is read: a path no folder has, a home that is not the user's."""
    if "\0" in os.fspath(project_root):  # no folder is named so: this path's memory is off, nobody else's
        why = "the project's path holds a NUL byte, which no folder's path can"
        return Opened(None, why, _once(home, session, f"memory off for this folder: {why}"))
    foreign = home_not_yours(home)
    if foreign is not None:  # nothing in it is read or written, not even the health file
        why = f"{foreign.reason} (memsift doctor says how to fix it)"
        return Opened(None, why, _once(home, session, f"memory off: {why}; reminders are off", in_home=False))
    return None


def _settings_off(health: Health, session: str, why: str) -> Opened:
    health.broken(SETTINGS, why)
    return Opened(None, why, health.notice(SETTINGS, session))


def settings_loaded(health: Health) -> None:
    """The settings load now: a hook's "memory off" for them is history ("memory back on", to the
    sessions that heard it)."""
    if SETTINGS in health.broken_names():
        health.succeeded(SETTINGS)


def _distrusted(home: Path, project_root: str | os.PathLike[str], session: str,
                distrust: list[Distrust]) -> Opened:
    why = f"the project {os.fspath(project_root)}: {distrust[0].reason} (memsift doctor says how to fix it)"
    return Opened(None, why, _once(home, session, f"memory off: {why}; reminders are off"))


def _once(home: Path, session: str, notice: str, *, in_home: bool = True) -> str | None:
    """*notice*, unless *session* was told it already: said once per session, and again when it
    changes. Remembered in the home's ``calls/`` (``_hooks/once.py``), or for a home that is not the
    user's, in the spool folder of that home (``_keeping/spool.py``), which is; said every time when
    neither can be written, or no session is named."""
    from .once import first_call
    from .._keeping.spool import private, spool_folder

    folder = home if in_home else private(spool_folder(home), create=True)
    if not session or folder is None:
        return notice
    return notice if first_call(folder, ["told", session, notice]) else None
