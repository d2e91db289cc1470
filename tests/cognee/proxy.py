"""A loopback TCP proxy for the fault tests: it counts requests and can hold answers.

    with Proxy("http://127.0.0.1:8011") as proxy:
        store = CogneeStore(proxy.url)
        proxy.requests        # ["POST /api/v1/search", ...] as the server was asked
        proxy.hold()          # from now on the server's answers wait here ...
        proxy.release()       # ... and go on again

Bytes pass through untouched, whatever their framing; a request is counted
when its request line goes by. Binds 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from urllib.parse import urlsplit

_REQUEST_LINE = re.compile(rb"^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (\S+) HTTP/1\.[01]\r\n")


class Proxy:
    def __init__(self, upstream: str) -> None:
        target = urlsplit(upstream)
        self._upstream = (target.hostname, target.port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.requests: list[str] = []
        self._flowing = threading.Event()
        self._flowing.set()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def hold(self) -> None:
        self._flowing.clear()

    def release(self) -> None:
        self._flowing.set()

    def close(self) -> None:
        self._listener.close()
        self.release()
        with self._lock:
            for sock in self._sockets:
                sock.close()

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            try:
                server = socket.create_connection(self._upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()  # upstream down: the client sees its connection dropped
                continue
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, self._count),
                             daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, self._wait_if_held),
                             daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, on_data) -> None:
        try:
            while data := source.recv(65536):
                on_data(data)
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                with contextlib.suppress(OSError):  # the other side may be gone already
                    sock.shutdown(socket.SHUT_RDWR)

    def _count(self, data: bytes) -> None:
        found = _REQUEST_LINE.match(data)
        if found:
            with self._lock:
                self.requests.append(f"{found[1].decode()} {found[2].decode().split('?')[0]}")

    def _wait_if_held(self, data: bytes) -> None:
        self._flowing.wait()
