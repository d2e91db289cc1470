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

from collections.abc import Sequence
from pathlib import Path

from .files import locked, write_atomically
from .types import Edit, Exchange, Item


def note_id(text: str) -> str:
    """A note's id follows its text, so it survives lines moving around."""
    import hashlib  # only once notes are read: a quiet message never gets here

    return "note-" + hashlib.sha1(text.strip().encode()).hexdigest()[:12]


def exchange_id(exchange: Exchange) -> str:
    """The id a kept exchange has in the store, and the pointer its note line carries."""
    import hashlib

    whole = f"{exchange.user}\n\n{exchange.assistant}".strip().encode()
    return "ex-" + hashlib.sha1(whole).hexdigest()[:8]


def one_line(text: str) -> str:
    """Fold a text onto one line: a note is one line, whatever was said."""
    return " ".join(text.split())


class NotesFile:
    """A ``Notebook`` backed by one text file. Lines starting with ``#`` are headings."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def lines(self) -> list[str]:
        try:
            with open(self.path, encoding="utf-8", newline="") as notes:
                text = notes.read()
        except FileNotFoundError:
            return []
        # Only "\n" ends a line: str.splitlines() would also cut at \x0c, \u2028 and
        # the like, and the next write would then change a line nobody named.
        if not text:
            return []
        return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")

    def items(self) -> list[Item]:
        return [
            Item(note_id(line), line.strip(), "note", f"{self.path.name}:{number}")
            for number, line in enumerate(self.lines(), start=1)
            if line.strip() and not line.lstrip().startswith("#")
        ]

    def append(self, lines: Sequence[str]) -> None:
        new = [one_line(line) for line in lines if line.strip()]
        if not new:
            return
        with locked(self.path):
            self._write(self.lines() + new)

    def apply(self, edits: Sequence[Edit]) -> None:
        """Replace or remove the lines the edits name; every other line stays as it is.

        Edits naming a line that does not exist are ignored: a reviser may be
        wrong, the notes must not suffer for it.
        """
        with locked(self.path):
            self._write(apply_edits(self.lines(), edits))

    def _write(self, lines: list[str]) -> None:
        write_atomically(self.path, "".join(line + "\n" for line in lines))


def apply_edits(lines: Sequence[str], edits: Sequence[Edit]) -> list[str]:
    """Lines with the edits applied (1-based line numbers into ``lines``).

    >>> apply_edits(["a", "b", "c"], [Edit(2, "remove"), Edit(3, "replace", "C")])
    ['a', 'C']
    """
    by_line = {edit.line: edit for edit in edits if 1 <= edit.line <= len(lines)}
    out: list[str] = []
    for number, line in enumerate(lines, start=1):
        edit = by_line.get(number)
        if edit is None:
            out.append(line)
        elif edit.action == "replace" and edit.text.strip():
            out.append(one_line(edit.text))
    return out
