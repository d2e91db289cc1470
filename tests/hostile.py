"""Hostile and broken things a hook may meet, real ones: an HTTP store on 127.0.0.1 that never stops
answering, and a Unix socket where memsift's model server would listen, run by whoever the test says.

    with HostileStore("endless") as store:      # POST /api/v1/search: 200, then bytes for ever
        run_hook(..., MEMSIFT_STORE="cognee", MEMSIFT_COGNEE_URL=store.url)
        store.searches                          # how many searches reached it

    with Listener(socket_path, answer={"ok": True, "text": "..."}) as listener:
        ...
        listener.received                       # every request, as sent
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple, Self

HUNDRED_MB = 100 * 1024 * 1024
PIECE = b'{"text": "' + b"x" * 65_000 + b'"}, '


class LocalHTTP:
    """An HTTP server on 127.0.0.1, in a thread, answering with *handler*; ``url`` is its address."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class HostileStore(LocalHTTP):
    """A Cognee-like store on 127.0.0.1 whose search answers are hostile; every other call is answered
    as Cognee answers it (a dataset, an empty listing), so a search is what the store gets to.

    ``huge``: 100 MB, sent as fast as the socket takes it, its length declared. ``endless``: a chunked
    answer that never ends. ``trickle``: a chunked answer, a byte every 50 ms, never ending.
    """

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.searches = 0
        self.stopped = threading.Event()
        super().__init__(self._handler())

    def __exit__(self, *_: object) -> None:
        self.stopped.set()
        super().__exit__()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        store = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # http.server's naming
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/api/v1/search":
                    self._json({"id": "e1e41a21-ce15-5ab4-9bbd-afd15f4d44d7", "name": "memsift"})
                    return
                store.searches += 1
                with contextlib.suppress(OSError):  # the client hung up: what a bounded reader does
                    self._hostile()

            def do_GET(self) -> None:
                self._json([])

            def _json(self, body: Any) -> None:
                raw = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _hostile(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if store.mode == "huge":
                    self.send_header("Content-Length", str(HUNDRED_MB))
                else:
                    self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.write(b"[" if store.mode == "huge" else b"1\r\n[\r\n")
                sent = 1
                while not store.stopped.is_set() and (store.mode != "huge" or sent < HUNDRED_MB):
                    if store.mode == "trickle":
                        self.wfile.write(b"1\r\n \r\n")
                        self.wfile.flush()
                        time.sleep(0.05)
                        continue
                    piece = PIECE if store.mode != "huge" else PIECE[: HUNDRED_MB - sent]
                    self.wfile.write(piece if store.mode == "huge" else b"%x\r\n%s\r\n" % (len(piece), piece))
                    sent += len(piece)
                self.close_connection = True

            def log_message(self, *_: object) -> None:
                pass

        return Handler


class Listener:
    """A Unix socket at *path* that speaks memsift's framing (4 bytes of length, then JSON): it records
    every request and answers each with ``answer``. ``as_uid``: run it in a process of that user (root
    only), moved into place afterwards with the socket file given to this user, so that only the
    process's own credentials tell it apart.
    """

    def __init__(self, path: Path, answer: dict[str, Any], *, as_uid: int | None = None) -> None:
        self.path, self.answer = path, answer
        self.received: list[dict[str, Any]] = []
        self.connections = 0
        self._process: subprocess.Popen[bytes] | None = None
        if as_uid is None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._sock.bind(str(path))
            os.chmod(path, 0o600)
            self._sock.listen(8)
            threading.Thread(target=self._serve, daemon=True).start()
        else:
            self._in_process_of(as_uid)

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *_: object) -> None:
        if self._process is not None:
            import shutil

            self._process.kill()
            self._process.wait(timeout=10)
            shutil.rmtree(self._shared, ignore_errors=True)
        else:
            self._sock.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn, contextlib.suppress(OSError, ValueError):
                size = int.from_bytes(_exactly(conn, 4), "big")
                self.received.append(json.loads(_exactly(conn, size)))
                data = json.dumps(self.answer).encode()
                conn.sendall(len(data).to_bytes(4, "big") + data)

    def _in_process_of(self, uid: int) -> None:
        """The listener as another user: bound where that user may write, then moved to *path*."""
        import shutil
        import tempfile

        shared = Path(tempfile.mkdtemp(prefix="memsift-other-user-"))  # in /tmp: reachable by that user
        shared.chmod(0o777)
        self._shared = shared
        bound, log = shared / "s.sock", shared / "received.jsonl"
        python = shutil.which("python3", path="/usr/bin:/bin:/usr/local/bin") or sys.executable
        code = (
            "import json, socket, sys\n"
            "s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)\n"
            "print('ready', flush=True)\n"
            "while True:\n"
            "    c, _ = s.accept(); c.settimeout(5); got = b''\n"
            "    try:\n"
            "        while part := c.recv(65536): got += part\n"
            "    except OSError: pass\n"
            "    open(sys.argv[2], 'a').write(json.dumps(got.decode('latin-1')) + '\\n'); c.close()\n"
        )
        self._process = subprocess.Popen([python, "-c", code, str(bound), str(log)], user=uid,
                                         stdout=subprocess.PIPE)
        assert self._process.stdout is not None and self._process.stdout.readline() == b"ready\n"
        os.replace(bound, self.path)
        os.chown(self.path, os.getuid(), os.getgid())
        os.chmod(self.path, 0o600)
        self.log = log

    def heard(self) -> list[str]:
        """What the other user's process received on each connection (as root: it runs as another uid)."""
        log = getattr(self, "log", None)
        return [json.loads(line) for line in log.read_text().splitlines()] if log and log.exists() else []


def _exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        part = conn.recv(size - len(data))
        if not part:
            raise ConnectionError("closed")
        data += part
    return data


class Measured(NamedTuple):
    returncode: int
    stdout: bytes
    stderr: bytes
    peak_rss: int  # bytes: the process's largest resident set, as the kernel counted it


# A small process that runs the command and writes its ``ru_maxrss``: Linux counts in a process's peak
# the pages of the process it was forked from, until it calls exec; forked from the test run (hundreds
# of MB once a model is loaded), the command would be charged for them.
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
os._exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(command: list[str], stdin: bytes, env: dict[str, str], cwd: Path, timeout: float = 120) -> Measured:
    """Run *command* to its end and say how much memory it held at most (``wait4``'s ``ru_maxrss``, read
    by a small launcher the command is forked from)."""
    import tempfile

    with tempfile.NamedTemporaryFile("r", suffix=".rss") as report:
        done = _measured([sys.executable, "-c", LAUNCHER, report.name, *command], stdin, env, cwd, timeout)
        peak = int(report.read() or 0)
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: kilobytes on Linux, bytes on macOS
    return Measured(done.returncode, done.stdout, done.stderr, peak * scale)


def _measured(command: list[str], stdin: bytes, env: dict[str, str], cwd: Path, timeout: float) -> Measured:
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env, cwd=cwd)
    out: dict[str, bytes] = {}
    readers = [threading.Thread(target=lambda name=name, pipe=pipe: out.__setitem__(name, pipe.read()))
               for name, pipe in (("stdout", process.stdout), ("stderr", process.stderr))]
    for reader in readers:
        reader.start()
    assert process.stdin is not None
    process.stdin.write(stdin)
    process.stdin.close()
    timer = threading.Timer(timeout, process.kill)
    timer.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        timer.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join()
    return Measured(process.returncode, out["stdout"], out["stderr"], usage.ru_maxrss)
