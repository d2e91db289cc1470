"""What a line of a notes file is: read by the notes and by their index alike, below both."""

from __future__ import annotations


def split_lines(text: str) -> list[str]:
    """The lines of a notes file's text.

    Only "\n" ends a line: str.splitlines() would also cut at \x0c, \u2028 and
    the like, and the next write would then change a line nobody named.
    """
    if not text:
        return []
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def is_note(line: str) -> bool:
    """A line that holds a note: not blank, not a heading (``#``)."""
    return bool(line.strip()) and not line.lstrip().startswith("#")
