"""The semantic judge: the lexical decider's answers, combined with what an embedding model reads.

For an ``answers`` question (does this note or passage answer the message?)
the lexical probability is combined, in a small logistic head per source
(notes, store), with the cosine of the message and the item and the cosine
of the recent turns and the item. For a ``novel`` question (does a new line
restate a note?) the cosine of the two lines joins the lexical odds: a
restatement in other words is not new. Every other question goes to the inner
decider as it is. The head's weights and thresholds are in ``head.json``,
built by ``training/build_semantic.py`` from the corpus.

>>> judge = SemanticDecider(EmbeddedDecider.load(), InProcessEmbedder())
>>> note = Noul("answers", {"item": "We'll use Postgres advisory locks instead of Redis locks, because ...",
...                         "origin": "note"})
>>> judge.decide({"message": "why didn't we just use Redis for mutual exclusion?"}, {"n": note})["n"]
NoulAnswer(noul=0.40..., type='noul')

One ``embed`` call per ``decide``: every text its questions need, batched.
When the embedder returns None (a warm process still starting) or fails, the
inner decider's answers come back unchanged: that message is judged lexically.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._notes.lines import fact_of
from ..decider._features import judged_source
from ..decider._heads import logit
from ..types import Answer, Choice, ChoiceAnswer, Decider, Embedder, Noul, NoulAnswer, Question

HEAD = Path(__file__).with_name("head.json")
FEATURES = ("lexical_logit", "cosine", "recent_cosine")
def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def embedded_text(text: str) -> str:
    """What the model reads of an item: the fact, without a note line's tail (category, day,
    pointer), which says nothing about its subject.

    >>> embedded_text("Adyen over Stripe: local cards. (decision 2026-08-02 ex-11aa22bb)")
    'Adyen over Stripe: local cards.'
    """
    return fact_of(text)


def recent_text(state: Mapping[str, Any]) -> str:
    """The recent turns as one text, newest first: a long turn cut by the model's length cuts the oldest."""
    return "\n".join(turn.get("text", "") for turn in reversed(list(state.get("conversation", ()))))


def answers_features(lexical: float, cosine: float, recent_cosine: float) -> list[float]:
    """The head's inputs, in ``FEATURES`` order, after a 1 for the bias; cosines to 4 decimals, so the
    same texts give the same features on any CPU."""
    return [1.0, logit(lexical), round(cosine, 4), round(recent_cosine, 4)]


def novel_features(restates: float, cosine: float) -> list[float]:
    return [1.0, logit(restates), round(cosine, 4)]


def linear(weights: Sequence[float], features: Sequence[float]) -> float:
    return math.fsum(w * x for w, x in zip(weights, features, strict=True))


@functools.lru_cache(maxsize=2)
def load_head(path: Path = HEAD) -> dict[str, Any]:
    head: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return head


class SemanticDecider:
    """A ``Decider`` that answers ``answers`` and ``novel`` with the head, everything else with ``inner``.

    Each source's threshold (picked on the corpus for at most 5 % of messages
    needing nothing getting something) is placed at the bar the head was
    built for (``answers_threshold``'s default): the configured thresholds keep
    their meaning, and raising one raises the bar for both sources.
    """

    def __init__(self, inner: Decider, embedder: Embedder, head: Mapping[str, Any] | None = None) -> None:
        self.inner, self.embedder = inner, embedder
        self._head = head
        self.name = f"{inner.name} + {embedder.name}"
        self.remote = getattr(inner, "remote", True)

    def close(self) -> None:
        """Close the decider and the embedder it wraps, when they hold something open."""
        for part in (self.inner, self.embedder):
            close = getattr(part, "close", None)
            if callable(close):
                close()

    @property
    def head(self) -> Mapping[str, Any]:
        """Read on the first question that needs it: a quiet message never reads the file."""
        if self._head is None:
            self._head = load_head()
        return self._head

    def decide(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Answer]:
        answers = self.inner.decide(state, questions)
        judged = {qid: q for qid, q in questions.items()
                  if q.task in ("answers", "novel") and isinstance(q.instructions, Mapping)}
        if not judged:
            return answers
        vectors = self._vectors(state, judged)
        if vectors is None:
            return answers
        for qid, question in judged.items():
            answers[qid] = self._combined(state, question, answers[qid], vectors)
        return answers

    def _vectors(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Any] | None:
        """Every text the questions need, embedded in one call: text -> unit vector; None when the
        embedder cannot answer."""
        texts: dict[str, None] = {}  # ordered, without repeats
        for question in questions.values():
            instructions = question.instructions
            assert isinstance(instructions, Mapping)
            if question.task == "answers":
                texts.update(dict.fromkeys((state.get("message", ""), recent_text(state))))
            else:
                texts[embedded_text(str(instructions.get("new", "")))] = None
            texts[embedded_text(str(instructions.get("item", "")))] = None
        ordered = list(texts)
        try:
            rows = self.embedder.embed(ordered)
        except Exception:  # the model is an extra: whatever goes wrong, the lexical answer stands
            return None
        if rows is None or len(rows) != len(ordered):
            return None
        return dict(zip(ordered, rows, strict=True))

    def _combined(self, state: Mapping[str, Any], question: Question, lexical: Answer,
                  vectors: Mapping[str, Any]) -> Answer:
        instructions = question.instructions
        assert isinstance(instructions, Mapping)
        item = vectors[embedded_text(str(instructions.get("item", "")))]
        if question.task == "novel":
            assert isinstance(lexical, ChoiceAnswer) and isinstance(question, Choice)
            new = vectors[embedded_text(str(instructions.get("new", "")))]
            return self._novel(lexical, float(item @ new))
        assert isinstance(lexical, NoulAnswer) and isinstance(question, Noul)
        message, recent = vectors[state.get("message", "")], vectors[recent_text(state)]
        cosines = float(message @ item), float(recent @ item)
        return NoulAnswer(self._answers(lexical.noul, judged_source(instructions), *cosines))

    def _answers(self, lexical: float, source_name: str, cosine: float, recent_cosine: float) -> float:
        source = self.head["answers"][source_name]
        z = linear(source["weights"], answers_features(lexical, cosine, recent_cosine))
        return sigmoid(round(z - logit(source["threshold"]) + logit(self.head["bar"]), 9))

    def _novel(self, lexical: ChoiceAnswer, cosine: float) -> ChoiceAnswer:
        """The probability of "restates" from the head; the other options keep their lexical shares."""
        if "restates" not in lexical.probabilities:
            return lexical
        restates = sigmoid(linear(self.head["novel"]["weights"],
                                  novel_features(lexical.probabilities["restates"], cosine)))
        others = {o: p for o, p in lexical.probabilities.items() if o != "restates"}
        rest = math.fsum(others.values())
        probabilities = {o: (1 - restates) * (p / rest if rest else 1 / len(others)) for o, p in others.items()}
        probabilities["restates"] = restates
        best = max(probabilities, key=probabilities.__getitem__)
        return ChoiceAnswer(best, probabilities, probabilities[best])
