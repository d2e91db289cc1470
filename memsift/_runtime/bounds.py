"""Bounds on the work one message costs: inputs are cut to size before anything costly runs.

A pasted log of a megabyte, a prompt of five, a note line holding a whole
long answer: the redactor, the decider and the store would each pay for
every character. What a path reads of a text is its head and its tail (a
question usually opens or closes what was pasted), redacted window by
window, so that redaction too costs the same for 10 KB and for 10 MB.

>>> len(bounded("x" * 5_000_000, 8000, str))   # head and tail, and a mark where the cut is
8035
>>> bounded("why Stripe?", 8000, str.upper)      # a short text is read whole
'WHY STRIPE?'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

MESSAGE_CHARS = 8000  # of the message: the decider and the store query read this much
TURN_CHARS = 8000  # of each recent turn the decider and the dedupe read
RECENT_TURNS = 4  # what the decider reads of the conversation: the last exchanges
NOTE_CHARS = 4000  # of one note, judged against the message
EXCHANGE_CHARS = 64_000  # of each side of an exchange kept: off the critical path, but not unbounded
QUERY_TERMS = 32  # distinct terms of a store query: each one more is a posting list to merge
# Redacted beyond the cut, so that a credential the cut runs through is still
# recognised whole; a private key's body is longer and handled by its own lines.
_MARGIN = 1024
_GAP = "\n[… {} characters left out …]\n"
_PEM_END = r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"  # compiled by re on first use only
_PEM_BEGIN = "-----BEGIN"


def bounded(text: str, limit: int, redact: Callable[[str], str]) -> str:
    """``redact(text)`` when the text is short, else its redacted head and tail, ``limit`` in all.

    The cut falls between lines where one is near. Nothing between the head
    and the tail is read, so nothing of it can leave the machine.
    """
    text = _encodable(text)
    if len(text) <= limit:
        return redact(text)
    half = limit // 2
    head = redact(text[: half + _MARGIN])[:half]
    tail = redact(_after_cut_key(text[len(text) - half - _MARGIN :]))[-half:]
    head, tail = _at_line(head, from_end=False), _at_line(tail, from_end=True)
    return head + _GAP.format(len(text) - len(head) - len(tail)) + tail


def _encodable(text: str) -> str:
    """The text with each lone surrogate (a JSON payload may hold one) as "?": SQLite, hashes
    and the agent's JSON all need text that encodes to UTF-8."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _after_cut_key(tail: str) -> str:
    """The tail without the body of a private key whose header the cut left out."""
    end = re.search(_PEM_END, tail)
    if end is None or _PEM_BEGIN in tail[: end.start()]:
        return tail
    return "[REDACTED:private-key]" + tail[end.end() :]


def _at_line(piece: str, *, from_end: bool) -> str:
    """Cut ``piece`` at a line break within its last (or first) tenth, when it has one."""
    window = len(piece) // 10
    if from_end:
        newline = piece.find("\n", 0, window)
        return piece[newline + 1 :] if newline != -1 else piece
    newline = piece.rfind("\n", len(piece) - window)
    return piece[: newline + 1] if newline != -1 else piece


def query_terms(terms: Sequence[str], limit: int = QUERY_TERMS) -> list[str]:
    """At most ``limit`` distinct terms, the first and the last met: a question opens or closes a paste.
    Past the limit, bare numbers go first: a log's timestamps and counters name nothing.

    >>> query_terms(["worker", "oom", "worker", "heap"], limit=2)
    ['worker', 'heap']
    >>> query_terms(["epoch", "00", "41", "validation", "oom"], limit=3)
    ['epoch', 'validation', 'oom']
    """
    distinct = list(dict.fromkeys(terms))
    if len(distinct) > limit:
        named = [term for term in distinct if any(c.isalpha() for c in term)]
        distinct = named if len(named) >= limit // 2 else distinct
    if len(distinct) <= limit:
        return distinct
    return distinct[: limit // 2] + distinct[len(distinct) - (limit - limit // 2) :]
