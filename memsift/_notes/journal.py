"""Which lines of the notes are memsift's: a small journal beside them, to see what an editor dropped.

The notes are the user's to edit, and an editor that saves from a buffer
read before memsift appended (by writing a copy and renaming it over)
silently removes memsift's newer lines. The journal,
``notes.journal.json`` beside the notes in the project's folder, holds the
last ``JOURNAL_LINES`` lines memsift put in the notes and has not itself
taken out since (a line the reviser removed or replaced leaves it). A
journal line the notes no longer hold is missing: ``memsift doctor`` says
so, ``memsift notes --restore`` appends them again, and ``memsift notes
--forget-missing`` agrees they are gone. Written under the notes' lock, with
them; a journal that cannot be read is started anew (it only ever names
lines, the notes stay the truth).

>>> journal = NotesJournal(Path("notes.md"))
>>> journal.record(added=["decision: Stripe over Mollie"], removed=[])
>>> journal.missing(["# my own heading"])
['decision: Stripe over Mollie']
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from .._fs.files import read_regular, write_atomically

JOURNAL_LINES = 1000  # an editor's stale buffer drops the lines written while it was open: the newest
_VERSION = 1


class NotesJournal:
    """The journal of one notes file. Call ``record`` and ``forget`` under the notes' lock."""

    def __init__(self, notes: Path) -> None:
        self.path = notes.with_name(notes.stem + ".journal.json")

    def lines(self) -> list[str]:
        """memsift's lines, oldest first."""
        try:
            data = json.loads(read_regular(self.path))
        except (OSError, ValueError):  # none yet, or not one we can read: it is started anew
            return []
        lines = data.get("lines") if isinstance(data, dict) and data.get("version") == _VERSION else None
        return [line for line in lines if isinstance(line, str)] if isinstance(lines, list) else []

    def missing(self, notes: Iterable[str]) -> list[str]:
        """memsift's lines that ``notes`` (the file's lines) no longer hold, oldest first."""
        held = set(notes)
        return [line for line in self.lines() if line not in held]

    def record(self, *, added: Sequence[str], removed: Sequence[str]) -> None:
        """memsift wrote ``added`` to the notes and took ``removed`` out of them."""
        gone = set(removed) | set(added)  # a line written again moves to the end
        self._write([line for line in self.lines() if line not in gone] + list(dict.fromkeys(added)))

    def forget(self, lines: Sequence[str]) -> None:
        """No longer count ``lines`` as memsift's (the user removed them on purpose)."""
        gone = set(lines)
        self._write([line for line in self.lines() if line not in gone])

    def _write(self, lines: list[str]) -> None:
        # The notes are written already: a journal that cannot follow must not fail the write.
        with contextlib.suppress(OSError):
            write_atomically(self.path, json.dumps({"version": _VERSION, "lines": lines[-JOURNAL_LINES:]},
                                                   ensure_ascii=True))
