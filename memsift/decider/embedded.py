"""The embedded decider: memsift's questions answered in-process, offline, in microseconds.

Linear models over the features of ``_features.py``, trained by
``training/build_weights.py`` on the corpus kept in the repository. Its answers
are probabilities (softmax or logistic), so the thresholds in the config mean
something.

>>> decider = EmbeddedDecider.load()
>>> decider.decide({"message": "thanks!"}, {"k": Choice("kind", "...", KIND_OPTIONS)})["k"].choice
'reaction'
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..types import Answer, Choice, ChoiceAnswer, Kind, Noul, NoulAnswer, Question
from . import _weights
from ._features import (
    DF_BUCKETS, FACT_FEATURES, JUDGE_FEATURES, MessageView, fact_features, judge_features, judged_source, make_idf,
    novel_features, text_features,
)
from ._heads import TextHead, check_length, logit, sigmoid, softmax

WEIGHTS = _weights.SHIPPED
_KINDS = list(Kind)

# The novel question, set by hand likewise: a new line whose words and named things the note
# already holds restates it; one on the same words whose figures or names changed updates it.
NOVEL_LOGITS = {
    "restates": (-5.0, {"new_known": 5.0, "specifics_known": 4.0, "changed_specifics": -0.5}),
    "updates": (-6.5, {"new_known": 3.0, "jaccard": 3.0, "changed_specifics": 2.0}),
    "differs": (0.0, {}),
}


class EmbeddedDecider:
    """A ``Decider`` for the tasks memsift asks (kind, answers, worth, keep, fact, novel), in-process.

    Made with ``EmbeddedDecider.load()`` from the shipped weights; ``header`` and ``tables`` are a
    weights file's two parts, as ``load`` reads them.
    """

    name = "embedded decider"
    remote = False  # runs in-process: no breaker to mind

    def __init__(self, header: Mapping[str, Any], tables: Mapping[str, array[int]]) -> None:
        heads = header["heads"]
        self.kind = TextHead(heads["kind"], tables["kind"])
        self.worth = TextHead(heads["worth"], tables["worth"])
        self.keep = TextHead(heads["keep"], tables["keep"])
        self.judge_weights: list[float] = header["judge"]["weights"]
        check_length("the judge's weights", self.judge_weights, len(JUDGE_FEATURES))
        # Each source's threshold, picked on the corpus, placed at the bar the stages compare with
        # (``answers_threshold``'s default): the configured thresholds keep their meaning.
        judge = header["judge"]
        self.judge_shift = {source: logit(judge["bar"]) - logit(threshold)
                            for source, threshold in judge["thresholds"].items()}
        self.fact_weights: list[float] = header["fact"]["weights"]
        check_length("the fact question's weights", self.fact_weights, len(FACT_FEATURES))
        check_length("the document frequencies", tables["df"], DF_BUCKETS)
        self.idf = make_idf(tables["df"], header["idf"]["documents"])

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> EmbeddedDecider:
        header, tables = _weights.load(path)
        return cls(header, tables)

    def decide(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Answer]:
        """The ``questions`` over ``state``, answered from the weights."""
        cache: dict[str, Any] = {}
        return {qid: self._answer(state, question, cache) for qid, question in questions.items()}

    def _answer(self, state: Mapping[str, Any], question: Question, cache: dict[str, Any]) -> Answer:
        if question.task == "kind" and isinstance(question, Choice):
            return _choice(self.kind.probabilities(_message_features(state, cache)), question)
        if question.task == "worth" and isinstance(question, Noul):
            return NoulAnswer(self.worth.probabilities(_message_features(state, cache))["yes"])
        if question.task == "keep" and isinstance(question, Choice):
            feats = exchange_features(state.get("user", ""), state.get("assistant", ""))
            return _choice(self.keep.probabilities(feats), question)
        if question.task == "answers" and isinstance(question, Noul):
            return NoulAnswer(self._judge(state, question.instructions, cache))
        if question.task == "fact" and isinstance(question, Noul):
            return NoulAnswer(self._fact(state, question.instructions))
        if question.task == "novel" and isinstance(question, Choice):
            return _choice(_novel(question.instructions), question)
        raise ValueError(f"the embedded decider cannot answer a {question.type} question on {question.task!r}")

    def _judge(self, state: Mapping[str, Any], instructions: Any, cache: dict[str, Any]) -> float:
        if not isinstance(instructions, Mapping) or "item" not in instructions:
            raise ValueError("an 'answers' question needs instructions with the item's text")
        if "view" not in cache:
            recent = [turn["text"] for turn in state.get("conversation", ())]
            cache["view"] = MessageView(state.get("message", ""), recent)
        kind = state.get("kind")
        source = judged_source(instructions)
        vector = judge_features(
            cache["view"], instructions["item"],
            kind=_KINDS.index(Kind(kind)) if kind else 0,
            is_note=source != "passage",  # a fact line is read as a note, wherever it is kept
            idf=self.idf,
        )
        # fsum is exact: the same score on every Python (3.12's sum rounds otherwise than 3.11's)
        z = math.fsum(w * x for w, x in zip(self.judge_weights, vector, strict=True))
        return sigmoid(round(z + self.judge_shift[source], 9))


    def _fact(self, state: Mapping[str, Any], instructions: Any) -> float:
        if not isinstance(instructions, Mapping) or "item" not in instructions:
            raise ValueError("a 'fact' question needs instructions with the clause's text")
        feats = fact_features(instructions["item"], state.get("user", ""),
                              from_user=instructions.get("origin") == "user",
                              position=int(instructions.get("position", 0)), idf=self.idf)
        return sigmoid(math.fsum(w * x for w, x in zip(self.fact_weights, feats, strict=True)))


def _hand_set_logit(bias: float, terms: Iterable[float]) -> float:
    """A logit of decimal weights, to 9 decimals: two clauses whose weights add up alike tie on
    every machine and Python, instead of being ranked by how 0.15 or 0.6 round in binary."""
    return round(math.fsum([bias, *terms]), 9)


def _novel(instructions: Any) -> dict[str, float]:
    if not isinstance(instructions, Mapping) or not {"item", "new"} <= set(instructions):
        raise ValueError("a 'novel' question needs instructions with the note ('item') and the new line")
    feats = novel_features(instructions["item"], instructions["new"])
    logits = {option: _hand_set_logit(bias, (w * feats[name] for name, w in weights.items()))
              for option, (bias, weights) in NOVEL_LOGITS.items()}
    return softmax(logits)


def exchange_features(user: str, assistant: str) -> dict[int, float]:
    """The keep head reads both sides of the exchange, ``user`` and ``assistant``, each with its own prefix."""
    feats = text_features(user, "u:")
    for index, value in text_features(assistant, "a:").items():
        feats[index] = feats.get(index, 0.0) + value
    return feats


def _message_features(state: Mapping[str, Any], cache: dict[str, Any]) -> dict[int, float]:
    if "message" not in cache:
        cache["message"] = text_features(state.get("message", ""))
    feats: dict[int, float] = cache["message"]
    return feats


def _choice(probabilities: Mapping[str, float], question: Choice) -> ChoiceAnswer:
    """Restrict to the options asked, renormalised; confidence is the top probability."""
    asked = {o: probabilities.get(o, 0.0) for o in question.options}
    total = sum(asked.values()) or 1.0
    asked = {o: p / total for o, p in asked.items()}
    best = max(asked, key=asked.__getitem__)
    return ChoiceAnswer(best, asked, asked[best])
