"""What a line of a notes file is: read by the notes and by their index alike, below both."""

from __future__ import annotations

import re

from .._runtime.bounds import NOTE_CHARS

# The tail retain writes after a fact: "(decision 2026-12-01 ex-3f2a9c1b)".
_TAIL = re.compile(r"\s\(([a-z_]+) (\d{4}-\d{2}-\d{2}) (ex-[0-9a-f]+)\)$")


def count_lines(data: bytes) -> int:
    """How many lines the bytes of a notes file hold, a last one without its newline included."""
    return data.count(b"\n") + (not data.endswith(b"\n") and bool(data))


def split_lines(text: str) -> list[str]:
    """The lines of a notes file's text.

    Only "\n" ends a line: str.splitlines() would also cut at \x0c, \u2028 and
    the like, and the next write would then change a line nobody named.
    """
    if not text:
        return []
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def is_note(line: str) -> bool:
    """A line that holds a note: not blank, not a heading (``#``), and not past the note cap.

    A line longer than ``NOTE_CHARS`` (a whole answer or a log pasted on one
    line) stays in the file, byte for byte, but is never judged nor added: what
    would reach the agent is a fragment of it.

    >>> is_note("decision: Stripe over Mollie"), is_note("# Payments"), is_note("x" * 50_000_000)
    (True, False, False)
    """
    return len(line) <= NOTE_CHARS and bool(line.strip()) and not line.lstrip().startswith("#")


def readable(line: str) -> str:
    """A line as it leaves the notes (to the index, a decider, the agent): each byte that was not
    UTF-8 (read as a lone surrogate) shows as U+FFFD, which every encoder takes."""
    if line.isascii():
        return line
    return line.encode("utf-8", "surrogateescape").decode("utf-8", "replace")



def fact_of(line: str) -> str:
    """A note line without the tail retain writes after its fact: what the line says.

    >>> fact_of("We cap uploads at 25 MB. (constraint 2026-12-01 ex-3f2a9c1b)")
    'We cap uploads at 25 MB.'
    """
    return _TAIL.sub("", line.rstrip())


def tail_of(line: str) -> tuple[str, str, str] | None:
    """What the tail retain writes after a fact says: (category, day, pointer); None without one.

    >>> tail_of("We cap uploads at 25 MB. (constraint 2026-12-01 ex-3f2a9c1b)")
    ('constraint', '2026-12-01', 'ex-3f2a9c1b')
    """
    found = _TAIL.search(line.rstrip())
    return (found[1], found[2], found[3]) if found else None
