"""When memsift's home cannot keep an exchange: it waits in a spool elsewhere, and is kept once it can.

A home can stop taking writes: its disk full, its file system mounted
read-only, a folder whose permissions shut memsift out. The Stop hook's
detached retain then writes the exchange, redacted, to a spool in a private
folder outside the home, and whatever retain or SessionEnd next finds the
home writable keeps what waits there first, oldest first.

The spool is ``memsift-<uid>-<hash of the home>`` in ``$XDG_RUNTIME_DIR``,
else in ``$TMPDIR`` or ``/tmp``: owner only, and used only when it is a
folder of the user's own that nobody else can write. Not beside the project:
the project is usually on the same disk as the home (a full disk fills
both), may have no ``.git`` to hide a folder in, and is the user's own work
tree. Not the agent's transcript alone: a session that ends while the home is
broken never has another hook to retry from it. The runtime folder is a RAM
file system on most Linux systems, writable when the disk is full or
read-only; what waits there is lost only if the machine restarts before the
home can be written again.

The agent is told in one line without anything written first: each prompt
checks the folders retain writes (``statvfs`` and ``access``, no write),
and the spool's own health file says what a detached retain found. Once per
session, and once more when nothing waits any more:

    >>> kept = retain_or_wait(exchange, services, "/src/shop")   # None: it waits in the spool
    >>> keeping_news(home, [project_folder(home, "/src/shop")], "s1")
    "memory not kept: memsift's home: /home/u/.local/share/memsift/projects/shop-1a2b3c4d cannot be
    written (no space left on device); exchanges wait until it can (memsift doctor)"
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    from ..services import Services
    from ..types import Exchange, Retained

HOME = "memsift's home"  # the health entry's name, in the spool's own health file
REPLAYED = 20  # exchanges one detached process keeps from the spool; the next one keeps the rest
_WHY = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "no space left on device",
        errno.EROFS: "read-only file system", errno.EACCES: "permission denied", errno.EPERM: "permission denied"}


def spool_folder(home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """Where exchanges wait for *home*: one folder per user and home, outside the home."""
    environ = os.environ if environ is None else environ
    base = next((value for name in ("XDG_RUNTIME_DIR", "TMPDIR")
                 if os.path.isabs(value := environ.get(name, "")) and os.path.isdir(value)), "/tmp")
    return Path(base) / f"memsift-{os.getuid()}-{zlib.crc32(str(home).encode()):08x}"


def private(folder: Path, *, create: bool) -> Path | None:
    """*folder*, when it is a folder (not a link) of this user that nobody else can write; else None."""
    if create:
        with contextlib.suppress(OSError):
            folder.mkdir(mode=0o700)
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    mine = stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077
    return folder if mine else None


def cannot_write(folder: Path) -> str | None:
    """Why files cannot be written in *folder* (or the nearest folder above it that exists), or None.

    Asks the file system (``statvfs``, ``access``) and writes nothing, so a prompt can ask it.
    """
    existing = folder
    while not existing.is_dir() and existing != existing.parent:
        existing = existing.parent
    try:
        info = os.statvfs(existing)
    except OSError as error:
        return _why(error)
    if info.f_flag & os.ST_RDONLY:
        return _WHY[errno.EROFS]
    if (info.f_blocks and not info.f_bavail) or (info.f_files and not info.f_favail):
        return _WHY[errno.ENOSPC]
    if not os.access(existing, os.W_OK | os.X_OK):
        return _WHY[errno.EACCES]
    return None


def probe(folder: Path) -> str | None:
    """Why a file cannot be written in *folder*, found by writing one (a block) and removing it; or None."""
    from .._fs.files import private_folder

    path = folder / f".probe-{os.getpid()}"
    try:
        private_folder(folder)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, b"\0" * 4096)
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(path)
    except OSError as error:
        return _why(error)
    return None


def _why(error: OSError) -> str:
    return _WHY.get(error.errno or 0, error.strerror or type(error).__name__)


def keeping_folders(services: Services) -> list[Path]:
    """The folders a retain writes: the notes' and the outbox's."""
    paths = [getattr(services.notebook, "path", None), getattr(services.outbox, "path", None)]
    return folders_of(path for path in paths if path is not None)


def folders_of(paths: Iterable[Path]) -> list[Path]:
    """The folders that hold *paths* (a link's target's folder, for a link)."""
    return list(dict.fromkeys(Path(os.path.realpath(path)).parent for path in paths))


def services_keeping_news(services: Services, session: str, environ: Mapping[str, str] | None = None) -> str | None:
    """``keeping_news`` for the folders these services write."""
    return keeping_news(services.config.home, keeping_folders(services), session, environ)


def _first_problem(check: Callable[[Path], str | None], folders: Iterable[Path]) -> tuple[Path, str] | None:
    for folder in folders:
        why = check(folder)
        if why:
            return folder, why
    return None


def _reason(folder: Path, why: str, spool: Path | None) -> str:
    if spool is None:
        return f"{folder} cannot be written ({why}), nor can a spool: exchanges are not kept"
    return f"{folder} cannot be written ({why}); exchanges wait until it can (memsift doctor)"


# -- the prompt: what the session is told ---------------------------------------------------

def keeping_news(home: Path, folders: Sequence[Path], session: str,
                 environ: Mapping[str, str] | None = None) -> str | None:
    """The line this session has not heard about keeping exchanges, or None (the common case:
    a ``statvfs`` and an ``access`` per folder and one ``stat``)."""
    spool = spool_folder(home, environ)
    problem = _first_problem(cannot_write, folders)
    if problem is None and not (spool / "health.json").exists():
        return None
    from .._runtime.health import Health, unkept_line  # only when there is news: the quiet path pays for no more

    usable = private(spool, create=problem is not None)
    if usable is None:  # no private spool: say it each time, there is nowhere to remember it was said
        return unkept_line(HOME, _reason(*problem, None), True) if problem else None
    health = Health(usable)
    if problem is not None:
        health.failed(HOME, _reason(*problem, usable), kind="unkept")
    elif not any(_entries(usable)):
        health.succeeded(HOME)  # writable again and nothing waits: "kept again", to whoever heard
    line = health.notice(HOME, session)
    if line is None and problem is not None and not health.path.exists():
        return unkept_line(HOME, _reason(*problem, usable), True)  # the spool took no write either
    return line


# -- the detached retain: keep, or spool --------------------------------------------------------

def retain_or_wait(exchange: Exchange, services: Services, root: str | os.PathLike[str],
                   environ: Mapping[str, str] | None = None) -> Retained | None:
    """``retain``, after what waits in the spool; or, when the home cannot keep it, the exchange
    spooled (None). Raises OSError only when it could be written nowhere."""
    from ..pipeline import retain

    folders = keeping_folders(services)
    problem = _first_problem(probe, folders)
    if problem is None:
        replay(services, environ)
        try:
            result: Retained | None = retain(exchange, services)
        except OSError:
            result = None  # a write the pipeline does not guard (the costs file): probed below
        if result is not None and not any(step.verdict == "error" for step in result.trace):
            return result
        problem = _first_problem(probe, folders)
        if problem is None:
            return result  # it failed for another reason, as a stage does: the health file says so
    _spool(exchange, services, root, problem, environ)
    return None


def _spool(exchange: Exchange, services: Services, root: str | os.PathLike[str],
           problem: tuple[Path, str], environ: Mapping[str, str] | None) -> None:
    from .._runtime.bounds import EXCHANGE_CHARS, bounded
    from .._fs.files import write_atomically
    from .._runtime.health import Health

    home = services.config.home
    spool = private(spool_folder(home, environ), create=True)
    if spool is not None:
        redact = services.redactor.redact  # what waits is redacted, as what is kept is
        entry = {"project": os.fspath(root), "session": exchange.session, "queued_at": time.time(),
                 "user": bounded(exchange.user, EXCHANGE_CHARS, redact),
                 "assistant": bounded(exchange.assistant, EXCHANGE_CHARS, redact)}
        try:
            write_atomically(spool / "waiting" / f"{time.time_ns()}-{os.getpid()}.json", json.dumps(entry))
        except OSError:
            spool = None
    if spool is None:  # never a health file in a folder that may not be ours
        raise OSError(f"the exchange could not be kept: {_reason(*problem, None)}")
    Health(spool).failed(HOME, _reason(*problem, spool), kind="unkept")


def _entries(spool: Path) -> Iterator[Path]:
    with contextlib.suppress(OSError):
        yield from sorted((spool / "waiting").glob("*.json"))


def waiting(home: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The exchanges waiting in the spool of *home*, oldest first."""
    spool = private(spool_folder(home, environ), create=False)
    return list(_entries(spool)) if spool is not None else []


def replay(services: Services, environ: Mapping[str, str] | None = None, limit: int = REPLAYED) -> int:
    """Keep what waits in the spool, each exchange in its own project, oldest first, while the
    home can keep them; returns how many were kept. One process at a time (a lock in the spool)."""
    import fcntl

    from attrs import evolve

    from .._fs.files import read_regular, set_aside
    from .._runtime.health import Health
    from ..pipeline import retain
    from ..services import open_services
    from ..types import Exchange

    spool = private(spool_folder(services.config.home, environ), create=False)
    entries = list(_entries(spool)) if spool is not None else []
    if spool is None or not entries:
        return 0
    kept = 0
    with open(os.open(spool / "replay.lock", os.O_WRONLY | os.O_CREAT, 0o600), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # another process keeps them now
        opened: dict[str, Services] = {}
        for entry in list(_entries(spool))[:limit]:
            try:
                data = json.loads(read_regular(entry))
                project = data["project"]
                exchange = Exchange(data["user"], data["assistant"], data["session"])
            except FileNotFoundError:
                continue
            except (OSError, ValueError, KeyError, TypeError):
                set_aside(entry)  # never deleted: it may be the only copy of an exchange
                continue
            if project not in opened:
                fresh = open_services(services.config, project)
                opened[project] = evolve(fresh, health=fresh.health.unheard() if fresh.health else None)
            if _first_problem(probe, keeping_folders(opened[project])):
                break  # that project's folder still cannot keep it: it waits on
            retain(exchange, opened[project])
            entry.unlink()
            kept += 1
    if not any(_entries(spool)):
        Health(spool).succeeded(HOME)
    return kept
