"""The services as a hook or the command line opens them: settings read, trust checked, and
memory never off in silence.

When the settings cannot be read (a typo in ``config.toml``, a bad
``MEMSIFT_*`` value) or the services cannot be opened, nothing is recalled
or retained, and the agent is told why in one line, once per session and
again when it changes, through the same health file as a paused service:

>>> open_guarded("/src/shop", session="s1").notice
"memory off: memsift's settings: .../config.toml: unknown settings ['stroe']; reminders are off"

Once the settings read again, the next path closes the entry, and a session
that heard "memory off" hears "memory back on" once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NamedTuple

from .errors import MemsiftError
from ._health import Health
from ._trust import home_not_yours, untrusted_files
from .services import Services

SETTINGS = "memsift's settings"  # the health file's name for a configuration that does not load


class Opened(NamedTuple):
    """The services; or None, why not, and the line for the agent (None when it already heard it)."""

    services: Services | None
    why: str = ""
    notice: str | None = None


def open_guarded(project_root: str | os.PathLike[str], session: str,
                 environ: Mapping[str, str] | None = None, *, served_wait: float | None = None) -> Opened:
    """The services the settings name, or why memory is off (recorded, and said once per session).
    ``served_wait``: the model through the warm server, as hooks reach it (``embedder_for``).

    >>> open_guarded("/src/shop", "s1").services.config.store
    'embedded'
    """
    from .config import default_home, load_config
    from .services import open_services

    if "\0" in os.fspath(project_root):  # no folder is named so: this path's memory is off, nobody else's
        why = "the project's path holds a NUL byte, which no folder's path can"
        return Opened(None, why, f"memory off for this folder: {why}")
    environ = os.environ if environ is None else environ
    home = default_home(environ)
    foreign = home_not_yours(home)
    if foreign is not None:  # nothing in it is read or written, not even the health file: said every time
        why = f"{foreign.reason} (memsift doctor says how to fix it)"
        return Opened(None, why, f"memory off: {why}; reminders are off")
    health = Health(home)
    try:
        config = load_config(environ)
        distrust = untrusted_files(home, config.project_dir(project_root))
        services = None if distrust else open_services(config, project_root, served_wait=served_wait)
    except Exception as exc:  # a settings error above all; whatever it is, memory is off: say so
        why = str(exc) if isinstance(exc, MemsiftError) else f"{type(exc).__name__}: {exc}"
        health.broken(SETTINGS, why)
        return Opened(None, why, health.notice(SETTINGS, session))
    if SETTINGS in health.broken_names():
        health.succeeded(SETTINGS)
    if services is None:  # this project only: no entry in the health file, which every session reads
        why = f"the project {os.fspath(project_root)}: {distrust[0].reason} (memsift doctor says how to fix it)"
        return Opened(None, why, f"memory off: {why}; reminders are off")
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
    from .config import default_home, load_config
    from .services import open_services

    environ = os.environ if environ is None else environ
    foreign = home_not_yours(default_home(environ))
    if foreign is None:
        config = load_config(environ)
        distrust = untrusted_files(config.home, config.project_dir(project_root))
        if not distrust:
            return open_services(config, project_root)
        foreign = distrust[0]
    raise NotYours(f"memory off: {foreign.reason} (memsift doctor says how to fix it)")
