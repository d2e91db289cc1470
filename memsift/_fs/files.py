"""Files several hook processes share: a lock to take turns, a write never seen half done.

>>> with locked(path):
...     write_atomically(path, update(path.read_text()))
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import stat
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

PRIVATE_DIR = 0o700  # every folder memsift makes: its files may hold a user's notes


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold ``<path>.lock`` exclusively: read-modify-write cycles on ``path`` take turns.

    A lock file beside ``path``, not ``path`` itself: that is replaced on every write.
    """
    private_folder(path.parent)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # closing the file releases it
        yield


def write_atomically(path: Path, text: str, *, unchanged: Callable[[], bool] | None = None) -> bool:
    """Replace ``path`` with ``text``: a reader sees the old file or the new one, never half.

    With ``unchanged``, asked once the new file is written, just before it
    replaces the old: False leaves the old file as it is, and returns False
    (another program wrote it meanwhile; read it again).

    A symlink stays a symlink: its target is the file replaced (someone keeps
    the notes in a repository and links them in). The temporary file is named
    for this process and thread (tempfile would cost an import on the hook's
    hot path) and takes the replaced file's mode, or is readable by its owner
    only when the file is new.
    """
    target = Path(os.path.realpath(path))
    private_folder(target.parent)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o600
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, mode)
        # surrogateescape: bytes read that were not UTF-8 are written back as they were.
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as out:
            out.write(text)
        if unchanged is not None and not unchanged():
            os.unlink(tmp)
            return False
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return True


def private_folder(folder: Path) -> None:
    """Make ``folder`` and its missing parents, readable by their owner only."""
    if folder.is_dir():
        return
    private_folder(folder.parent)  # mkdir(parents=True) would give the parents the umask's mode
    folder.mkdir(mode=PRIVATE_DIR, exist_ok=True)


def private_file(path: Path) -> None:
    """Create ``path`` empty, owner only, unless it exists: SQLite then keeps its mode for its journals.

    An existing file is never opened: closing any descriptor of a database file drops every
    lock this process holds on it, and SQLite's other connections would go on unlocked.
    """
    private_folder(path.parent)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """The bytes of ``path`` (at most its first ``limit``), which must be a regular file.

    Opened without blocking and checked before reading: a FIFO with no writer
    would hang ``open()`` for ever, a device would never end. Raises
    FileNotFoundError when it is missing and ``NotRegularFile`` (an OSError)
    when it is something else.

    >>> read_regular(Path("/tmp/fifo"))
    NotRegularFile: /tmp/fifo is not a regular file
    """
    with open_regular(path) as file:
        return file.read() if limit is None else file.read(limit)


def open_regular(path: str | os.PathLike[str]) -> io.FileIO:
    """``path`` opened for reading as raw bytes, once it is known to be a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(f"{os.fspath(path)} is not a regular file")
        os.set_blocking(fd, True)
        return io.FileIO(fd, "r")
    except BaseException:
        os.close(fd)
        raise


class NotRegularFile(OSError):
    """A path memsift reads is a FIFO, a device, a folder or a socket."""


def set_aside(path: Path) -> Path:
    """Rename a damaged file out of the way, never delete it: it may hold a user's data.

    Returns the new name, ``<name>.damaged-<UTC time>-<pid>`` beside it.

    >>> set_aside(Path("health.json"))
    PosixPath('health.json.damaged-20261201T140211-4242')
    """
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    aside = path.with_name(f"{path.name}.damaged-{stamp}-{os.getpid()}")
    os.replace(path, aside)
    for journal in _SQLITE_JOURNALS:  # a database's journal goes with it, or the new one would read it
        with contextlib.suppress(FileNotFoundError):
            os.replace(f"{path}{journal}", f"{aside}{journal}")
    return aside


_SQLITE_JOURNALS = ("-wal", "-shm", "-journal")


def is_damaged_database(error: Exception) -> bool:
    """Whether an ``sqlite3`` error says the file is no database or a damaged one (not: locked, full)."""
    return type(error).__name__ == "DatabaseError" or "malformed" in str(error)


def checksum(parts: Sequence[str], prefix: str = "") -> str:
    """A short name for ``parts`` (a key, a marker's file name): two 32-bit checksums of them joined.
    zlib is already loaded; hashlib would cost a hook an import on every message."""
    data = "\0".join(parts).encode("utf-8", "surrogatepass")
    return f"{prefix}{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def stamp(path: Path) -> str:
    """What changes when ``path`` does (its device, inode, size and times), "-" when it is not there."""
    try:
        found = os.stat(path)
    except OSError:
        return "-"
    return f"{found.st_dev}:{found.st_ino}:{found.st_size}:{found.st_mtime_ns}:{found.st_ctime_ns}"
