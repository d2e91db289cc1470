"""Revising the notes: a reviser names lines, code applies the edits.

The embedded reviser does the one revision that needs no language model: when
a line just added says what an older line says, the older one goes. A model
backed reviser (any ``Reviser``) may also replace lines; either way
``NotesFile.apply`` keeps every line not named byte for byte.

>>> lines = ["Node 20 only on the VPS", "Node 20 only on the VPS host"]
>>> DuplicateReviser().revise(lines, added=lines[1:])
[Edit(line=1, action='remove', text='')]
"""

from __future__ import annotations

from collections.abc import Sequence

from .text import content_words, stem
from .types import Edit


def _stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)}


class DuplicateReviser:
    """Removes older lines that a newly added line repeats (most of its words)."""

    def __init__(self, overlap: float = 0.8) -> None:
        self.overlap = overlap

    def revise(self, lines: Sequence[str], added: Sequence[str]) -> list[Edit]:
        new = [_stems(line) for line in added]
        older = len(lines) - len(added)  # the added lines are the last ones
        edits: list[Edit] = []
        for number, line in enumerate(lines[:older], start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            old = _stems(line)
            if old and any(len(old & n) / len(old) >= self.overlap for n in new):
                edits.append(Edit(number, "remove"))
        return edits
