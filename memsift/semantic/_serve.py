"""The warm process (``memsift serve``): the embedding model loaded once, answering on a Unix socket.

Everything lives in ``<home>/serve/`` (0700): ``embed.sock`` (0600, the only
place it listens: never TCP), ``server.lock`` (held by the living server, so
two never run and a dead one's pid counts for nothing), ``server.json`` (its
pid, version and model, for ``memsift doctor``) and ``serve.log`` (its output).
It ends itself after ``serve_idle`` seconds without a request.

The protocol: a message is 4 bytes of length (big-endian), then that many
bytes. A request is one JSON message, ``{"op": "embed", "memsift": VERSION,
"model": NAME, "texts": [...]}``; the answer a JSON header ``{"ok": true,
"rows": n, "dims": d}`` then one message of n times d float32 (this machine's
byte order). A server of another version or model embeds nothing: it answers
``{"ok": false, "memsift": ..., "model": ..., "pid": ...}`` and the client
replaces it. ``{"op": "status"}`` tells its pid, version, model, resident
memory and idle time; ``{"op": "stop"}`` ends it. ``{"op": "recall", ...}``
recalls a hook's searching message here, where everything is loaded
(``_hooks/served.py``).

>>> with connected(socket_path(home), timeout=0.05) as conn:
...     send(conn, {"op": "status"}); receive_json(conn)["model"]
'all-MiniLM-L6-v2-onnx-int8'
"""

from __future__ import annotations

import _socket  # socket's own import builds its enums: milliseconds a hook would pay for nothing
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from .._fs.home import SERVE_FOLDER, SERVE_SOCKET, server_socket
from .model import BATCH

if TYPE_CHECKING:
    import socket

    from ..config import Config

FOLDER, SOCKET = SERVE_FOLDER, SERVE_SOCKET
LOCK, STATE, LOG = "server.lock", "server.json", "serve.log"
STARTING = "starting"  # made by the hook that starts a server, gone once that server holds the lock
START_GRACE = 30.0  # seconds a start is trusted to reach the lock (a busy machine starts Python slowly)
MAX_MESSAGE = 16 << 20  # bytes: a request of every note at once still fits; junk beyond it is refused
MAX_PATH = 100  # bytes of a socket's path (the system's limit is 104 to 108): a longer home is judged lexically
LOCK_WAIT = 3.0  # seconds a new server waits for the one it replaces to let go
REQUEST_TIMEOUT = 5.0  # seconds the server gives one client to send its request and read the answer
CONNECT_TIMEOUT = 0.05  # seconds to connect: a live server accepts at once, a full backlog is not waited on


def serve_dir(home: Path) -> Path:
    return home / FOLDER


def socket_path(home: Path) -> Path:
    return server_socket(home)


# -- the wire ------------------------------------------------------------------------

def send(conn: _socket.socket, message: Mapping[str, Any] | bytes) -> None:
    data = message if isinstance(message, bytes) else json.dumps(message).encode()
    conn.sendall(len(data).to_bytes(4, "big") + data)


def receive(conn: _socket.socket, limit: int = MAX_MESSAGE) -> bytes:
    """One message; ValueError, before a byte of it is read, when it says it is over ``limit`` bytes."""
    size = int.from_bytes(_exactly(conn, 4), "big")
    if size > limit:
        raise ValueError(f"a message of {size} bytes is over the limit of {limit}")
    return _exactly(conn, size)


def receive_json(conn: _socket.socket, limit: int = MAX_MESSAGE) -> dict[str, Any]:
    message = json.loads(receive(conn, limit))
    if not isinstance(message, dict):
        raise ValueError("the message is not a JSON object")
    return message


def _exactly(conn: _socket.socket, size: int) -> bytes:
    parts, left = [], size
    while left:
        part = conn.recv(min(left, 1 << 20))
        if not part:
            raise ConnectionError("the other end closed the connection mid-message")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


@contextlib.contextmanager
def connected(path: Path, timeout: float) -> Iterator[_socket.socket]:
    """A connection to the user's own server at ``path``; OSError when none answers within ``timeout``,
    or when the socket, or the process behind it, is another user's (nothing is sent to it)."""
    from .._fs.trust import socket_not_yours

    if len(os.fsencode(path)) > MAX_PATH:
        raise OSError(f"the socket's path is over {MAX_PATH} bytes: {path}")
    why = socket_not_yours(path)
    if why is not None:
        raise NotOurs(why)
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(os.fspath(path))
        uid = peer_uid(conn)
        if uid is not None and uid != os.getuid():
            raise NotOurs(f"the process listening on {path} runs as uid {uid}, not as you (uid {os.getuid()})")
        yield conn
    finally:
        conn.close()


class NotOurs(OSError):
    """A socket, or the process on its other end, that is another user's."""


def peer_uid(conn: _socket.socket) -> int | None:
    """The uid of the process on the other end of a Unix socket, where the system tells it (Linux); else None."""
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return None
    credentials = conn.getsockopt(_socket.SOL_SOCKET, option, 12)  # struct ucred: pid, uid, gid
    return int.from_bytes(credentials[4:8], sys.byteorder)


# -- who is running ------------------------------------------------------------------

def lock_held(home: Path) -> bool:
    """Whether a server holds the lock: it is running, or loading its model (a dead one holds nothing)."""
    import fcntl

    try:
        fd = os.open(serve_dir(home) / LOCK, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing lets go of a lock this process took
    return False


def status(home: Path, timeout: float = 0.5) -> dict[str, Any] | None:
    """What the server says of itself (pid, memsift, model, rss_bytes, idle_seconds), or None: none answers."""
    try:
        with connected(socket_path(home), timeout) as conn:
            send(conn, {"op": "status"})
            return receive_json(conn)
    except (OSError, ValueError):
        return None


def stop(home: Path, timeout: float = 2.0) -> bool:
    """Ask the server to end; True once it said it has let go of its socket and lock."""
    try:
        with connected(socket_path(home), timeout) as conn:
            send(conn, {"op": "stop"})
            return bool(receive_json(conn).get("stopped"))
    except (OSError, ValueError):
        return False


def start_detached(home: Path, folder: str | None = None) -> int | None:
    """Start ``memsift serve`` for ``home`` and the model in ``folder`` (None: the packaged one) in a
    session of its own, its output in ``serve.log``; its pid.

    Returns at once: the server loads its model while the hook goes on. None
    when one already holds the lock (running, or still loading), or when the socket's path would be
    too long to connect to.
    """
    from .._fs.files import private_folder

    if lock_held(home) or len(os.fsencode(socket_path(home))) > MAX_PATH:
        return None
    private_folder(serve_dir(home))
    if not _claim_start(serve_dir(home)):
        return None  # another hook just started one: it is on its way to the lock
    # The server serves what this client asks for, whatever else its settings say.
    env = {**os.environ, "MEMSIFT_HOME": str(home),
           "MEMSIFT_EMBEDDING_MODEL": folder or ""}
    log = os.open(serve_dir(home) / LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        # posix_spawn, not subprocess: the hook does not pay subprocess's imports. The child's
        # stdio is /dev/null and the log, never the agent's pipes (the agent would wait on them).
        # -P: memsift as installed, never a folder named memsift in the hook's working directory.
        return os.posix_spawn(sys.executable, [sys.executable, "-P", "-m", "memsift", "serve"],
                              env, setsid=True,
                              file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                                            (os.POSIX_SPAWN_DUP2, log, 1), (os.POSIX_SPAWN_DUP2, log, 2)])
    finally:
        os.close(log)


def _claim_start(folder: Path) -> bool:
    """Whether this process is the one to start a server: the first to make ``starting``, or the
    first after an old one (a start that died on the way) is cleared. Two hooks never both start."""
    marker = folder / STARTING
    for _ in range(2):
        try:
            os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return True
        except FileExistsError:
            try:
                if time.time() - marker.stat().st_mtime < START_GRACE:
                    return False
                marker.unlink()
            except FileNotFoundError:
                continue
    return False


# -- the server ----------------------------------------------------------------------

Recaller = Callable[[Mapping[str, Any], str], dict[str, Any]]  # a recall request, the model's name -> the answer


class Server:
    """The model behind the socket; ``run`` answers until idle for ``idle`` seconds or asked to stop.
    ``recall`` answers the hooks' recall requests (``memsift._hooks.served.answer_recall``): given, not
    imported, so that the library's recall and the server that runs it know nothing of each other."""

    def __init__(self, home: Path, model: Any, idle: float, recall: Recaller | None = None) -> None:
        self.home, self.model, self.idle, self.recall = home, model, idle, recall
        self.last_used = time.monotonic()
        self.served = 0
        self.stopping = False

    def run(self, listener: socket.socket) -> None:
        while not self.stopping:
            left = self.last_used + self.idle - time.monotonic()
            if left <= 0:
                return
            listener.settimeout(left)
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(REQUEST_TIMEOUT)
                with contextlib.suppress(OSError, ValueError):  # one bad client must not end the server
                    if peer_uid(conn) in (None, os.getuid()):  # another user's process is answered nothing
                        self.answer(conn, receive_json(conn))

    def answer(self, conn: socket.socket, request: Mapping[str, Any]) -> None:
        op = request.get("op")
        if op == "status":
            send(conn, self.describe())
        elif op == "stop":
            self.stopping = True
            release(self.home)
            send(conn, {"stopped": True})
        elif op == "embed":
            if (request.get("memsift"), request.get("model")) != (__version__, self.model.name):
                send(conn, {"ok": False, **self.describe()})
                return
            texts = request.get("texts")
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                send(conn, {"ok": False, "error": "texts must be a list of strings"})
                return
            self.last_used = time.monotonic()
            self.served += 1
            parts = []
            for start in range(0, len(texts), BATCH):
                if start and gone(conn):  # the client gave up waiting: the next one is not kept waiting too
                    return
                parts.append(self.model.embed(texts[start:start + BATCH]).astype("float32").tobytes())
            send(conn, {"ok": True, "rows": len(texts), "dims": self.model.dimensions})
            send(conn, b"".join(parts))
        elif op == "recall" and self.recall is not None:
            if request.get("memsift") != __version__:
                send(conn, {"ok": False, **self.describe()})
                return
            self.last_used = time.monotonic()
            self.served += 1
            try:
                answer = self.recall(request, self.model.name)
            except Exception as exc:  # a bug must not end the server: the hook recalls in process, and says it
                answer = {"ok": False, "why": f"{type(exc).__name__}: {exc}"}
            send(conn, answer)
        else:
            send(conn, {"ok": False, "error": f"unknown op {op!r}"})

    def describe(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "memsift": __version__, "model": self.model.name,
                "rss_bytes": resident_bytes(), "idle_seconds": round(time.monotonic() - self.last_used, 1),
                "served": self.served}


def gone(conn: socket.socket) -> bool:
    """Whether the client closed its end (it stopped waiting), without blocking."""
    import select
    import socket

    readable, _, _ = select.select([conn], [], [], 0)
    if not readable:
        return False
    try:
        return conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def resident_bytes() -> int | None:
    """This process's resident memory now (Linux), or at its peak elsewhere."""
    try:
        with open("/proc/self/status", encoding="ascii") as status_file:
            for line in status_file:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


_LOCK_FD: list[int] = []  # the lock this process holds, while it serves


def take_lock(home: Path, wait: float) -> bool:
    """Hold ``server.lock`` for this process's life (waiting up to ``wait`` for another to let go)."""
    import fcntl

    fd = os.open(serve_dir(home) / LOCK, os.O_WRONLY | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _LOCK_FD.append(fd)
            return True
        except OSError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return False
            time.sleep(0.05)


def release(home: Path) -> None:
    """The socket and the state file go, then the lock: a server started after finds nothing in its way."""
    for name in (SOCKET, STATE):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(serve_dir(home) / name)
    while _LOCK_FD:
        os.close(_LOCK_FD.pop())


def listen(path: Path) -> socket.socket:
    """A socket at ``path``, its owner's only (a stale one from a dead server is replaced)."""
    import socket

    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # 0600 from the start: no moment where another user could connect
    try:
        listener.bind(os.fspath(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    listener.listen(16)
    return listener


def serve(config: Config, recall: Recaller | None = None) -> int:
    """``memsift serve``: load the model, answer until idle (and ``recall`` requests, with it). 0 when
    another server already runs."""
    import signal

    from .._fs.files import private_folder, write_atomically
    from .model import loaded_model

    home = config.home
    private_folder(serve_dir(home))
    os.chdir(serve_dir(home))  # holds no project folder busy for as long as it lives
    path = socket_path(home)
    if len(os.fsencode(path)) > MAX_PATH:
        print(f"memsift serve: the socket's path is over {MAX_PATH} bytes: {path}", file=sys.stderr)
        return 2
    held = take_lock(home, LOCK_WAIT)
    with contextlib.suppress(FileNotFoundError):  # the start this was is over: a later one may start
        os.unlink(serve_dir(home) / STARTING)
    if not held:
        print("memsift serve: another server is running", file=sys.stderr)
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # the finally below still tidies up
    try:
        model = loaded_model(config.embedding_model)  # the one the recalls it serves embed with too
        listener = listen(path)
        write_atomically(serve_dir(home) / STATE, json.dumps(
            {"pid": os.getpid(), "memsift": __version__, "model": model.name, "started": time.time()}))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        print(f"{stamp} memsift serve: pid {os.getpid()}, {model.name}, on {path}", file=sys.stderr, flush=True)
        with listener:
            Server(home, model, config.serve_idle, recall).run(listener)
    finally:
        release(home)
    return 0
