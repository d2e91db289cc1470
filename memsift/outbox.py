"""What retain keeps for the long-term store waits here until the store confirms it.

The outbox is one SQLite file under memsift's home. ``put`` queues items (once
per item id); ``drain`` sends what is pending, oldest first, in batches, and
marks a batch sent only after the store accepted it. When the service is
down the drain raises its ``ServiceUnavailable`` and the items stay queued
for the next drain, so nothing retained is lost.

    >>> outbox = Outbox(home / "outbox.sqlite")
    >>> outbox.put([Item("a1", "We chose Stripe over Adyen: ...", "passage", "retain")])
    >>> outbox.drain(store, timeout=10)
    1
    >>> outbox.pending()
    0

Two processes may drain at once (two hooks ending together): each claims
its batch for a lease before sending, so when both succeed no item is sent
twice. A claim left by a process that died expires with its lease.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from attrs import asdict

from .types import Item, Store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    id TEXT PRIMARY KEY,          -- the item's id: one row per item, ever
    item TEXT NOT NULL,           -- the item's latest version, as JSON
    sent TEXT,                    -- the version the store confirmed; pending while it differs
    queued_at REAL NOT NULL,
    sent_at REAL,
    claim TEXT,                   -- the drain sending it now, if any
    claimed_until REAL NOT NULL DEFAULT 0
);
"""
_GRACE = 5.0  # seconds a claim outlives the drain's own deadline


class Outbox:
    """A queue of items for the store, kept in SQLite at *path*."""

    def __init__(self, path: Path, *, batch: int = 20,
                 clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.batch = batch
        self.clock = clock
        # One connection per thread, opened on first use (recall never needs one):
        # the pipeline runs a drain in a worker thread of its own.
        self._local = threading.local()

    def put(self, items: Sequence[Item]) -> None:
        """Queue *items*. An item the store already has, as it is, is not sent again;
        one whose text changed is."""
        now = self.clock()
        with self._transaction() as db:
            db.executemany(
                """INSERT INTO outbox (id, item, queued_at) VALUES (?, ?, ?)
                   ON CONFLICT (id) DO UPDATE SET item = excluded.item,
                       queued_at = excluded.queued_at, claim = NULL, claimed_until = 0
                   WHERE outbox.item != excluded.item""",
                [(item.id, _encode(item), now) for item in items])

    def drain(self, store: Store, *, timeout: float) -> int:
        """Send pending items to *store* until none are left or *timeout* seconds have
        passed; returns how many were sent.

        A ``ServiceUnavailable`` from the store stops the drain and is raised, so
        the caller's breaker hears of it; the unsent items stay pending.
        """
        deadline = self.clock() + timeout
        sent = 0
        while (remaining := deadline - self.clock()) > 0:
            claim, items = self._claim(until=deadline + _GRACE)
            if not items:
                break
            try:
                store.add(items, timeout=remaining)
            except BaseException:
                self._release(claim)  # the next drain sends them
                raise
            sent += self._mark_sent(claim)
        return sent

    def pending(self) -> int:
        """How many items wait to be sent."""
        return self._connection().execute(
            "SELECT count(*) FROM outbox WHERE sent IS NOT item").fetchone()[0]

    def close(self) -> None:
        """Close this thread's connection."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    def _claim(self, until: float) -> tuple[str, list[Item]]:
        claim = uuid.uuid4().hex
        now = self.clock()
        with self._transaction() as db:
            rows = db.execute(
                """SELECT id, item FROM outbox
                   WHERE sent IS NOT item AND claimed_until < ?
                   ORDER BY queued_at, rowid LIMIT ?""", (now, self.batch)).fetchall()
            db.executemany("UPDATE outbox SET claim = ?, claimed_until = ? WHERE id = ?",
                           [(claim, until, row_id) for row_id, _ in rows])
        return claim, [_decode(item) for _, item in rows]

    def _mark_sent(self, claim: str) -> int:
        # Only rows still under this claim: a put that changed an item meanwhile
        # dropped the claim, so its new text stays pending.
        with self._transaction() as db:
            return db.execute(
                """UPDATE outbox SET sent = item, sent_at = ?, claim = NULL, claimed_until = 0
                   WHERE claim = ?""", (self.clock(), claim)).rowcount

    def _release(self, claim: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE outbox SET claim = NULL, claimed_until = 0 WHERE claim = ?",
                       (claim,))

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")  # readers never wait for a writer
            db.executescript(_SCHEMA)
            self._local.db = db
        return db

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        db = self._connection()
        db.execute("BEGIN IMMEDIATE")  # the write lock first: two drains never claim the same rows
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")


def _encode(item: Item) -> str:
    return json.dumps(asdict(item))


def _decode(text: str) -> Item:
    return Item(**json.loads(text))
