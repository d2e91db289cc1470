"""A decider over HTTP: any service that speaks TypeSafe's System One API.

Jev itself (``https://api.typesafe.ai/v1/systemone``), OpenRouter's
decisions route, or a local Jev-compatible server: one ``POST`` per
``decide`` call, carrying every question asked, each about a single item.

    >>> decider = SystemOneDecider("https://api.typesafe.ai/v1/systemone", api_key="ts-...")
    >>> decider.decide({"message": "why Stripe?"}, {"worth": Noul("worth", "Is this a technical choice?")})
    {'worth': NoulAnswer(noul=0.93, type='noul')}

What goes over the wire is ``{"state", "model", "questions"}``: the state as
memsift built it (the pipeline redacts it first), the configured model, and each question
as the API documents it (``type``, ``instructions``, ``criteria``); memsift's
``task`` stays home. Answers are read strictly: a missing answer, one of the
wrong type or a probability out of range raises ``ServiceUnavailable``, so
memory pauses rather than acting on garbage.

Failures come out as memsift's errors: ``ConfigurationError`` when the
service refuses us (401/403: the key; 422: the request, naming the field;
any other 4xx), never retried; ``ServiceUnavailable`` when it stays
rate-limited (429), overloaded (529), failing (5xx) or unreachable after the
retries the deadline leaves room for; ``DeadlineExceeded`` when an answer
does not arrive in time.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, ServiceUnavailable
from ..types import (
    Answer, Choice, ChoiceAnswer, Noul, NoulAnswer, Question, Score, ScoreAnswer, Usage, probability,
)
from ._http import JsonEndpoint, checked_name, spend, usage_of

if TYPE_CHECKING:
    import httpx

    from ..config import Config

_SUM_TOLERANCE = 0.05  # probabilities rounded by a server still sum to about 1


class SystemOneDecider:
    """The ``Decider`` seam on a System One compatible service.

    ``url``: the endpoint (``https://api.typesafe.ai/v1/systemone``); ``model``: the model it names;
    ``api_key``: sent as a Bearer token (never shown in an error); ``deadline``: seconds one
    ``decide`` call may take; ``connect_timeout``: seconds to open a connection; ``price``: US
    dollars per million tokens (sent, received), for the costs each answer is charged;
    ``transport``: an ``httpx.BaseTransport`` the requests go through instead of the network (an
    ``httpx.MockTransport`` in tests, a proxy's).
    """

    remote = True  # a breaker guards it: when it is down, memory pauses

    def __init__(self, url: str, *, model: str = "jev-1.13.0", api_key: str | None = None,
                 deadline: float = 2.0, connect_timeout: float = 0.5,
                 price: tuple[float, float] = (0.0, 0.0),
                 transport: httpx.BaseTransport | None = None) -> None:
        self.name = checked_name(url)
        if not model:
            raise ConfigurationError("MEMSIFT_DECIDER_MODEL must not be empty")
        self.url = url
        self.model = model
        self.deadline = deadline
        self.price = price  # USD per million tokens (sent, received)
        self.spent = Usage()  # what every answer so far cost, all paths together (each is charged its own)
        self._spending = threading.Lock()
        self._endpoint = JsonEndpoint(
            self.name, deadline=deadline, connect_timeout=connect_timeout, transport=transport,
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            not_this_api="is MEMSIFT_DECIDER_URL a System One endpoint "
                         "(such as https://api.typesafe.ai/v1/systemone)?")

    @classmethod
    def from_config(cls, config: Config) -> SystemOneDecider:
        """The decider that ``MEMSIFT_DECIDER_*`` (or ``config.toml``) describes."""
        return cls(config.decider_url, model=config.decider_model, api_key=config.decider_api_key,
                   deadline=config.decider_deadline, connect_timeout=config.connect_timeout,
                   price=config.decider_price)

    def decide(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Answer]:
        """Every one of ``questions`` answered over ``state``, in one request, within ``deadline`` seconds."""
        if not questions:
            return {}
        payload = {"state": state, "model": self.model,
                   "questions": {qid: _question(q) for qid, q in questions.items()}}
        reply = self._endpoint.post(self.url, payload, time.monotonic() + self.deadline)
        answers = _answers(self.name, reply, questions)
        usage = usage_of(len(questions), reply.get("usage") if isinstance(reply, dict) else None, self.price)
        spend(self, usage)
        return answers

    def close(self) -> None:
        self._endpoint.close()


# -- the request ------------------------------------------------------------------

def _question(question: Question) -> dict[str, Any]:
    """A question as the API documents it; ``task`` is memsift's own and is not sent."""
    out: dict[str, Any] = {"type": question.type, "instructions": question.instructions}
    if isinstance(question, Noul):
        if question.criteria is not None:
            out["criteria"] = question.criteria  # {"true": ..., "false": ...}
    elif isinstance(question, Choice):
        out["criteria"] = question.options  # option -> description or None
    elif isinstance(question, Score):
        out["criteria"] = list(question.levels)  # ordered level descriptions
    else:
        raise TypeError(f"not a System One question: {question!r}")
    return out



# -- the answer -------------------------------------------------------------------

def _answers(name: str, payload: Any, questions: Mapping[str, Question]) -> dict[str, Answer]:
    """One answer per question asked, each of its question's type and in range."""
    answers = payload.get("answers") if isinstance(payload, dict) else None
    if not isinstance(answers, dict):
        raise ServiceUnavailable(f"{name} answered without an 'answers' object")
    out: dict[str, Answer] = {}
    for qid, question in questions.items():
        answer = answers.get(qid)
        if not isinstance(answer, dict):
            raise ServiceUnavailable(f"{name} gave no answer to question {qid!r}")
        if answer.get("type") != question.type:
            raise ServiceUnavailable(f"{name} answered the {question.type} question {qid!r} with "
                                     f"a {answer.get('type')!r} answer")
        try:
            out[qid] = _answer(answer, question)
        except (KeyError, TypeError, ValueError) as error:
            raise ServiceUnavailable(f"{name} gave a malformed answer to {question.type} question "
                                     f"{qid!r}: {error}") from None
    return out


def _answer(answer: dict[str, Any], question: Question) -> Answer:
    if isinstance(question, Noul):
        return NoulAnswer(probability(answer["noul"], "noul"))
    if isinstance(question, Choice):
        options = [str(option) for option in question.options]
        probabilities = _distribution(answer["probabilities"], options)
        choice = answer["choice"]
        if choice not in probabilities:
            raise ValueError(f"choice {choice!r} is not one of the options")
        return ChoiceAnswer(choice, probabilities, probability(answer["confidence"], "confidence"))
    levels = [str(level) for level in range(len(question.levels))]
    probabilities = _distribution(answer["probabilities"], levels)
    score = _number(answer["score"], "score")
    if not -1e-9 <= score <= len(levels) - 1 + 1e-9:  # a weighted sum may round past the top level
        raise ValueError(f"score {score} is outside levels 0..{len(levels) - 1}")
    return ScoreAnswer(score, probabilities, probability(answer["confidence"], "confidence"))


def _distribution(value: Any, keys: list[str]) -> dict[str, float]:
    """A probability for every key asked (an option left out has 0), summing to about 1."""
    if not isinstance(value, dict):
        raise TypeError("probabilities is not an object")
    unknown = set(value) - set(keys)
    if unknown:
        raise ValueError(f"probabilities for what was not asked: {sorted(unknown)[:5]}")
    out = {key: probability(value.get(key, 0.0), f"probability of {key!r}") for key in keys}
    if abs(sum(out.values()) - 1.0) > _SUM_TOLERANCE:
        raise ValueError(f"probabilities sum to {sum(out.values()):.3f}, not 1")
    return out


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"{what} is {value!r}, not a number")
    return float(value)

