"""Ranking memory against a message as a search engine does: Okapi BM25 over each fact and its keys.

A fact's keys are the words of the exchange it was kept from (``keys_for``), written beside the
notes when it is kept: a later message often names a fact by words its line never says ("the
upload" for a line about request bodies), and its exchange said them.

>>> [item.id for item in ranked("why Stripe over Mollie?", items, {})]
['note-2', 'note-7']
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from attrs import evolve

from .._notes.lines import fact_of, tail_of
from .._words.text import content_words, stem, stems
from ..types import Item

K1, B = 1.2, 0.75  # BM25's usual term saturation and length normalisation
FUSION = 60  # reciprocal rank fusion's constant: ranks 1 and 2 weigh about alike, rank 1 and 30 do not
KEYS = 60  # distinct words of an exchange kept as its fact's keys: enough to name its subject
# A key counts half a word of the fact: at 1 they outweighed the facts that have none (a line a person
# wrote); at 0.5 the development loops and the corpus rank the needed fact first most often.
KEY_WEIGHT = 0.5


def keys_for(fact: str, user: str, assistant: str) -> str:
    """The words a later question may name a fact by: the exchange's content words that the fact's
    line does not hold, the user's first, at most ``KEYS``, space-separated.

    >>> keys_for("Uploads go straight to the API.", "photo upload fails: 413", "Vercel caps bodies at 4.5 MB")
    'photo fails 413 vercel caps bodies 4.5 mb'
    """
    said = stems(fact)
    out: list[str] = []
    seen: set[str] = set()
    for word in content_words(f"{user}\n{assistant}"):
        root = stem(word)
        if root not in said and root not in seen:
            seen.add(root)
            out.append(word)
            if len(out) == KEYS:
                break
    return " ".join(out)


def ranked(query: str, items: Sequence[Item], keys: Mapping[str, str]) -> list[Item]:
    """The items that share a word with the query, best first, each with its BM25 score as ``score``
    (over the item's fact and, weighing ``KEY_WEIGHT``, the keys of its pointer); of two alike, the
    later (newer) one."""
    terms = stems(query)
    if not terms or not items:
        return []
    docs = [_weighted(item, keys) for item in items]
    average = sum(sum(doc.values()) for doc in docs) / len(docs) or 1.0
    df = Counter(term for doc in docs for term in terms & doc.keys())
    idf = {term: inverse_frequency(len(docs), n) for term, n in df.items()}
    scored = []
    for index, (item, doc) in enumerate(zip(items, docs, strict=True)):
        length = sum(doc.values())
        score = sum(term_weight(idf[t], doc[t], length, average) for t in terms & doc.keys())
        if score > 0:
            scored.append((score, index, item))
    scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
    return [evolve(item, score=round(score, 6)) for score, _, item in scored]


def _weighted(item: Item, keys: Mapping[str, str]) -> dict[str, float]:
    """The stems of an item's fact, each counted once a time it is said, and of its keys, counted
    ``KEY_WEIGHT``: a word the fact says weighs more than one its exchange said around it."""
    tail = tail_of(item.text)
    words = keys.get(tail[2], "") if tail else keys.get(item.id, "")
    doc: dict[str, float] = dict(Counter(stem(w) for w in content_words(fact_of(item.text))))
    for word in content_words(words):
        root = stem(word)
        doc[root] = doc.get(root, 0.0) + KEY_WEIGHT
    return doc


def keyed(item: Item, keys: Mapping[str, str]) -> str:
    """What a fact is ranked by: its line without the tail, then the keys of its pointer.

    >>> keyed(Item("n", "Uploads go to the API. (incident 2026-12-01 ex-0a1b2c3d)", "note", "notes.md:3"),
    ...       {"ex-0a1b2c3d": "photo 413 vercel caps bodies"})
    'Uploads go to the API. photo 413 vercel caps bodies'
    """
    tail = tail_of(item.text)
    words = keys.get(tail[2], "") if tail else keys.get(item.id, "")
    return f"{fact_of(item.text)} {words}".rstrip()


def inverse_frequency(documents: int, holding: int) -> float:
    """BM25's idf of a word that ``holding`` of ``documents`` documents hold."""
    return math.log(1 + (documents - holding + 0.5) / (holding + 0.5))


def term_weight(idf: float, count: int | float, length: float, average: float) -> float:
    """BM25's weight of a word said ``count`` times in a document ``length`` long (``average``: of all)."""
    return idf * count * (K1 + 1) / (count + K1 * (1 - B + B * length / average))


def holding(text: str, items: Sequence[Item], keys: Mapping[str, str]) -> list[tuple[float, int, Item]]:
    """How much of ``text`` each item already holds: the share of its words' weight (BM25's idf over
    the items) found in the item's fact and keys, and how many of its words, best first.

    An answer that restates a fact memory holds repeats that fact's rare words (its figures, names,
    files); one that says something new brings words no fact has.
    """
    words = stems(text)
    if not words or not items:
        return []
    docs = [stems(keyed(item, keys)) for item in items]
    df = Counter(word for doc in docs for word in words & doc)
    idf = {word: inverse_frequency(len(docs), df[word]) for word in words}
    mass = sum(idf.values())
    held = [(sum(idf[w] for w in words & doc) / mass, len(words & doc), item)
            for item, doc in zip(items, docs, strict=True)]
    return sorted(held, key=lambda h: h[0], reverse=True)


def fused(lexical: Sequence[Item], items: Sequence[Item], cosines: Sequence[float]) -> list[Item]:
    """The items best first by reciprocal rank fusion of their BM25 rank (``lexical``, as ``ranked``
    gave it) and their rank by ``cosines`` (each item's cosine to the query, of its fact and keys,
    in ``items``' order): the words a question shares with a fact, and what it means, each get a
    say. An item that shares no word with the query is ranked by its meaning alone; its score is
    the fused one.
    """
    by_words = {item.id: rank for rank, item in enumerate(lexical)}
    order = sorted(range(len(items)), key=lambda i: (cosines[i], i), reverse=True)
    score = {}
    for rank, i in enumerate(order):
        words = by_words.get(items[i].id)
        score[i] = 1 / (FUSION + rank) + (1 / (FUSION + words) if words is not None else 0.0)
    best = sorted(score, key=lambda i: (score[i], i), reverse=True)
    return [evolve(items[i], score=round(score[i], 6)) for i in best]
