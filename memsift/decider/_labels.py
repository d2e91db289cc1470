"""One question as a chat model reads it: a prompt, and short labels to answer with.

The chat backends (OpenAI-compatible, Anthropic) are asked one question per
request. Each answer is a single label: ``yes``/``no`` for a noul, a letter
per option for a choice, a digit per level for a score, so a model's token
probabilities (or its forced pick) map back onto memsift's answer types.

    >>> asked = Asked.of({"message": "why Stripe?"}, Noul("worth", "Is this a technical choice?"))
    >>> asked.labels
    ('yes', 'no')
    >>> asked.answer({"yes": 0.9, "no": 0.1})
    NoulAnswer(noul=0.9, type='noul')
"""

from __future__ import annotations

import json
import string
import time
from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

from ..types import Answer, Choice, ChoiceAnswer, Noul, NoulAnswer, Question, ScoreAnswer, Usage
from ._http import concurrently, plain

SYSTEM = ("You answer one question about the state of a coding session for a memory tool. "
          "Answer with exactly one of the labels offered, nothing else.")
MAX_OPTIONS = len(string.ascii_uppercase)  # one letter per option


@frozen
class Asked:
    """A question ready for a chat model: its user prompt, its labels and what each label means."""

    question: Question
    prompt: str
    labels: tuple[str, ...]

    @classmethod
    def of(cls, state: Mapping[str, Any], question: Question) -> Asked:
        """The prompt for ``question`` over ``state`` (the redacted state the pipeline built)."""
        lines = ["State:", _text(state), "", "Question:", _text(question.instructions)]
        if isinstance(question, Noul):
            labels: tuple[str, ...] = ("yes", "no")
            if question.criteria:
                lines += [f"Answer yes when: {question.criteria.get('true', '')}",
                          f"Answer no when: {question.criteria.get('false', '')}"]
        elif isinstance(question, Choice):
            if not 1 <= len(question.options) <= MAX_OPTIONS:
                raise ValueError(f"a chat decider offers 1 to {MAX_OPTIONS} options, not {len(question.options)}")
            labels = tuple(string.ascii_uppercase[: len(question.options)])
            lines += ["Options:"] + [f"{label}: {option}" + (f" ({about})" if about else "")
                                     for label, (option, about) in zip(labels, question.options.items(),
                                                                       strict=True)]
        else:
            if not 2 <= len(question.levels) <= 10:
                raise ValueError(f"a score has 2 to 10 levels, not {len(question.levels)}")
            labels = tuple(str(level) for level in range(len(question.levels)))
            lines += ["Levels:"] + [f"{label}: {_text(level)}"
                                    for label, level in zip(labels, question.levels, strict=True)]
        lines += ["", f"Answer with one label: {', '.join(labels)}."]
        return cls(question, "\n".join(lines), labels)

    def answer(self, probabilities: Mapping[str, float]) -> Answer:
        """The answer that probabilities over the labels (summing to 1) mean."""
        p = {label: float(probabilities.get(label, 0.0)) for label in self.labels}
        best = max(self.labels, key=p.__getitem__)
        question = self.question
        if isinstance(question, Noul):
            return NoulAnswer(p["yes"])
        if isinstance(question, Choice):
            options = dict(zip(self.labels, map(str, question.options), strict=True))
            return ChoiceAnswer(options[best], {options[label]: p[label] for label in self.labels}, p[best])
        return ScoreAnswer(sum(int(label) * p[label] for label in self.labels), p, p[best])


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=plain, ensure_ascii=False, indent=1)


def ask_each(state: Mapping[str, Any], questions: Mapping[str, Question],
             ask: Callable[[Asked, float], tuple[Answer, Usage]], *, seconds: float,
             workers: int) -> tuple[dict[str, Answer], Usage]:
    """Each question asked on its own with ``ask(asked, deadline)``, concurrently, all within
    ``seconds``: the answers by question id, and what they cost together."""
    deadline = time.monotonic() + seconds
    asked = {qid: Asked.of(state, question) for qid, question in questions.items()}
    replies = concurrently([lambda a=a: ask(a, deadline) for a in asked.values()], workers)  # type: ignore[misc]
    total = Usage()
    for _, usage in replies:
        total += usage
    return {qid: answer for qid, (answer, _) in zip(asked, replies, strict=True)}, total
