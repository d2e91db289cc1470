"""A full-text index of the notes: a searching message judges tens of notes, not thousands.

The notes file stays the truth; the index is a cache beside it
(``notes.index.sqlite``, SQLite FTS5 with BM25, as the embedded store), safe to
delete. It follows the file's content: whenever the file's size, mtime,
ctime or inode differs from what it last indexed, it compares the content
(a CRC of it) and, when that changed, brings itself in step: when lines were
only appended (what retain does) it reads the new tail alone; after an edit
it diffs the file's lines against those it holds, one row per distinct line,
keyed by the line's text. The ctime is what sees an edit in place that keeps
the size and sets the mtime back (``touch -r``, an editor restoring it):
every write changes it and no program can set it. A file written less than
two seconds before it was indexed has its content checked on every read (a
second write in the same clock tick could leave the same stamp). Reading the
whole file on every message instead would cost a million-line file about
half a second.

>>> with NotesIndex(Path("notes.md")) as index:
...     index.sync()            # the number of lines of notes.md, index in step
...     index.search("why did we pick Stripe over Mollie?", limit=50)
20001
[(412, 'Payments: Stripe over Mollie: official v2 provider.'), ...]
"""

from __future__ import annotations

import contextlib
import os
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .._fs.files import locked, open_regular, private_file
from .lines import count_lines, is_note, readable, split_lines
from .._runtime.bounds import query_terms
from .._words.text import content_words
from ..stores.sqlite import match_any

if TYPE_CHECKING:
    import sqlite3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS indexed (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, inode INTEGER NOT NULL,
    crc INTEGER NOT NULL, lines INTEGER NOT NULL, racy INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, line TEXT NOT NULL UNIQUE, number INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(
    line, content='notes', content_rowid='id', tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS notes_ad AFTER DELETE ON notes BEGIN
    INSERT INTO notes_fts(notes_fts, rowid, line) VALUES ('delete', old.id, old.line);
END;
"""

COMMON = 1000  # lines a term may match and still narrow anything (see NotesIndex.search)
RANKED = 4000  # matches ranked at most by one search
SCHEMA_VERSION = 2  # 2: the ctime in the stamp, lines as they leave the notes (readable)
Stamp = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode: a file replaced or written differs in one


class NotesIndex:
    """The FTS5 index of one notes file, beside it; one connection, closed on leaving ``with``."""

    def __init__(self, notes: Path) -> None:
        self.notes = notes
        self.path = notes.with_name(notes.stem + ".index.sqlite")
        self._db: sqlite3.Connection | None = None

    def __enter__(self) -> NotesIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def exists(self) -> bool:
        return self.path.exists()

    def sync(self, *, inline_bytes: int | None = None) -> int:
        """Bring the index in step with the notes file; return how many lines the file has.

        With ``inline_bytes``, a file of more bytes than that which changed is
        brought in step by a detached process started here (reading a million
        lines costs seconds): the index is read as it was meanwhile, and the
        count is the one it last recorded (0 for an index not built yet).
        """
        return _in_step(self._connection(), self.notes, inline_bytes)

    def search(self, query: str, *, limit: int) -> list[tuple[int, str]]:
        """The ``limit`` note lines that best match the query's words, as (line number, line),
        in file order. Call ``sync`` first: this reads the index as it is.

        BM25 costs per line that matches, and in a million lines "over" or "pick"
        match a third of them: a term in more than ``COMMON`` lines is left out
        while a rarer one is asked, and at most the ``RANKED`` newest matches are ranked.
        """
        db = self._connection()
        terms = [match for term in query_terms(content_words(query)) if (match := match_any(term))]
        rare = [term for term in terms if db.execute(
            "SELECT count(*) FROM (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ? LIMIT ?)",
            (term, COMMON + 1)).fetchone()[0] <= COMMON]
        if not terms:
            return []
        match = " OR ".join(rare or terms)
        oldest = db.execute("SELECT rowid FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                            (match, RANKED - 1)).fetchone()
        # The best rowids first, then their lines: ranking a join costs more.
        rows = db.execute(
            "SELECT number, line FROM notes WHERE id IN (SELECT rowid FROM notes_fts"
            " WHERE notes_fts MATCH ? AND rowid >= ? ORDER BY rank LIMIT ?)",
            (match, oldest[0] if oldest else 0, limit)).fetchall()
        return sorted(rows)

    def every(self) -> list[tuple[int, str]]:
        """Every note line the index holds, as (line number, line), in file order (call ``sync`` first)."""
        return self._connection().execute("SELECT number, line FROM notes ORDER BY number").fetchall()

    def _connection(self) -> sqlite3.Connection:
        import sqlite3  # only for a notes file past the narrowing threshold

        if self._db is None:
            # Taking turns: two connections making a new index at once, or one setting aside a file
            # another is making, leave it malformed (threads of one process, or two hooks).
            with locked(self.path):
                try:
                    self._db = self._open()
                except sqlite3.OperationalError:  # busy, or a folder that cannot be written: not the file's fault
                    raise
                except sqlite3.DatabaseError:  # not an index we can read: it is a cache, build it anew
                    self.path.unlink(missing_ok=True)
                    self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        import sqlite3

        private_file(self.path)  # owner only, as the notes; SQLite gives its journals the same mode
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:  # a new file
                # A cache: a commit need not wait for the disk (WAL keeps it whole on a crash, at
                # worst a little behind, and then the stamp says so); readers never wait on a sync.
                db.executescript(f"PRAGMA journal_mode=WAL; {_SCHEMA} PRAGMA user_version={SCHEMA_VERSION};")
            elif version != SCHEMA_VERSION:
                raise sqlite3.DatabaseError(f"{self.path}: an index of another version ({version})")
            db.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            db.close()
            raise
        return db


class _Indexed(NamedTuple):
    """The file as last indexed. ``racy``: it was written so shortly before that a write in the
    same clock tick, of the same size, would show the same stamp; its content is checked then."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    crc: int
    lines: int
    racy: bool

    @property
    def stamp(self) -> Stamp:
        return self.size, self.mtime_ns, self.ctime_ns, self.inode


RACY_NS = 2_000_000_000  # mtimes can be as coarse as 2 s (FAT, some network file systems)


def _indexed(db: sqlite3.Connection) -> _Indexed | None:
    row = db.execute("SELECT size, mtime_ns, ctime_ns, inode, crc, lines, racy FROM indexed").fetchone()
    if row is None:
        return None
    size, mtime_ns, ctime_ns, inode, crc, lines, racy = row
    return _Indexed(size, mtime_ns, ctime_ns, inode, crc, lines, bool(racy))


def _stamp(notes: Path) -> Stamp | None:
    try:
        st = os.stat(notes)
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def _in_step(db: sqlite3.Connection, notes: Path, inline_bytes: int | None = None) -> int:
    """Sync the index to the notes file when the file changed since; its line count."""
    last, stamp = _indexed(db), _stamp(notes)
    if last is not None and not last.racy and last.stamp == stamp:
        return last.lines
    if inline_bytes is not None and stamp is not None and stamp[0] > inline_bytes:
        _sync_detached(notes)
        return last.lines if last is not None else 0
    data, now = _read(notes)
    if now == last:  # the content checked, and nothing to record
        return now.lines
    db.execute("BEGIN IMMEDIATE")  # one process syncs at a time; the others find it done
    try:
        # Read again under the index's lock: a writer may have synced a newer file meanwhile,
        # and the file read before must not be recorded over it.
        last, (data, now) = _indexed(db), _read(notes)
        if last is None or (last.stamp, last.crc) != (now.stamp, now.crc):
            if last is not None and _appended_to(data, last):
                _add(db, data[last.size:], first=last.lines + 1)
            else:
                _diff(db, data)
        db.execute("INSERT OR REPLACE INTO indexed VALUES (1, ?, ?, ?, ?, ?, ?, ?)", now)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return now.lines


def _read(notes: Path) -> tuple[bytes, _Indexed]:
    """The file's bytes and what the index would record of them (a missing file: empty)."""
    try:
        with open_regular(notes) as file:  # a FIFO named notes.md must not hang the hook
            st = os.fstat(file.fileno())
            data = file.read()
        stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    except FileNotFoundError:
        data, stamp = b"", (0, 0, 0, 0)
    racy = time.time_ns() - max(stamp[1], stamp[2]) < RACY_NS
    return data, _Indexed(*stamp, zlib.crc32(data), count_lines(data), racy)


def _appended_to(data: bytes, last: _Indexed) -> bool:
    """Is ``data`` the file last indexed with whole lines appended?"""
    size = last.size
    ends_a_line = size == 0 or data[size - 1:size] == b"\n"
    return size <= len(data) and ends_a_line and zlib.crc32(data[:size]) == last.crc


def _notes(lines: list[str], first: int = 1) -> dict[str, int]:
    """Each distinct note line, as it leaves the notes, and the number of its first occurrence.

    Readable: a byte that was not UTF-8 is U+FFFD here (SQLite takes no lone surrogate).
    """
    out: dict[str, int] = {}
    for number, line in enumerate(lines, start=first):
        if is_note(line):
            out.setdefault(readable(line), number)
    return out


def _add(db: sqlite3.Connection, tail: bytes, *, first: int) -> None:
    _insert(db, _notes(split_lines(tail.decode("utf-8", "surrogateescape")), first))


def _diff(db: sqlite3.Connection, data: bytes) -> None:
    """Rows for lines gone are deleted, rows for lines that moved renumbered, new lines added."""
    want = _notes(split_lines(data.decode("utf-8", "surrogateescape")))  # as NotesFile reads them
    gone, moved = [], []
    for id_, line, number in db.execute("SELECT id, line, number FROM notes"):
        now = want.pop(line, None)
        if now is None:
            gone.append((id_,))
        elif now != number:
            moved.append((now, id_))
    db.executemany("DELETE FROM notes WHERE id = ?", gone)
    db.executemany("UPDATE notes SET number = ? WHERE id = ?", moved)
    _insert(db, want)


def _insert(db: sqlite3.Connection, notes: dict[str, int]) -> None:
    """Add lines (those already held stay as they are), then their words to the full-text
    index in one statement: a trigger per row makes building 20,000 lines four times slower."""
    before = db.execute("SELECT coalesce(max(id), 0) FROM notes").fetchone()[0]
    db.executemany("INSERT OR IGNORE INTO notes (line, number) VALUES (?, ?)", notes.items())
    db.execute("INSERT INTO notes_fts (rowid, line) SELECT id, line FROM notes WHERE id > ?", (before,))


# -- in the background ----------------------------------------------------------------

INLINE_BYTES = 4_000_000  # a changed file past this (about 30,000 notes) is indexed off the message's path


def _sync_detached(notes: Path) -> None:
    """Start ``python -m memsift._notes.index NOTES`` in its own session, unless one is at it."""
    with _syncing(notes) as free:
        if not free:
            return
    import subprocess
    import sys

    subprocess.Popen([sys.executable, "-m", "memsift._notes.index", str(notes)], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


@contextlib.contextmanager
def _syncing(notes: Path) -> Iterator[bool]:
    """Hold ``notes.index.sqlite.sync`` if no other process does: whether it was free."""
    import fcntl

    fd = os.open(NotesIndex(notes).path.with_suffix(".sqlite.sync"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
        else:
            yield True
    finally:
        os.close(fd)


def main(argv: list[str]) -> int:
    """The detached sync: ``python -m memsift._notes.index NOTES``."""
    notes = Path(argv[0])
    with _syncing(notes) as free:
        if free:
            with NotesIndex(notes) as index:
                index.sync()
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
