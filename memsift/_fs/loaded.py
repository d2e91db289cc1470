"""What the agent already has in its context from files it loads itself (CLAUDE.md, AGENTS.md).

An item those files already state is not added again. Their text is split
into passages (paragraphs; a list item or a heading is a passage of its own),
and each passage counts like one turn of the conversation already said.

>>> passages([Path("CLAUDE.md")])
['# Payments', '- Stripe over Mollie: Mollie dropped webhooks under load.']

Read only when recall is about to add something: a quiet message never opens them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from .files import read_regular

_LARGEST = 256 * 1024  # an instruction file is a few KiB; a bigger one is not read whole
_BREAK = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)]|#)\s)")  # a blank line, or a list item or heading


def passages(paths: Iterable[Path]) -> list[str]:
    """The passages of the files that exist among *paths*; unreadable ones are skipped."""
    out: list[str] = []
    for path in paths:
        try:  # a FIFO named CLAUDE.md must not hang the hook: regular files only
            text = read_regular(path, _LARGEST).decode("utf-8", "replace")
        except OSError:  # missing (the usual case), a folder, a FIFO, no permission
            continue
        out += [chunk.strip() for chunk in _BREAK.split(text) if chunk.strip()]
    return out
