"""Vectors without numpy, and the cache that keeps each text's vector once it is computed.

A hook that imports numpy pays tens of milliseconds for it, more than the
whole judge: the vectors a warm server sends and the cache keeps are plain
float32 arrays (``array("f")``). A ``Row`` is one unit vector; ``row @ other``
is the cosine, as with numpy rows, and numpy reads both (``numpy.asarray``).

>>> rows = Rows.from_bytes(bytes(8), count=2, dims=1)
>>> rows.shape, rows[0] @ rows[1]
((2, 1), 0.0)

The cache is one SQLite file per project, beside the notes: a vector is
keyed by its model's name and a hash of its text, so a text is embedded
once, when it is written, and a model change makes every old vector a miss
(and the old model's rows are dropped as the new one's arrive).

>>> cache = VectorCache(Path("vectors.sqlite"))
>>> cache.put("all-MiniLM-L6-v2-onnx-int8", {"the worker OOMs": rows[0].tobytes()})
>>> list(cache.get("all-MiniLM-L6-v2-onnx-int8", ["the worker OOMs", "unseen"]))
['the worker OOMs']
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import operator
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._fs.files import is_damaged_database, private_file, set_aside

if TYPE_CHECKING:
    import sqlite3

_FAST_SUMPROD = getattr(math, "sumprod", None)  # Python 3.12+


def _sumprod(a: Iterable[float], b: Iterable[float]) -> float:
    if _FAST_SUMPROD is not None:
        return float(_FAST_SUMPROD(a, b))
    return float(sum(map(operator.mul, a, b)))  # Python 3.11: the same sum, a little slower


class Row(Sequence[float]):
    """One unit vector; ``row @ other`` is their cosine (another ``Row``, a numpy row, any floats)."""

    __slots__ = ("values",)

    def __init__(self, values: array[float]) -> None:
        self.values = values

    def __matmul__(self, other: Iterable[float]) -> float:
        return float(_sumprod(self.values, other.values if isinstance(other, Row) else other))

    __rmatmul__ = __matmul__

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self) -> Iterator[float]:
        return iter(self.values)

    def __getitem__(self, index: Any) -> Any:
        return self.values[index]

    def tobytes(self) -> bytes:
        return self.values.tobytes()

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy

        return numpy.frombuffer(self.values, dtype=numpy.float32).astype(dtype or numpy.float32)


class Rows(list[Row]):
    """Unit vectors, one a text, in order: what ``Embedder.embed`` returns from the server or the cache."""

    @classmethod
    def from_bytes(cls, data: bytes, *, count: int, dims: int) -> Rows:
        """``count`` vectors of ``dims`` float32 each, back to back in this machine's byte order."""
        if len(data) != count * dims * 4:
            raise ValueError(f"{len(data)} bytes are not {count} vectors of {dims} floats")
        values = array("f")
        values.frombytes(data)
        return cls(Row(values[i * dims:(i + 1) * dims]) for i in range(count))

    @property
    def shape(self) -> tuple[int, int]:
        return len(self), len(self[0]) if self else 0

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy

        flat = numpy.frombuffer(b"".join(row.tobytes() for row in self), dtype=numpy.float32)
        return flat.reshape(self.shape).astype(dtype or numpy.float32)


def row_bytes(row: Any) -> bytes:
    """A vector as float32 bytes, whether a ``Row`` or a numpy row."""
    if isinstance(row, Row):
        return row.tobytes()
    raw: bytes = row.astype("float32").tobytes()
    return raw


def text_key(text: str) -> bytes:
    """A text's key in the cache: 16 bytes of its SHA-1 (the text itself is not kept)."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()[:16]


class VectorCache:
    """Vectors by (model name, text), in one SQLite file; reads and writes never raise.

    A damaged file is set aside and a new one made: every vector can be computed again.
    """

    LIMIT = 60_000  # vectors kept (about 90 MB): the oldest written go first, and come back when missed

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None

    def get(self, model: str, texts: Iterable[str]) -> dict[str, bytes]:
        """The vectors held of ``texts`` for ``model``: text -> float32 bytes (misses left out)."""
        wanted = {text_key(t): t for t in texts}
        if not wanted or not self.path.exists():
            return {}
        found: dict[str, bytes] = {}
        keys = list(wanted)
        with self._guarded():
            db = self._open()
            for start in range(0, len(keys), 500):  # SQLite's bound on parameters
                chunk = keys[start:start + 500]
                rows = db.execute(f"SELECT key, vector FROM vectors WHERE model = ? AND key IN "
                                  f"({','.join('?' * len(chunk))})", [model, *chunk])
                found.update((wanted[key], vector) for key, vector in rows)
        return found

    def put(self, model: str, vectors: Mapping[str, bytes]) -> None:
        """Keep ``vectors`` (text -> float32 bytes) for ``model``; another model's vectors go."""
        if not vectors:
            return
        with self._guarded():
            db = self._open()
            with db:
                db.execute("DELETE FROM vectors WHERE model != ?", (model,))
                db.executemany("INSERT OR REPLACE INTO vectors (model, key, vector) VALUES (?, ?, ?)",
                               [(model, text_key(t), v) for t, v in vectors.items()])
                db.execute("DELETE FROM vectors WHERE id <= (SELECT max(id) FROM vectors) - ?", (self.LIMIT,))

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _open(self) -> sqlite3.Connection:
        if self._db is None:
            import sqlite3

            private_file(self.path)
            db = sqlite3.connect(self.path, timeout=1.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA synchronous=OFF")  # a cache: a vector lost in a crash is computed again
            db.execute("CREATE TABLE IF NOT EXISTS vectors (id INTEGER PRIMARY KEY, model TEXT NOT NULL, "
                       "key BLOB NOT NULL, vector BLOB NOT NULL, UNIQUE (model, key))")
            self._db = db
        return self._db

    @contextlib.contextmanager
    def _guarded(self) -> Iterator[None]:
        """A cache that cannot be read is a miss; one that is damaged is set aside for a new one."""
        import sqlite3

        try:
            yield
        except (sqlite3.Error, OSError) as error:
            if isinstance(error, sqlite3.Error) and is_damaged_database(error):
                self.close()
                with contextlib.suppress(OSError):
                    set_aside(self.path)
