"""A kept exchange, distilled to the one line a person would write in the notes.

Code cuts the exchange into clauses; the decider answers one single-item
question per clause (does it state what is worth keeping?), as it judges
every note and passage alone; code assembles the line from the best clauses:
the fact itself first, then its category, the day and a pointer back to the
whole exchange, which the store keeps.

>>> clauses("Yes: we cap uploads at 25 MB because Vercel rejects bigger bodies. Done, thanks!")
['we cap uploads at 25 MB because Vercel rejects bigger bodies.']
>>> fact = "We cap uploads at 25 MB because Vercel rejects bigger bodies."
>>> note_line([fact], "constraint", "2026-12-01", "ex-3f2a9c1b")
'We cap uploads at 25 MB because Vercel rejects bigger bodies. (constraint 2026-12-01 ex-3f2a9c1b)'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._words.text import STOPWORDS
from ..redact import PLACEHOLDER_START

FACT = ("Does this clause state what is worth remembering from the exchange: a choice and its reason, "
        "a limit, or a problem and its fix?")
CHOSEN_CHARS = 170  # the clauses chosen for a line, before it is cut to make room for its names
FACT_CHARS = 163  # the fact part of a line, its names included: with its tail (category, day, pointer) < 200
NAMES_CHARS = 50  # at most this much of the fact part goes to the names its clauses leave out
NAMES = 4
CLAUSE_CHARS = 200  # a longer sentence is cut at its semicolons, colons, dashes, then before "so", "but"...
_MIN_CHARS = 24  # shorter pieces ("Done.", "Yes:") say nothing alone

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_CODE = re.compile(r"`[^`\n]*`")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])|\n+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_BREAKS = (re.compile(r"(?<=;)\s+"), re.compile(r"(?<=:)\s+(?=\S)"), re.compile(r"\s+(?:--|—|\u2013)\s+"),
           re.compile(r"(?<=,)\s+(?=(?:so|because|since|while|but|and then|otherwise)\b)"))
_ASIDE = re.compile(r"\s\((?:[^()`]|`[^`]*`){12,}?\)")  # "(about 9 GB once decompressed)": detail, not the fact
# A clause that opens with an answer word ("Yes: Clerk tokens live 60 s") is the fact behind it.
_OPENER = re.compile(r"^(?:yes|no|yep|nope|done|sure|right|correct|exactly|found it|good catch|not a bug|it does)"
                     r"\s*[:,.!—-]\s+(?=\S)", re.I)


def clauses(text: str, *, questions: bool = True) -> list[str]:
    """The text's sentences, long ones cut at semicolons, colons and dashes; code blocks left out.
    Pieces too short to stand alone are left out too, unless the text has nothing longer.
    ``questions=False`` leaves out the sentences that ask: a user's question is never the fact."""
    out: list[str] = []
    for sentence in _split(_FENCE.sub(" ", text), _SENTENCE_END):
        if not questions and sentence.rstrip(" )\"'").endswith("?"):
            continue
        sentence = _OPENER.sub("", " ".join(_BULLET.sub("", sentence).split()))
        if len(sentence) > CLAUSE_CHARS // 2:
            sentence = _ASIDE.sub("", sentence)
        out.extend(_cut(sentence, 0))
    return [piece for piece in out if len(piece) >= _MIN_CHARS] or out


def _split(text: str, at: re.Pattern[str]) -> list[str]:
    """``at.split(text)``, but never inside a `code span`: an identifier is cut nowhere."""
    masked = _CODE.sub(lambda m: "x" * len(m.group()), text)
    pieces, start = [], 0
    for match in at.finditer(masked):
        pieces.append(text[start:match.start()])
        start = match.end()
    pieces.append(text[start:])
    return [p for p in pieces if p.strip()]


def _cut(sentence: str, depth: int) -> list[str]:
    if len(sentence) <= CLAUSE_CHARS or depth == len(_BREAKS):
        return [sentence] if sentence else []
    pieces = _split(sentence, _BREAKS[depth])
    if len(pieces) == 1:
        return _cut(sentence, depth + 1)
    return [cut for piece in _join_short(pieces) for cut in _cut(piece, depth + 1)]


def _join_short(pieces: Sequence[str]) -> list[str]:
    """A piece too short to stand alone ("Yes:") stays with the one after it."""
    out: list[str] = []
    carry = ""
    for piece in pieces:
        piece = f"{carry} {piece}".strip() if carry else piece
        if len(piece) < _MIN_CHARS:
            carry = piece
            continue
        out.append(piece)
        carry = ""
    if carry:
        out[-1:] = [f"{out[-1]} {carry}"] if out else [carry]
    return out


def pick(scored: Sequence[tuple[float, int, str]], threshold: float, category: str = "") -> list[str]:
    """The best clause, then what its ``category`` needs to be whole when the best one lacks it (an
    incident's cause and its fix, a decision's reason: the likeliest clause that says it, whatever
    its score), then others that pass ``threshold`` while the line has room, its neighbours first
    (a cause and its fix are usually said one after the other); in the order they were said; of two
    clauses that score the same, the later (an answer tells what was done after what was wrong).
    ``scored``: (probability, position, clause)."""
    if not scored:
        return []
    best = max(scored, key=lambda s: (s[0], s[1]))
    chosen = [best]
    room = CHOSEN_CHARS - len(best[2])

    def take(candidate: tuple[float, int, str]) -> None:
        nonlocal room
        if candidate not in chosen and len(candidate[2]) + 1 <= room:
            chosen.append(candidate)
            room -= len(candidate[2]) + 1

    for part in WHOLE.get(category, ()):
        if not any(part.search(clause) for _, _, clause in chosen):
            saying = [s for s in scored if part.search(s[2]) and len(s[2]) + 1 <= room]
            if saying:
                take(max(saying, key=lambda s: (s[0], -abs(s[1] - best[1]))))
    others = sorted((s for s in scored if s not in chosen and s[0] >= threshold),
                    key=lambda s: (abs(s[1] - best[1]) > 1, -s[0], s[1]))
    for candidate in others:
        take(candidate)
    return [clause for _, _, clause in sorted(chosen, key=lambda s: s[1])]


_CAUSE = re.compile(r"\b(?:because|caused?|came from|comes from|due to|since|the reason|root cause|"
                    r"was (?:that|the)|fails?|failed|broke|error|timed out|leak(?:ed)?|full|expired?|"
                    r"too (?:many|much|long|big))\b", re.I)
_FIX = re.compile(r"\b(?:fix(?:ed)?|now|switched|moved|added|changed|set|raised|capped|replaced|wrapped|pinned|"
                  r"restarted|reverted|rolled back|the fix|instead)\b", re.I)
_REASON = re.compile(r"\b(?:because|since|so that|so|as|instead of|rather than|over|otherwise|to avoid|which)\b", re.I)
# What a line of each category holds to be whole: an incident its cause and its fix, a decision its reason.
WHOLE: dict[str, tuple[re.Pattern[str], ...]] = {"incident": (_CAUSE, _FIX), "decision": (_REASON,),
                                                 "constraint": (_REASON,)}


def note_line(facts: Sequence[str], category: str, day: str, pointer: str, said: Sequence[str] = ()) -> str:
    """One line: the fact, the names and figures of the exchange it leaves out (``said``: the
    exchange's texts, see ``names``) in brackets, then (category day, pointer to the whole exchange
    in the store). Clauses cut at a comma or a colon end with a semicolon when another follows, a
    full stop last.

    >>> note_line(["I switched the endpoint to ORJSONResponse."], "constraint", "2026-12-01", "ex-3f2a9c1b",
    ...           ["The batch endpoint must answer within 25 ms.", "I switched the endpoint to `ORJSONResponse`."])
    'I switched the endpoint to ORJSONResponse. [25 ms] (constraint 2026-12-01 ex-3f2a9c1b)'
    """
    ends = [clause.rstrip(" ,;:") for clause in facts]
    joined = " ".join(c if c.endswith((".", "!", "?", "…")) or i == len(ends) - 1 else c + ";"
                      for i, c in enumerate(ends))
    found = names(said, joined)
    shown = f" [{', '.join(found)}]" if found else ""
    fact = _shortened(_capitalised(joined), FACT_CHARS - len(shown))
    return f"{fact}{shown} ({category} {day} {pointer})"


# What a later question names a fact by and a chosen clause often leaves out: a `code span`, a figure
# with its unit, an acronym, an identifier (snake_case, camelCase), a version. Not the novel head's
# ``specifics`` (decider/_features.py): those are lower-cased, unordered and fixed by the weights they
# were trained with; these are written into the line as said, in order, and caught more of the words
# later questions asked by (evidence kept on the development loops 23 of 27 against 21).
_NAME = re.compile(r"`([^`\n]{2,40})`"
                   r"|\b(\d+(?:\.\d+)?\s?(?:%|ms|s|sec|min|minutes|h|hours|days|weeks|[KMGT]i?B|[kKM]|x|"
                   r"req/s|rps|qps|per (?:second|minute|hour)|connections|workers|threads|retries|replicas|"
                   r"nodes|branches|requests|rows|users))(?![\w/-])"
                   r"|\b(\d*[A-Z][A-Z0-9]{2,}[a-z]?)\b"
                   r"|\b(\w*_\w+)\b"
                   r"|\b([a-z]+[A-Z]\w+|[A-Z][a-z]+[A-Z]\w+)\b"
                   r"|\b(v?\d+\.\d+(?:\.\d+)?)\b")
_COMMON = frozenset({"API", "URL", "HTTP", "HTTPS", "JSON", "SQL", "CI", "PR", "TODO", "OK", "UTC", "ID", "CLI", "UI"})
_PLACEHOLDERS = re.compile(re.escape(PLACEHOLDER_START) + r"[^\]]*\]")  # what redaction left: no name


def names(said: Sequence[str], fact: str) -> list[str]:
    """The names and figures of the texts ``said`` (the user's first) that ``fact`` does not hold,
    in the order said, at most ``NAMES`` and ``NAMES_CHARS``: the words a later question asks by.

    >>> names(["The 10DLC limit: 1 message per second, so `sms` runs with MaxWorkers 1."], "The sms queue runs alone.")
    ['10DLC', 'MaxWorkers']
    """
    out: list[str] = []
    held = _squeezed(fact)
    room = NAMES_CHARS - len(" []")
    for text in said:
        for match in _NAME.finditer(_PLACEHOLDERS.sub(" ", text)):
            name = next(group for group in match.groups() if group)
            snippet = match.group(0).startswith("`") and " " in name  # `x = 1`: code, not a name
            if snippet or name in _COMMON or len(name) + 2 > room or _squeezed(name) in held:
                continue
            out.append(name)
            held += " " + _squeezed(name)
            room -= len(name) + 2
            if len(out) == NAMES:
                return out
    return out


def _squeezed(text: str) -> str:
    """Lower case without spaces: "250 ms" and "250ms" are one figure."""
    return "".join(text.lower().split())


def _capitalised(text: str) -> str:
    """A clause taken from mid-sentence ("it returns…", "our MWAA…") starts a line with a capital;
    an identifier ("pnpm", "`next build`") is left as it is written."""
    first = text.split(" ", 1)[0]
    return text[:1].upper() + text[1:] if first.isalpha() and first.lower() in STOPWORDS else text


def _shortened(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    return cut[: cut.rfind(" ")].rstrip(" ,;:") + "…" if " " in cut else cut + "…"
