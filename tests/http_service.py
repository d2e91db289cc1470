"""A JSON HTTP service on 127.0.0.1, in a thread, for the remote deciders' tests.

A subclass says what the service does with a request (``serve``); tests can
script replies ahead of it (``script``, one per request, then ``always``): an
error status with its headers, a body that is not JSON, or ``HANG``, a
request accepted and never answered. Every request is kept in ``requests``.
The deciders' real client code runs against it over a socket.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple, Self


class Scripted(NamedTuple):
    """A reply served instead of an answer: a status, headers and a body (bytes or JSON)."""

    status: int
    body: Any = None
    headers: Mapping[str, str] = {}


HANG = Scripted(0)  # accept the request and never answer


class Received(NamedTuple):
    at: float  # time.monotonic() on arrival
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class JsonService:
    """Serves until ``stop()`` (or leaving ``with``); ``url`` is its address plus ``path``."""

    def __init__(self, path: str = "") -> None:
        self.script: list[Scripted] = []
        self.always: Scripted | None = None
        self.requests: list[Received] = []
        self.released = threading.Event()
        self.connections: set[socket.socket] = set()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}{path}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name=type(self).__name__, daemon=True)
        self._thread.start()
        self._running = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self._running:
            self._running = False
            self.released.set()  # hung requests end
            self._server.shutdown()
            self._server.server_close()
            for connection in list(self.connections):  # keep-alive ones too: a stopped service answers nothing
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
            self._thread.join(timeout=5)

    def bodies(self) -> list[dict[str, Any]]:
        return [request.json() for request in self.requests]

    def reply(self, received: Received) -> Scripted:
        if self.script:
            return self.script.pop(0)
        if self.always is not None:
            return self.always
        return self.serve(received)

    def serve(self, received: Received) -> Scripted:
        """The answer to a request no script replaced."""
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a real service offers

            def setup(self) -> None:
                super().setup()
                service.connections.add(self.connection)

            def finish(self) -> None:
                service.connections.discard(self.connection)
                super().finish()

            def do_POST(self) -> None:  # http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                received = Received(time.monotonic(), self.path,
                                    {k.lower(): v for k, v in self.headers.items()}, body)
                service.requests.append(received)
                reply = service.reply(received)
                if reply is HANG:
                    service.released.wait(30)
                    self.close_connection = True
                    return
                raw = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self._headers_buffer.append(b"\r\n")  # headers and body in one write: no Nagle stall
                self.wfile.write(b"".join(self._headers_buffer) + raw)
                self._headers_buffer = []

            def log_message(self, *_: object) -> None:  # quiet test output
                pass

        return Handler
