"""Revising the notes: a reviser names lines, code applies the edits.

The embedded reviser does the one revision that needs no language model: when
a line just added says what an older line says, the older one goes. A model
backed reviser (any ``Reviser``) may also replace lines; either way
``NotesFile.apply`` keeps every line not named byte for byte.

>>> lines = ["Node 20 only on the VPS", "Node 20 only on the VPS host"]
>>> DuplicateReviser().revise(lines, added=lines[1:])
[Edit(line=1, action='remove', text='', old='Node 20 only on the VPS')]
"""

from __future__ import annotations

from collections.abc import Sequence

from .notes import one_line
from ._words.text import stems
from .types import Edit


class DuplicateReviser:
    """Removes older lines that a newly added line repeats (``overlap``: the share of the older line's
    words it holds, 0.8 by default).

    An added line is found by its text, and only the lines above it are older:
    another process may have appended after it, and a line appended later is
    never removed for repeating an earlier one (two retains would remove each
    other's lines).
    """

    def __init__(self, overlap: float = 0.8) -> None:
        self.overlap = overlap

    def revise(self, lines: Sequence[str], added: Sequence[str]) -> list[Edit]:
        new = added_at(lines, added)
        if not new:
            return []
        added_stems = {number: stems(lines[number - 1]) for number in new}
        edits: list[Edit] = []
        for number, line in enumerate(lines[: max(new) - 1], start=1):
            if number in new or not line.strip() or line.lstrip().startswith("#"):
                continue
            old = stems(line)
            if old and any(at > number and len(old & added_stems[at]) / len(old) >= self.overlap for at in new):
                edits.append(Edit(number, "remove", old=line))
        return edits


def added_at(lines: Sequence[str], added: Sequence[str]) -> set[int]:
    """The line numbers (1-based) of the added lines: the last line reading each, if any does.

    >>> added_at(["a", "b", "a", "c"], ["a", "gone"])
    {3}
    """
    last = {line: number for number, line in enumerate(lines, start=1)}
    return {last[text] for text in map(one_line, added) if text in last}
