"""Files memsift trusts are the user's own: what it reads as memory, no one else could have written.

memsift's home, every folder it uses there (``projects``, ``serve``,
``calls``, ``sessions``, ``installs``) and the files it reads or appends to
at its top, a project's folder, its notes (and the file a notes link points
to), its notes index and its embedded store are used only when the user owns
them and neither their group nor others may write them, links resolved.
Anything else could hold a note someone planted, to be injected into the
agent's context as memory, a link that would have memsift append to a file
that is not memory at all (an ``authorized_keys``), or a socket another
user's server listens on, which a hook would send the user's prompt to. Then
memory is off (for the user, when it is the home; for that project
otherwise), and the line says why; ``memsift doctor`` says how to fix it.

    >>> [d.reason for d in untrusted_files(home, project_folder(home, "/src/shop"))]
    ['/home/u/.local/share/memsift/projects/shop-1a2b3c4d/notes.md can be written by others (mode 0o666)']
    >>> home_not_yours(Path("/tmp/shared-home")).reason
    '/tmp/shared-home/serve is owned by uid 1001, not by you (uid 1000)'

A dozen ``lstat`` calls: the prompt hook pays for the home's.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# The files of a project's folder that hold memory: a planted one would be injected, or written to.
MEMORY_FILES = ("notes.md", "notes.index.sqlite", "store.sqlite")
# What memsift uses in its home: the folders it makes, the files it reads or appends to at the top.
HOME_FOLDERS = ("projects", "serve", "calls", "sessions", "installs")
HOME_FILES = ("config.toml", "health.json", "decisions.jsonl", "decisions.jsonl.1", "hooks.log")


class Distrust:
    """Why a path is not the user's own, and the command that makes it so (a plain class: the
    hooks' quiet path asks, and a NamedTuple would import typing)."""

    __slots__ = ("fix", "reason")

    def __init__(self, reason: str, fix: str) -> None:
        self.reason = reason
        self.fix = fix

    def __repr__(self) -> str:
        return f"Distrust({self.reason!r}, {self.fix!r})"


def not_yours(path: Path) -> Distrust | None:
    """Why *path* is not the user's own (it, or the file a link at it points to); None when it is,
    or is missing."""
    try:
        info = os.lstat(path)
    except OSError:
        return None  # missing (memsift makes it when needed), or unreadable: reading it says so
    if stat.S_ISLNK(info.st_mode):
        target = not_yours(Path(os.path.realpath(path)))
        if target is None:
            return None
        return Distrust(f"{path} is a link to a file not yours: {target.reason}",
                        f"replace the link {path} with a file of yours")
    if info.st_uid != os.getuid():
        return Distrust(f"{path} is owned by uid {info.st_uid}, not by you (uid {os.getuid()})",
                        f"chown {os.getuid()} '{path}' (once you trust what it holds)")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = "others" if info.st_mode & stat.S_IWOTH else "its group"
        return Distrust(f"{path} can be written by {who} (mode {oct(stat.S_IMODE(info.st_mode))})",
                        f"chmod go-w '{path}'")
    return None


def home_not_yours(home: Path) -> Distrust | None:
    """Why memsift's home is not the user's own (it, a folder memsift uses there or a file it reads or
    appends to, links resolved); None when all are, or are missing. Nothing in such a home is read or
    written, and its server is not talked to."""
    for path in _home_paths(home):
        why = not_yours(path)
        if why is not None:
            return why
    return None


def untrusted_files(home: Path, project: Path) -> list[Distrust]:
    """What is not the user's own of the home (its folders and files), the project's folder and its memory files."""
    paths = [*_home_paths(home), project, *(project / name for name in MEMORY_FILES)]
    return [why for path in paths if (why := not_yours(path))]


def _home_paths(home: Path) -> list[Path]:
    return [home, *(home / name for name in HOME_FOLDERS + HOME_FILES)]


def socket_not_yours(path: Path) -> str | None:
    """Why the Unix socket at *path* is not one of the user's own servers' (not a socket, another owner,
    writable by others); None when it is. A missing one raises FileNotFoundError, as connecting would."""
    info = os.lstat(path)
    if not stat.S_ISSOCK(info.st_mode):
        return f"{path} is not a socket"
    if info.st_uid != os.getuid():
        return f"{path} is owned by uid {info.st_uid}, not by you (uid {os.getuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} can be written by others (mode {oct(stat.S_IMODE(info.st_mode))})"
    return None
