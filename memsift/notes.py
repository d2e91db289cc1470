"""The project's local notes: a plain text file, one fact per line.

Reached in milliseconds and checked first. Writes are locked and atomic (a
temporary file renamed over the old one), so two hooks finishing at once never
interleave lines and a crash never leaves half a file.

>>> notes = NotesFile(Path("notes.md"))
>>> notes.append(["Payments: Stripe over Mollie: official v2 provider."])
>>> [item.source for item in notes.items()]
['notes.md:1']
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path

from attrs import evolve

from ._runtime.bounds import NOTE_CHARS
from ._fs.files import locked, read_regular, write_atomically
from ._notes.lines import count_lines, is_note, readable, split_lines
from .types import Edit, Exchange, Item


def note_id(text: str) -> str:
    """A note's id follows its text, so it survives lines moving around."""
    import hashlib  # only once notes are read: a quiet message never gets here

    # surrogatepass: a line holding bytes that are not UTF-8 (read as surrogates) has an id too
    return "note-" + hashlib.sha1(text.strip().encode("utf-8", "surrogatepass")).hexdigest()[:12]


def exchange_id(exchange: Exchange) -> str:
    """The id a kept exchange has in the store, and the pointer its note line carries."""
    import hashlib

    whole = f"{exchange.user}\n\n{exchange.assistant}".strip().encode("utf-8", "surrogatepass")
    return "ex-" + hashlib.sha1(whole).hexdigest()[:8]


def one_line(text: str) -> str:
    """Fold a text onto one line: a note is one line, whatever was said."""
    return " ".join(text.split())


class NotesFile:
    """A ``Notebook`` backed by one text file at ``path``. Lines starting with ``#`` are headings."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def lines(self) -> list[str]:
        try:
            # Bytes that are not UTF-8 (a note pasted from a Latin-1 file) are read all the
            # same, as surrogates, and written back byte for byte.
            return split_lines(read_regular(self.path).decode("utf-8", "surrogateescape"))
        except FileNotFoundError:
            return []

    def items(self) -> list[Item]:
        return self._items(enumerate(self.lines(), start=1))

    def newest(self, count: int) -> tuple[list[Item], int]:
        """The newest ``count`` notes, in file order, and how many lines the file has: only those
        lines are decoded and made items (a session brief weighs the newest few of 20,000 lines).

        >>> items, lines = notes.newest(2)
        >>> [item.source for item in items], lines
        (['notes.md:19999', 'notes.md:20000'], 20000)
        """
        try:
            data = read_regular(self.path)
        except FileNotFoundError:
            return [], 0
        lines = count_lines(data)
        numbered: list[tuple[int, str]] = []
        end, number = len(data), lines
        if data.endswith(b"\n"):
            end -= 1
        while end >= 0 and number > 0 and len(numbered) < count:
            start = data.rfind(b"\n", 0, end) + 1
            line = data[start:end].decode("utf-8", "surrogateescape")
            if is_note(line):
                numbered.append((number, line))
            end, number = start - 1, number - 1
        return self._items(reversed(numbered)), lines

    def candidates(self, query: str, *, limit: int, above: int) -> list[Item]:
        """The notes worth judging against ``query``, in file order.

        Every note while the file has at most ``above`` lines; past that, the
        ``limit`` notes whose words best match the query's, from a full-text
        index kept beside the file (``_notes/index.py``), so that judging costs
        the same at 300 notes or a million. A file too big to be ``above``
        short lines (one line of 50 MB) is read through the index too: the
        message reads the index, not the file.

        >>> notes.candidates("why Stripe over Mollie?", limit=50, above=300)
        [Item(id='note-…', text='Payments: Stripe over Mollie…', origin='note', source='notes.md:412')]
        """
        from ._notes.index import INLINE_BYTES, NotesIndex

        with NotesIndex(self.path) as index:
            # A small file is read whole, as it was, and gets no index.
            if not index.exists() and _size(self.path) <= above * NOTE_CHARS:
                lines = self.lines()
                if len(lines) <= above:
                    return self._items(enumerate(lines, start=1))
            if index.sync(inline_bytes=INLINE_BYTES) <= above:
                return self._items(index.every())
            return self._items(index.search(query, limit=limit))

    def _items(self, numbered: Iterable[tuple[int, str]]) -> list[Item]:
        return [Item(note_id(text), text, "note", f"{self.path.name}:{number}")
                for number, line in numbered if is_note(line) and (text := readable(line.strip()))]

    @property
    def keys_path(self) -> Path:
        """``notes.keys`` beside ``notes.md``: each kept fact's keys, a JSON object a line."""
        return self.path.with_name(self.path.stem + ".keys")

    def keys(self) -> dict[str, str]:
        """The words each fact's exchange said (by its pointer): what ranking reads beside its line.
        Written by retain (``add_keys``); a line that is not JSON (a torn write) is skipped."""
        try:
            data = read_regular(self.keys_path).decode("utf-8", "replace")
        except FileNotFoundError:
            return {}
        out: dict[str, str] = {}
        for line in data.splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict):
                    out.update((k, v) for k, v in entry.items() if isinstance(k, str) and isinstance(v, str))
        return out

    def add_keys(self, keys: Mapping[str, str]) -> None:
        """Record the keys of facts about to be appended (``{pointer: words}``), under the notes' lock."""
        if not keys:
            return
        entry = json.dumps(dict(keys), ensure_ascii=False) + "\n"
        with locked(self.path):
            fd = os.open(self.keys_path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "r+b") as out:
                size = os.fstat(fd).st_size
                torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"  # a write cut short: a line of its own
                out.write((("\n" if torn else "") + entry).encode("utf-8"))

    def append(self, lines: Sequence[str]) -> None:
        """Add lines at the end. A line the notes already hold word for word moves to the end
        instead: the notes hold each line once, and two retains of one fact leave no twins
        for a reviser to remove twice."""
        new = list(dict.fromkeys(one_line(line) for line in lines if line.strip()))
        if not new:
            return
        again = set(new)
        self._update(lambda lines: ([line for line in lines if line not in again] + new, new, []))

    def apply(self, edits: Sequence[Edit]) -> list[Edit]:
        """Replace or remove the lines the edits name; every other line stays as it is.

        Under the notes lock, on the file as it is now: an edit lands on its line
        if that still reads ``old``, else on the one line that does (lines moved),
        else nowhere. Returns the edits applied, each with the line it landed on.

        >>> notes.apply([Edit(2, "remove", old="Node 18 on the VPS")])  # line 1 went meanwhile
        [Edit(line=1, action='remove', text='', old='Node 18 on the VPS')]
        """
        placed: dict[int, Edit] = {}

        def edited(lines: list[str]) -> Change | None:
            placed.clear()
            placed.update(place_edits(lines, edits))
            if not placed:
                return None
            added = [one_line(e.text) for e in placed.values() if e.action == "replace" and e.text.strip()]
            return _edited(lines, placed), added, [e.old for e in placed.values()]

        self._update(edited)
        return list(placed.values())

    def restore(self) -> list[str]:
        """Append again memsift's lines that another program's write removed (see ``missing``);
        returns them. ``memsift notes --restore``."""
        from ._notes.journal import NotesJournal

        restored: list[str] = []

        def again(lines: list[str]) -> Change | None:
            restored[:] = NotesJournal(self.path).missing(lines)
            return (lines + restored, restored, []) if restored else None

        self._update(again)
        return restored

    def missing(self) -> list[str]:
        """memsift's lines (the last it wrote, from its journal) that the notes no longer hold:
        what an editor saving from an older copy dropped, or a user removed by hand."""
        from ._notes.journal import NotesJournal

        return NotesJournal(self.path).missing(self.lines())

    def forget_missing(self) -> list[str]:
        """Agree that the missing lines are gone: they are no longer counted as memsift's."""
        from ._notes.journal import NotesJournal

        with locked(self.path):
            gone = self.missing()
            NotesJournal(self.path).forget(gone)
        return gone

    def _update(self, change: Callable[[list[str]], Change | None]) -> None:
        """Write ``change(lines)`` under the notes' lock, from the file as it is now.

        Editors do not take memsift's lock: one that saves while memsift writes
        would lose its lines to memsift's rename, or memsift's to its own. So the
        file is read again, and the change made again, when it differs, just
        before the rename, from the file read (``WRITE_TRIES`` times at most).
        """
        from ._notes.journal import NotesJournal

        with locked(self.path):
            for _ in range(WRITE_TRIES):
                before = _identity(self.path)
                made = change(self.lines())
                if made is None:
                    return
                lines, added, removed = made
                if write_atomically(self.path, "".join(line + "\n" for line in lines),
                                    unchanged=partial(_is_still, self.path, before)):
                    NotesJournal(self.path).record(added=added, removed=removed)
                    self._index_in_step()
                    return
        raise OSError(f"{self.path} changed on every one of {WRITE_TRIES} writes: written by another program")

    def _index_in_step(self) -> None:
        """Once the notes are narrowed, whoever writes them syncs their index (retain runs off
        the agent's path), so the message after finds it in step."""
        from ._notes.index import NotesIndex

        with NotesIndex(self.path) as index:
            if index.exists():
                import sqlite3

                # The notes are written: a cache that cannot follow must not fail the retain
                # (its store sync would not run); the next recall syncs it.
                with contextlib.suppress(sqlite3.Error, OSError):
                    index.sync()


WRITE_TRIES = 5
Change = tuple[list[str], list[str], list[str]]  # the notes' new lines; memsift's lines added, removed


def _identity(path: Path) -> tuple[int, int, int, int, int] | None:
    """What changes when any program writes the file or renames another over it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _is_still(path: Path, identity: tuple[int, int, int, int, int] | None) -> bool:
    return _identity(path) == identity


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def place_edits(lines: Sequence[str], edits: Sequence[Edit]) -> dict[int, Edit]:
    """Where each of ``edits`` lands in ``lines``: ``{line number: the edit, renumbered}``.

    On its own line if that still reads ``old``; else on the one line that
    reads ``old``; else (gone, changed, or now ambiguous) nowhere. The first
    edit to land on a line has it; an unknown action lands nowhere.

    >>> place_edits(["new", "a", "b"], [Edit(1, "remove", old="a"), Edit(3, "remove", old="gone")])
    {2: Edit(line=2, action='remove', text='', old='a')}
    """
    numbers: dict[str, list[int]] | None = None  # text -> its line numbers, built when an edit moved
    placed: dict[int, Edit] = {}
    for edit in edits:
        if edit.action not in ("replace", "remove"):
            continue
        number: int | None = edit.line
        if not (1 <= edit.line <= len(lines) and lines[edit.line - 1] == edit.old):
            if numbers is None:
                numbers = {}
                for n, line in enumerate(lines, start=1):
                    numbers.setdefault(line, []).append(n)
            where = numbers.get(edit.old, [])
            number = where[0] if len(where) == 1 else None
        if number is not None and number not in placed:
            placed[number] = edit if number == edit.line else evolve(edit, line=number)
    return placed


def apply_edits(lines: Sequence[str], edits: Sequence[Edit]) -> list[str]:
    """The ``lines`` with the ``edits`` applied where they land (see ``place_edits``).

    >>> apply_edits(["a", "b", "c"], [Edit(2, "remove", old="b"), Edit(3, "replace", "C", old="c")])
    ['a', 'C']
    """
    return _edited(lines, place_edits(lines, edits))


def _edited(lines: Sequence[str], placed: dict[int, Edit]) -> list[str]:
    out: list[str] = []
    for number, line in enumerate(lines, start=1):
        edit = placed.get(number)
        if edit is None:
            out.append(line)
        elif edit.action == "replace" and edit.text.strip():
            out.append(one_line(edit.text))
    return out
