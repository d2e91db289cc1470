"""What the embedded model sees of a text or of a (message, item) pair.

Shared by the model at run time and by ``training/build_weights.py``, so the
features a model was trained on are the features it is asked about.

Two kinds of features:
- hashed n-grams of a text (words, word pairs, character 3-grams and a few
  shape markers), for the three text heads: kind, worth, keep;
- a short dense vector for the judge: how much of the message and of the
  item they share, weighted by how rare each shared word is, how much of the
  item the conversation already says, and which cues they carry.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise

from .._notes.lines import fact_of
from .._words.text import content_words, stem, stems, words

BUCKETS = 1 << 15
_SHAPE_CODE = re.compile(r"```|Traceback|^\s+at |\bError\b|Exception|\{\s*\"|^\s*\$ |^\s*[\w.-]+:\d+", re.M)
_PUNCT = re.compile(r"[?!]")
_MAX_CHARS = 600  # long pastes: the opening says what the message is


def bucket(feature: str) -> int:
    return zlib.crc32(feature.encode()) & (BUCKETS - 1)


def text_features(text: str, prefix: str = "") -> dict[int, float]:
    """Hashed features of one text, L2-normalised: ``{bucket: weight}``."""
    head = text[:_MAX_CHARS]
    low = head.lower()
    ws = words(low)
    feats: list[str] = [f"w:{w}" for w in ws]
    feats += [f"b:{a}_{b}" for a, b in pairwise(ws)]
    padded = f" {' '.join(low.split())} "
    feats += [f"c:{padded[i:i + 3]}" for i in range(len(padded) - 2)]
    feats += [f"f:{w}" for w in ws[:1]] + [f"f2:{'_'.join(ws[:2])}"] if ws else ["empty"]
    feats.append(f"len:{_length_band(len(text))}")
    feats.append(f"nw:{min(len(ws), 12)}")
    feats += [f"p:{mark}" for mark in _PUNCT.findall(head)[:3]]
    if _SHAPE_CODE.search(head):
        feats.append("shape:code")
    if text.count("\n") >= 3:
        feats.append("shape:lines")
    counts: dict[int, float] = {}
    for feature in feats:
        key = bucket(prefix + feature)
        counts[key] = counts.get(key, 0.0) + 1.0
    norm = math.sqrt(sum(v * v for v in counts.values())) or 1.0
    return {k: v / norm for k, v in counts.items()}


def _length_band(n: int) -> int:
    return next(i for i, edge in enumerate((8, 20, 45, 90, 180, 400, 10**9)) if n < edge)


# -- the judge's pair features ------------------------------------------------

def judged_source(instructions: Mapping[str, object]) -> str:
    """An ``answers`` question's source (``fact``, ``note``, ``passage``): as recall names it, else
    what its origin says (a caller of its own may send only the origin)."""
    source = instructions.get("source")
    if source in ("fact", "note", "passage"):
        return str(source)
    return "note" if instructions.get("origin") == "note" else "passage"


_REASON = frozenset("because over instead since due reason chose picked decided why rather than".split())
_INCIDENT = frozenset("fix fixed cause caused root broke broken crash crashed failed failing error bug "
                      "incident outage workaround restarted".split())
_STATUS = frozenset("left next todo remaining stopped paused wip started half pending yet "
                    "unfinished still started progress".split())
_CONSTRAINT = frozenset("must never only always cannot limit limited max maximum requires required "
                        "constraint pinned keep".split())
_CUES = (_REASON, _INCIDENT, _STATUS, _CONSTRAINT)

JUDGE_FEATURES = (
    "bias", "cov_msg", "cov_item", "shared", "max_idf", "sum_idf", "pairs", "chars", "idents",
    "conv_item", "conv_topic", "recent_item", "cov_prod", "short_msg", "note", "item_len", "msg_len",
    *(f"kind:{k}" for k in range(11)),
    *(f"cue:{c}" for c in range(len(_CUES))),
    *(f"msgcue:{c}" for c in range(len(_CUES))),
    *(f"kindcue:{k}:{c}" for k in range(11) for c in range(len(_CUES))),
)


class MessageView:
    """What the judge needs of the message and conversation, computed once per message."""

    def __init__(self, message: str, recent: Sequence[str]) -> None:
        self.message = message
        self.words = content_words(message)
        self.stems = {stem(w) for w in self.words}
        self.pairs = _pairs(self.words)
        self.chars = _grams(" ".join(self.words))
        self.idents = {w for w in self.words if any(c.isdigit() or c in "_.-/" for c in w)}
        self.lower = set(words(message))
        self.said = set[str]().union(*map(stems, recent))
        self.last = set[str]().union(*map(stems, recent[-2:]))


def judge_features(
    view: MessageView, item: str, *, kind: int, is_note: bool, idf: Callable[[str], float],
) -> list[float]:
    """The dense vector the judge scores for one item against one message.

    ``kind`` is the index of the message's kind in ``memsift.types.Kind``.
    """
    i_words = content_words(item)
    i_stems = {stem(w) for w in i_words}

    def mass(stems: set[str]) -> float:
        return sum(idf(s) for s in stems)

    shared = view.stems & i_stems
    m_mass, i_mass, s_mass = mass(view.stems) or 1.0, mass(i_stems) or 1.0, mass(shared)
    cov_msg, cov_item = s_mass / m_mass, s_mass / i_mass
    i_low = set(words(item))
    cue = [float(bool(i_low & c)) for c in _CUES]
    msg_cue = [float(bool(view.lower & c)) for c in _CUES]
    kinds = [0.0] * 11
    kinds[kind] = 1.0
    grams = view.chars
    return [
        1.0,
        cov_msg,
        cov_item,
        math.log1p(len(shared)),
        max((idf(s) for s in shared), default=0.0) / 10.0,
        s_mass / 10.0,
        math.log1p(len(view.pairs & _pairs(i_words))),
        len(grams & _grams(" ".join(i_words))) / len(grams) if grams else 0.0,
        math.log1p(len(view.idents & set(i_words))),
        mass(view.said & i_stems) / i_mass,
        mass((view.last - view.stems) & i_stems) / i_mass,
        mass((view.last | view.stems) & i_stems) / i_mass,
        cov_msg * cov_item,
        float(len(view.stems) < 4),
        float(is_note),
        math.log1p(len(item)) / 6.0,
        math.log1p(len(view.message)) / 6.0,
        *kinds,
        *cue,
        *msg_cue,
        *(kinds[k] * cue[c] for k in range(11) for c in range(len(_CUES))),
    ]


def _pairs(ws: Sequence[str]) -> set[tuple[str, str]]:
    return {(stem(a), stem(b)) for a, b in pairwise(ws)}


def _grams(text: str) -> set[str]:
    """Character 4-grams: they meet 'migrate' with 'migration' where stems miss."""
    return {text[i:i + 4] for i in range(len(text) - 3)}


DF_BUCKETS = 1 << 16


def df_bucket(word_stem: str) -> int:
    return zlib.crc32(word_stem.encode()) & (DF_BUCKETS - 1)


def make_idf(df: Sequence[int], documents: int) -> Callable[[str], float]:
    """IDF from document counts per hashed stem; a stem never seen counts as rare."""
    rare = math.log(documents + 1)

    def idf(word_stem: str) -> float:
        count = df[df_bucket(word_stem)]
        return math.log((documents + 1) / (count + 1)) if count else rare

    return idf


# -- the fact question's features: which clause of a kept exchange states its fact --

_CODE_SPAN = re.compile(r"`[^`]+`")
_FIGURE = re.compile(r"\b\d[\d,.]*\s?(?:%|ms|s|m|h|kb|mb|gb|tb|x|seconds?|minutes?|hours?|days?|weeks?|"
                      r"months?|rows|requests|rps|usd|eur)\b|\$\d|\bv?\d+\.\d+(?:\.\d+)?\b|\b[1-5]\d\d\b", re.I)
_IDENT = re.compile(r"\b(?:[a-z]+[A-Z]\w*|[A-Z]{2,}[A-Z0-9_]*|\w+_\w+|[\w-]+\.[a-z]{1,5}|\w+/[\w/.-]+)\b")
_CHATTER = re.compile(r"^(?:done|sure|great|good|yes|no|ok|okay|thanks|happy|glad|nice|sounds|got it|want me|"
                      r"let me|shall i|should i|i can|i'll|i will|if you|feel free|here's|here is)\b", re.I)
_WHY = frozenset("because since so instead rather otherwise means meaning which why reason therefore hence "
                 "avoid avoids prevents keeps".split())
_LIMIT = frozenset("only never always must cap caps capped limit limits max maximum minimum requires "
                   "required pinned pin pins can't cannot doesn't won't isn't mustn't rejects rejected "
                   "expire expires timeout".split())
_TROUBLE = frozenset("error errors fails failed failing cause caused causes fix fixed broke broken crash "
                     "crashed leak leaked slow stale wrong bug".split())


_REMEDY = re.compile(r"\b(?:fix(?:ed)?|now|switched|moved|added|changed|set|raised|capped|replaced|pinned|"
                     r"instead|use|using|went with|chose|picked)\b", re.I)
_CAUSE = re.compile(r"\b(?:because|caused?|due to|root cause|since|the reason|so)\b", re.I)
_NARRATION = re.compile(r"^(?:i|i've|i'll|i'm|let me|here|this|that|it)\b", re.I)

FACT_FEATURES = ("bias", "code", "figures", "idents", "why", "limit", "trouble", "rare", "subject", "chatter",
                 "question", "short", "from_user", "position", "specifics", "remedy", "cause", "narration",
                 "length", "first", "ticks")


def fact_features(clause: str, user: str, *, from_user: bool, position: int,
                  idf: Callable[[str], float]) -> list[float]:
    """What makes a clause the fact of its exchange, in ``FACT_FEATURES`` order: named things,
    figures, a reason, a limit, a fix, the exchange's subject; what does not: chatter, a question,
    a clause too short to stand alone, the narration of what the agent did."""
    low = set(words(clause))
    own = stems(clause)
    subject = stems(user)
    return [
        1.0,
        min(len(_CODE_SPAN.findall(clause)), 3),
        min(len(_FIGURE.findall(clause)), 3),
        min(len(_IDENT.findall(_CODE_SPAN.sub(" ", clause))), 3),
        float(bool(low & _WHY)),
        float(bool(low & _LIMIT)),
        float(bool(low & _TROUBLE)),
        min(sum(idf(s) for s in own) / 10.0, 4.0),
        min(len(own & subject), 3),
        float(bool(_CHATTER.match(clause.lstrip("*_ ")))),
        float("?" in clause),
        float(len(clause) < 60),
        float(from_user),
        min(position, 6),
        min(len(specifics(clause)), 4) / 2,
        float(bool(_REMEDY.search(clause))),
        float(bool(_CAUSE.search(clause))),
        float(bool(_NARRATION.match(clause))),
        math.log1p(len(clause)) / 5,
        float(position == 0),
        float("`" in clause),
    ]


# -- the novel question's features: does a new note line restate or update an older one --


def specifics(text: str) -> set[str]:
    """The named things and figures of a text, code spans included, as lower-case tokens: what a
    restatement repeats and an update changes (``revalidateTag(`x`)`` and ``revalidateTag`` meet)."""
    plain = text.replace("`", " ")
    found = _FIGURE.findall(plain) + _IDENT.findall(plain)
    return {" ".join(f.lower().split()) for f in found}


def novel_features(note: str, new: str) -> dict[str, float]:
    """How a new line stands to an older note: shared words, shared and changed specifics."""
    note, new = fact_of(note), fact_of(new)
    a, b = stems(note), stems(new)
    sa, sb = specifics(note), specifics(new)
    return {
        "jaccard": len(a & b) / (len(a | b) or 1),
        "new_known": len(a & b) / (len(b) or 1),  # how much of the new line the note already says
        # The new line's named things the note already has; one shared name alone proves little.
        "specifics_known": len(sa & sb) / max(len(sb), 2),
        "changed_specifics": float(bool(sa - sb) and bool(sb - sa)),
    }
