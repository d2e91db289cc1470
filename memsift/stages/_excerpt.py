"""A long item judged and shown by its best sentences, never by its length.

An item from elsewhere (a Cognee dataset fed by other tools, an exchange a
store kept whole) can run to pages; the judge's features and the few lines
recall adds are made for a fact. Such an item is cut to the sentences that
share the most of the message's words, in the order they were written:

>>> excerpt(long_exchange, "why Postgres advisory locks?")
'We use Postgres advisory locks instead of Redis locks, because a lock must die with its connection.'
"""

from __future__ import annotations

from .._words.text import stems
from ._distill import clauses

EXCERPT_ABOVE = 600  # an item this long is not a fact: it is cut (hand-written passages stay under it)
EXCERPT_CHARS = 300  # the sentences kept of it


def excerpt(text: str, query: str) -> str:
    """``text`` when it is short; else its sentences sharing most of ``query``'s words, up to
    ``EXCERPT_CHARS``, in their order, joined by " … "."""
    if len(text) <= EXCERPT_ABOVE:
        return text
    pieces = clauses(text)
    wanted = stems(query)
    shared = [len(wanted & stems(piece)) for piece in pieces]
    chosen: list[int] = []
    room = EXCERPT_CHARS
    for i in sorted(range(len(pieces)), key=lambda i: (-shared[i], i)):
        if chosen and not shared[i]:
            break  # past the sentences on the message's subject
        if len(pieces[i]) <= room:
            chosen.append(i)
            room -= len(pieces[i]) + 3
    if not chosen:  # one sentence longer than the room: its head
        return pieces[0][:EXCERPT_CHARS - 1].rstrip() + "…" if pieces else text[:EXCERPT_CHARS]
    return " … ".join(pieces[i] for i in sorted(chosen))
