"""Embedders: the model in this process (the library, ``memsift bench``), a warm server (hooks), and
the cache in front of either.

Hooks never load the model themselves: they reach a warm process instead,
``memsift serve`` (``_serve.py``), and start it when none answers.

>>> embedder = CachedEmbedder(ServerEmbedder(home), VectorCache(project / "vectors.sqlite"))
>>> embedder.embed(["why Stripe?"])  # no server yet: one is started, this message is judged lexically
>>> embedder.embed(["why Stripe?"]).shape  # a moment later
(1, 384)
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from ..types import Embedder, Vectors
from . import _serve
from ._vectors import Rows, VectorCache, row_bytes
from .model import PACKAGED, loaded_model, model_files


class InProcessEmbedder:
    """The model run in this process, loaded on the first ``embed``.

    >>> InProcessEmbedder().embed(["the worker OOMs nightly"]).shape
    (1, 384)
    """

    remote = False

    def __init__(self, folder: str | None = None) -> None:
        self._folder = folder
        self.name = PACKAGED if folder is None else model_files(folder)[2]  # named without loading it

    def embed(self, texts: Sequence[str]) -> Vectors:
        return loaded_model(self._folder).embed(texts)


class ServerEmbedder:
    """The model of the warm server in memsift's home; None whenever it cannot answer now.

    No server answering (none yet, a dead one's socket, one of another version
    or model): one is started, detached, and this call returns None at once. A
    hook never waits for the model to load, and never sees an exception from here.
    """

    remote = False  # a process of this user's, on this machine: no breaker to mind
    CONNECT_TIMEOUT = _serve.CONNECT_TIMEOUT
    ANSWER_TIMEOUT = 1.0  # seconds for the vectors: a message and a few missed items take milliseconds

    def __init__(self, home: Path, folder: str | None = None, *, wait: float = 0.0) -> None:
        """``wait``: seconds to wait for a server just started (0 on the agent's path; the detached
        retain waits, so that what it writes gets its vectors now)."""
        from .model import model_files

        self.home, self.wait, self._folder = home, wait, folder
        self.name = PACKAGED if folder is None else model_files(folder)[2]

    def embed(self, texts: Sequence[str]) -> Vectors | None:
        import time

        rows = self._ask(texts)
        if rows is not None:
            return rows
        self._start()
        deadline = time.monotonic() + self.wait
        while rows is None and time.monotonic() < deadline:
            time.sleep(0.1)
            rows = self._ask(texts)
        return rows

    def _ask(self, texts: Sequence[str]) -> Vectors | None:
        """The server's vectors, or None: none answers, a broken one, or one of another version or
        model (asked to end, so that ours replaces it)."""
        try:
            with _serve.connected(_serve.socket_path(self.home), self.CONNECT_TIMEOUT) as conn:
                conn.settimeout(self.ANSWER_TIMEOUT)
                _serve.send(conn, {"op": "embed", "memsift": __version__, "model": self.name,
                                   "texts": list(texts)})
                header = _serve.receive_json(conn)
                if header.get("ok"):
                    return Rows.from_bytes(_serve.receive(conn), count=int(header["rows"]), dims=int(header["dims"]))
            if "pid" in header:
                _serve.stop(self.home)
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return None

    def _start(self) -> None:
        with contextlib.suppress(OSError):  # no server this time: judged lexically, the next message tries again
            _serve.start_detached(self.home, self._folder)


class CachedEmbedder:
    """An embedder whose vectors are kept in a ``VectorCache``: only texts it never saw are embedded.

    >>> embedder = CachedEmbedder(InProcessEmbedder(), VectorCache(Path("vectors.sqlite")))
    >>> embedder.embed(["the worker OOMs nightly"]).shape   # computed, then kept
    (1, 384)
    """

    def __init__(self, embedder: Embedder, cache: VectorCache) -> None:
        self.embedder, self.cache = embedder, cache
        self.name = embedder.name
        self.remote = getattr(embedder, "remote", False)

    def close(self) -> None:
        """Close the cache's file (and the embedder's, if it holds one)."""
        self.cache.close()
        close = getattr(self.embedder, "close", None)
        if callable(close):
            close()

    def embed(self, texts: Sequence[str]) -> Vectors | None:
        found = self.cache.get(self.name, texts)
        misses = [text for text in dict.fromkeys(texts) if text not in found]
        if misses:
            rows = self.embedder.embed(misses)
            if rows is None:
                return None
            new = {text: row_bytes(row) for text, row in zip(misses, rows, strict=True)}
            self.cache.put(self.name, new)
            found.update(new)
        dims = len(found[texts[0]]) // 4 if texts else 0
        return Rows.from_bytes(b"".join(found[text] for text in texts), count=len(texts), dims=dims)

