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

A row that cannot be sent is parked with its reason, not retried for ever
and not in the way of the others: one that no longer decodes, or one the
store fails on with an error that is not the service being away (sent alone
after its batch failed, so one bad item does not hold back nineteen good
ones). A damaged outbox file is set aside, never deleted, and started afresh.

Delivered means gone: once the store confirmed an item, its row keeps only
a digest of what was sent (so putting the same item again queues nothing),
never its text, and SQLite overwrites the freed bytes (``secure_delete``).

Two processes may drain at once (two hooks ending together): each claims
its batch for a lease that ends with its deadline, so when both succeed no
item is sent twice, and a drain abandoned at its deadline (its process
exits, or it was killed) holds nothing past it. What a drain sent without
hearing the answer (a timeout, an error, a drain abandoned mid-send) is in
doubt: before sending it again, the outbox asks a store that can tell
(``ConfirmingStore``) which of it it already holds, so a late answer never
makes an item go up twice.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from attrs import asdict

from ..errors import ConfigurationError, ServiceUnavailable
from .._fs.files import is_damaged_database, private_file, set_aside
from ..types import ConfirmingStore, Item, Store

if TYPE_CHECKING:
    import sqlite3  # imported on first use: every hook opens the services, few reach the outbox

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    id TEXT PRIMARY KEY,          -- the item's id: one row per item, ever
    item TEXT NOT NULL,           -- the version waiting to be sent, as JSON; '' once the store took it
    sent TEXT,                    -- the digest of the version the store confirmed (never its text)
    queued_at REAL NOT NULL,
    sent_at REAL,
    claim TEXT,                   -- the drain sending it now, if any
    claimed_until REAL NOT NULL DEFAULT 0,
    parked TEXT,                  -- why the row is no longer sent; NULL: it is
    doubt INTEGER NOT NULL DEFAULT 0  -- 1: sent once without an answer; the store may hold it already
);
"""
# Outboxes made by earlier releases lack the later columns, and kept what was delivered (``sent``
# held the item's JSON): on open they get the columns, and delivered text is dropped.
_ADDED = {"parked": "ALTER TABLE outbox ADD COLUMN parked TEXT",
          "doubt": "ALTER TABLE outbox ADD COLUMN doubt INTEGER NOT NULL DEFAULT 0"}
_VERSION = 1  # PRAGMA user_version of an outbox in this shape
_WAITING = "item != '' AND parked IS NULL"


class Outbox:
    """A queue of items for the store, kept in SQLite at *path*."""

    def __init__(self, path: Path, *, batch: int = 20, clock: Callable[[], float] = time.time,
                 on_damage: Callable[[Path, Path], None] | None = None) -> None:
        self.path = Path(path)
        self.on_damage = on_damage  # told when a damaged file was set aside and a new one made
        self.batch = batch
        self.clock = clock
        # One connection, opened on first use (recall never needs one), shared by the threads the
        # pipeline runs its stages and calls in; a statement or transaction holds the lock.
        self._db: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    def put(self, items: Sequence[Item]) -> None:
        """Queue *items*. An item the store already has, as it is, is not sent again;
        one whose text changed is."""
        now = self.clock()
        rows = [{"id": item.id, "item": _encode(item), "digest": _digest(_encode(item)), "now": now}
                for item in items]

        def insert() -> None:
            with self._transaction() as db:
                # The version the store already took waits for nothing (''); another one waits.
                db.executemany(
                    """INSERT INTO outbox (id, item, queued_at) VALUES (:id, :item, :now)
                       ON CONFLICT (id) DO UPDATE SET
                           item = CASE WHEN outbox.sent IS :digest THEN '' ELSE excluded.item END,
                           queued_at = excluded.queued_at, claim = NULL, claimed_until = 0,
                           parked = NULL, doubt = 0
                       WHERE outbox.item IS NOT (CASE WHEN outbox.sent IS :digest THEN ''
                                                 ELSE excluded.item END)""", rows)

        self._healing(insert)

    def drain(self, store: Store, *, timeout: float) -> int:
        """Send pending items to *store* until none are left or *timeout* seconds have
        passed; returns how many were sent.

        A ``ServiceUnavailable`` from the store stops the drain and is raised, so
        the caller's breaker hears of it; the unsent items stay pending.
        """
        deadline = self.clock() + timeout
        sent = 0
        while (remaining := deadline - self.clock()) > 0:
            # The lease ends with the deadline: past it this drain sends nothing, so a drain
            # abandoned there (its process gone) holds nothing back.
            claim, items, doubtful = self._healing(lambda: self._claim(until=deadline))
            if not items:
                break
            try:
                held = self._held(store, [item for item in items if item.id in doubtful], remaining)
                sent += self._mark_sent(claim, held)
                items = [item for item in items if item not in held]
                if items:
                    store.add(items, timeout=max(0.0, deadline - self.clock()))
            except (ServiceUnavailable, ConfigurationError):
                self._release(claim)  # the service is away or refuses us: the next drain sends them
                raise
            except Exception:
                sent += self._one_by_one(store, claim, items, deadline)
                continue
            except BaseException:
                self._release(claim)
                raise
            sent += self._mark_sent(claim, items)
        if sent:
            self._healing(self._checkpoint)
        return sent

    def _checkpoint(self) -> None:
        # The write-ahead log still holds the delivered texts' pages: fold it into the file and empty it.
        with self._lock:
            self._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @staticmethod
    def _held(store: Store, doubtful: Sequence[Item], timeout: float) -> list[Item]:
        """Which of the items sent without an answer the store holds already, when it can tell."""
        if not doubtful or not isinstance(store, ConfirmingStore):
            return []
        held = store.held(doubtful, timeout=timeout)
        return [item for item in doubtful if item.id in held]

    def _one_by_one(self, store: Store, claim: str, items: Sequence[Item], deadline: float) -> int:
        """Send a failed batch's items alone: the one the store cannot take is parked, the rest go."""
        sent = 0
        for item in items:
            if (remaining := deadline - self.clock()) <= 0:
                break
            try:
                store.add([item], timeout=remaining)
            except (ServiceUnavailable, ConfigurationError):
                self._release(claim)
                raise
            except Exception as error:
                self._park(item.id, f"{type(error).__name__}: {error}")
                continue
            sent += self._mark_sent(claim, [item])
        self._release(claim)  # what the deadline left unsent
        return sent

    def parked(self) -> dict[str, str]:
        """The rows no longer sent, by id, with why."""
        with self._lock:
            return dict(self._connection().execute("SELECT id, parked FROM outbox WHERE parked IS NOT NULL"))

    def pending(self) -> int:
        """How many items wait to be sent."""
        def count() -> int:
            with self._lock:
                return int(self._connection().execute(f"SELECT count(*) FROM outbox WHERE {_WAITING}").fetchone()[0])

        return self._healing(count)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _claim(self, until: float) -> tuple[str, list[Item], set[str]]:
        """A batch for this drain: its claim, its items, and the ids of those in doubt."""
        import uuid

        claim = uuid.uuid4().hex
        now = self.clock()
        with self._transaction() as db:
            # A claim still set but expired was left by a drain abandoned mid-send: in doubt too.
            rows = db.execute(
                f"""SELECT id, item, doubt OR claim IS NOT NULL FROM outbox
                   WHERE {_WAITING} AND claimed_until < ?
                   ORDER BY queued_at, rowid LIMIT ?""", (now, self.batch)).fetchall()
            db.executemany("UPDATE outbox SET claim = ?, claimed_until = ? WHERE id = ?",
                           [(claim, until, row_id) for row_id, _, _ in rows])
        items = []
        for row_id, text, _ in rows:
            try:
                items.append(_decode(text))
            except (ValueError, TypeError) as error:  # junk in the row: it can never be sent
                self._park(row_id, f"cannot be decoded: {type(error).__name__}: {error}")
        return claim, items, {row_id for row_id, _, doubt in rows if doubt}

    def _mark_sent(self, claim: str, items: Sequence[Item]) -> int:
        """The store took *items*: their text goes, a digest of it stays."""
        # Only rows still under this claim: a put that changed an item meanwhile
        # dropped the claim, so its new text stays pending.
        now = self.clock()
        with self._transaction() as db:
            return sum(db.execute(
                """UPDATE outbox SET item = '', sent = ?, sent_at = ?, claim = NULL, claimed_until = 0,
                       doubt = 0
                   WHERE claim = ? AND id = ?""",
                (_digest(_encode(item)), now, claim, item.id)).rowcount for item in items)

    def _park(self, item_id: str, why: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE outbox SET parked = ?, claim = NULL, claimed_until = 0 WHERE id = ?",
                       (why[:500], item_id))

    def _release(self, claim: str) -> None:
        # Released after a send without an answer: the store may have taken them all the same.
        with self._transaction() as db:
            db.execute("UPDATE outbox SET claim = NULL, claimed_until = 0, doubt = 1 WHERE claim = ?",
                       (claim,))

    def _connection(self) -> sqlite3.Connection:
        db = self._db
        if db is None:
            import sqlite3

            private_file(self.path)
            # check_same_thread off: the stages and their calls run in threads (budget.within).
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            try:
                db.execute("PRAGMA journal_mode=WAL")  # readers never wait for a writer
                db.execute("PRAGMA secure_delete=ON")  # a delivered text's bytes are overwritten, not left free
                db.executescript(_SCHEMA)
                if db.execute("PRAGMA user_version").fetchone()[0] < _VERSION:
                    _upgrade(db)
            except BaseException:
                db.close()
                raise
            self._db = db
        return db

    def _healing(self, work: Callable[[], T]) -> T:
        """``work``; on a damaged file, once more on a new one, the old one set aside (never deleted)."""
        import sqlite3

        try:
            return work()
        except sqlite3.DatabaseError as error:
            if not is_damaged_database(error):
                raise
        self.close()
        aside = set_aside(self.path)
        if self.on_damage is not None:
            self.on_damage(self.path, aside)
        return work()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock, _immediate(self._connection()) as db:
            yield db


@contextlib.contextmanager
def _immediate(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction that takes the write lock first: two drains never claim the same rows."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _upgrade(db: sqlite3.Connection) -> None:
    """An outbox of an earlier release in today's shape: the later columns, and no delivered text."""
    with _immediate(db):  # two processes opening it at once: one upgrades, the other sees it done
        if db.execute("PRAGMA user_version").fetchone()[0] < _VERSION:
            columns = {column[1] for column in db.execute("PRAGMA table_info(outbox)")}
            for name, added in _ADDED.items():
                if name not in columns:
                    db.execute(added)
            db.create_function("digest", 1, _digest, deterministic=True)
            # ``sent`` held the delivered item's JSON: the text goes, its digest stays.
            db.execute("UPDATE outbox SET item = '' WHERE sent = item")
            db.execute("UPDATE outbox SET sent = digest(sent) WHERE sent LIKE '{%'")
            db.execute(f"PRAGMA user_version = {_VERSION}")


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _encode(item: Item) -> str:
    return json.dumps(asdict(item))


def _decode(text: str) -> Item:
    return Item(**json.loads(text))
