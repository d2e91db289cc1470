"""The embedded store: passages in one SQLite file, searched with FTS5 and BM25.

Works offline on a fresh machine with nothing but Python's own sqlite3. A read
is bounded as an answer from a server is: at most ``TEXT_CHARS`` of a
passage's text and of its exchange come back from a search (``EXCHANGE_CHARS``
of one item read whole), and a search that runs past its ``timeout`` is
interrupted inside SQLite (``DeadlineExceeded``), not left running.

>>> store = SQLiteStore(Path("store.sqlite"))
>>> store.add([Item("a1", "Capped the worker heap at 1536 MB.", "passage", "archive")], timeout=1)
>>> [p.id for p in store.search("worker heap limit", limit=5, timeout=1)]
['a1']
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from .._runtime.bounds import query_terms
from ..errors import DeadlineExceeded, ServiceUnavailable
from .._fs.files import is_damaged_database, private_file, set_aside
from .._words.text import content_words
from ..types import Item

if TYPE_CHECKING:
    import sqlite3

T = TypeVar("T")

TEXT_CHARS = 64_000  # of a passage's text and its exchange in a search: what a kept exchange's side holds
EXCHANGE_CHARS = 256_000  # of an item read whole (``memsift show``): both sides of a kept exchange and more

# ``text`` is what is searched, judged and shown (a kept exchange's fact line); ``exchange`` the
# whole exchange it came from, for ``memsift show`` ('' for a passage that is all text).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS passages (id TEXT PRIMARY KEY, text TEXT NOT NULL, source TEXT NOT NULL,
    exchange TEXT NOT NULL DEFAULT '');
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
    text, content='passages', content_rowid='rowid', tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS passages_ai AFTER INSERT ON passages BEGIN
    INSERT INTO passages_fts(rowid, text) VALUES (new.rowid, new.text);
END;
"""


def match_any(text: str) -> str | None:
    """An FTS5 query matching any content word of ``text`` (None when it has none).

    >>> match_any("why Stripe over Mollie?")
    '"mollie" OR "stripe"'
    """
    terms = sorted(query_terms(content_words(text)))  # a pasted log would OR thousands
    if not terms:
        return None
    # Each term quoted, so FTS5 syntax in a message ("NOT", "*", ":") stays text.
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _add_exchange_column(db: sqlite3.Connection) -> None:
    """A store written before passages had their exchange gets the column, empty for the old rows."""
    if "exchange" not in {row[1] for row in db.execute("PRAGMA table_info(passages)")}:
        with db:
            db.execute("ALTER TABLE passages ADD COLUMN exchange TEXT NOT NULL DEFAULT ''")


class SQLiteStore:
    """A ``Store`` in one SQLite file at ``path``; ``add`` ignores ids it already holds.
    ``on_damage(path, aside)`` is told when a damaged file was set aside and a new one made.

    ``search(query, *, limit, timeout)`` and ``add(items, *, timeout)`` as ``types.Store`` says;
    ``held(items, *, timeout)`` as ``types.ConfirmingStore`` says (the ``timeout`` goes unused: the
    file answers at once, and the runner bounds the call).
    """

    name = "embedded store"
    remote = False  # runs in-process: no breaker to mind

    def __init__(self, path: Path, on_damage: Callable[[Path, Path], None] | None = None) -> None:
        self.path = path
        self.on_damage = on_damage  # told when a damaged file was set aside and a new one made
        self._db: sqlite3.Connection | None = None
        # One connection, used from deadline threads: a call abandoned past its
        # deadline may still be running when the next one (or close) comes.
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            import sqlite3  # on first use: a quiet message never opens the store

            private_file(self.path)
            # check_same_thread off: calls run in a deadline thread (budget.within).
            db = sqlite3.connect(self.path, timeout=5, check_same_thread=False)
            db.executescript(_SCHEMA)
            _add_exchange_column(db)
            self._db = db
        return self._db

    def add(self, items: Sequence[Item], *, timeout: float) -> None:
        def insert(db: sqlite3.Connection) -> None:
            with db:
                db.executemany(
                    "INSERT OR IGNORE INTO passages (id, text, source, exchange) VALUES (?, ?, ?, ?)",
                    [(item.id, item.text, item.source, item.exchange) for item in items],
                )

        self._healing(insert)

    def held(self, items: Sequence[Item], *, timeout: float) -> set[str]:
        """The ids of *items* stored with the same text."""
        texts = {item.id: item.text for item in items}
        rows = self._healing(lambda db: db.execute(
            f"SELECT id, text FROM passages WHERE id IN ({', '.join('?' * len(texts))})",
            list(texts)).fetchall())
        return {id_ for id_, text in rows if texts[id_] == text}

    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]:
        match = match_any(query)
        if match is None:
            return []
        rows = self._healing(lambda db: _within(db, timeout, lambda: db.execute(
            "SELECT p.id, substr(p.text, 1, ?), substr(p.source, 1, 200), bm25(passages_fts),"
            " substr(p.exchange, 1, ?) FROM passages_fts JOIN passages p ON p.rowid = passages_fts.rowid"
            " WHERE passages_fts MATCH ? ORDER BY bm25(passages_fts) LIMIT ?",
            (TEXT_CHARS, TEXT_CHARS, match, limit),
        ).fetchall(), f"{self.name}: the search ran past its {timeout:g} s"))
        return [Item(id_, text, "passage", source, -rank, exchange) for id_, text, source, rank, exchange in rows]

    def get(self, item_id: str) -> Item | None:
        """The passage stored under *item_id*, its exchange with it; None when there is none.

        >>> store.get("ex-3f2a9c1b").exchange
        'how do we cap uploads?\n\nAt 25 MB: Vercel rejects bigger bodies.'
        """
        row = self._healing(lambda db: db.execute(
            "SELECT id, substr(text, 1, ?), substr(source, 1, 200), substr(exchange, 1, ?) FROM passages"
            " WHERE id = ?", (TEXT_CHARS, EXCHANGE_CHARS, item_id)).fetchone())
        return None if row is None else Item(row[0], row[1], "passage", row[2], exchange=row[3])

    def _healing(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work`` on the database; on a damaged file, once more on a new one, the old set aside."""
        import sqlite3

        with self._lock:
            try:
                return work(self._connect())
            except OSError as error:  # its folder or file cannot be made or opened
                raise ServiceUnavailable(f"{self.name}: {error}") from error
            except sqlite3.DatabaseError as error:
                if not is_damaged_database(error):  # locked, disk full: the outbox tries again later
                    raise ServiceUnavailable(f"{self.name}: {error}") from error
                if self._db is not None:
                    self._db.close()
                    self._db = None
                aside = set_aside(self.path)
                if self.on_damage is not None:
                    self.on_damage(self.path, aside)
            try:
                return work(self._connect())
            except sqlite3.DatabaseError as error:
                raise ServiceUnavailable(f"{self.name}: {error}") from error

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _within(db: sqlite3.Connection, timeout: float, work: Callable[[], T], late: str) -> T:
    """``work`` on ``db``, interrupted inside SQLite once ``timeout`` seconds have passed."""
    import sqlite3
    import time

    deadline = time.monotonic() + timeout
    db.set_progress_handler(lambda: time.monotonic() > deadline, 1000)  # asked every 1,000 steps of SQLite's
    try:
        return work()
    except sqlite3.OperationalError as error:
        if time.monotonic() > deadline and "interrupted" in str(error):
            raise DeadlineExceeded(late) from error
        raise
    finally:
        db.set_progress_handler(None, 0)
