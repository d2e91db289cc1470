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

import json
import math
import time
import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import ConfigurationError, DeadlineExceeded, ServiceUnavailable
from ..remote import read_within
from ..types import Answer, Choice, ChoiceAnswer, Noul, NoulAnswer, Question, Score, ScoreAnswer

if TYPE_CHECKING:
    import httpx
    import tenacity

    from ..config import Config

# httpx and tenacity cost about 120 ms to import: they are imported on the first
# request, so a process that builds the decider but never asks it pays nothing.

_MAX_ATTEMPTS = 6
_LEAST_ATTEMPT = 0.05  # a retry with less time than this left could not get an answer back
_SUM_TOLERANCE = 0.05  # probabilities rounded by a server still sum to about 1


class SystemOneDecider:
    """The ``Decider`` seam on a System One compatible service."""

    remote = True  # a breaker guards it: when it is down, memory pauses

    def __init__(self, url: str, *, model: str = "jev-1.13.0", api_key: str | None = None,
                 deadline: float = 2.0, connect_timeout: float = 0.5,
                 transport: httpx.BaseTransport | None = None) -> None:
        parts = urllib.parse.urlsplit(url or "")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigurationError(f"MEMSIFT_DECIDER_URL must be an http(s) URL, not {url!r}")
        if not model:
            raise ConfigurationError("MEMSIFT_DECIDER_MODEL must not be empty")
        self.url = url
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        # The host only: the breaker and the agent's notice must never show a key put in the URL.
        self.name = f"decider at {host}" + (f":{parts.port}" if parts.port else "")
        self.model = model
        self.deadline = deadline
        self._api_key = api_key
        self._connect_timeout = connect_timeout
        self._transport = transport
        self._client: httpx.Client | None = None

    @classmethod
    def from_config(cls, config: Config) -> SystemOneDecider:
        """The decider that ``MEMSIFT_DECIDER_*`` (or ``config.toml``) describes."""
        return cls(config.decider_url, model=config.decider_model, api_key=config.decider_api_key,
                   deadline=config.decider_deadline, connect_timeout=config.connect_timeout)

    def decide(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Answer]:
        """Every question answered over *state*, in one request, within ``deadline`` seconds."""
        if not questions:
            return {}
        deadline = time.monotonic() + self.deadline
        body = json.dumps({"state": state, "model": self.model,
                           "questions": {qid: _question(q) for qid, q in questions.items()}},
                          default=_plain, ensure_ascii=False).encode()
        reply = self._post(body, deadline)
        return _answers(self.name, self._payload(reply), questions)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # -- HTTP: deadline, retries, error mapping ----------------------------------

    def _post(self, body: bytes, deadline: float) -> _Reply:
        """The service's answer; retried on 429, 5xx and lost connections while the deadline allows."""
        import httpx
        import tenacity

        backoff = tenacity.wait_exponential(multiplier=0.1, max=1.0) + tenacity.wait_random(0, 0.1)

        def wait(attempt: tenacity.RetryCallState) -> float:
            outcome = attempt.outcome
            asked = None if outcome is None or outcome.failed else outcome.result().retry_after
            return asked if asked is not None else backoff(attempt)

        def stop(attempt: tenacity.RetryCallState) -> bool:
            # Give up now, not after a sleep the deadline has no room for.
            too_late = time.monotonic() + attempt.upcoming_sleep + _LEAST_ATTEMPT >= deadline
            return too_late or attempt.attempt_number >= _MAX_ATTEMPTS

        retrying = tenacity.Retrying(
            retry=(tenacity.retry_if_exception(_connection_failed)
                   | tenacity.retry_if_result(lambda reply: reply.busy)),
            wait=wait, stop=stop,
            retry_error_callback=lambda attempt: attempt.outcome.result(),  # the last answer stands
        )
        try:
            return retrying(self._attempt, body, deadline)
        except httpx.ConnectTimeout as error:
            raise ServiceUnavailable(f"{self.name} did not accept a connection within "
                                     f"{self._connect_timeout:g} s") from error
        except httpx.TimeoutException as error:
            raise DeadlineExceeded(f"{self.name} did not answer within {self.deadline:g} s") from error
        except httpx.TransportError as error:
            raise ServiceUnavailable(f"{self.name} is unreachable: {error or type(error).__name__}") from error

    def _attempt(self, body: bytes, deadline: float) -> _Reply:
        import httpx

        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded(f"{self.name}: no time left of its {self.deadline:g} s deadline")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        client = self._http()
        timeout = httpx.Timeout(remaining, connect=min(self._connect_timeout, remaining))
        request = client.build_request("POST", self.url, content=body, headers=headers, timeout=timeout)
        status, read, answered = read_within(client, request, deadline,
                                             late=f"{self.name} did not answer within {self.deadline:g} s")
        return _Reply(status, read, _retry_after(answered))

    def _payload(self, reply: _Reply) -> Any:
        """The JSON of a successful reply; otherwise the memsift error its status means."""
        said = f"{self.name} answered {reply.status}"
        if 200 <= reply.status < 300:
            try:
                return json.loads(reply.body)
            except ValueError as error:
                raise ServiceUnavailable(f"{said} with something that is not JSON") from error
        body = _json_or_text(reply.body)
        if reply.status in (401, 403):
            raise ConfigurationError(f"{said}: the key was refused ({_message(body)}); "
                                     "check MEMSIFT_DECIDER_API_KEY")
        if reply.status == 422:
            field = _field(body)
            at = f" at field {field!r}" if field else ""
            hint = ("check MEMSIFT_DECIDER_MODEL" if field == "model"
                    else "is the service System One compatible?")
            raise ConfigurationError(f"{said}: it refused the request{at} ({_message(body)}); {hint}")
        if reply.busy:
            why = {429: "rate limited", 529: "overloaded"}.get(reply.status, _message(body))
            wait = f", asked to wait {reply.retry_after:g} s" if reply.retry_after else ""
            raise ServiceUnavailable(f"{said}: {why}{wait}; gave up within the "
                                     f"{self.deadline:g} s deadline")
        raise ConfigurationError(f"{said}: {_message(body)}; is MEMSIFT_DECIDER_URL a System One "
                                 "endpoint (such as https://api.typesafe.ai/v1/systemone)?")

    def _http(self) -> httpx.Client:
        if self._client is None:  # one keep-alive client: the recall path asks up to four times
            import httpx

            self._client = httpx.Client(headers={"User-Agent": "memsift"}, transport=self._transport)
        return self._client


class _Reply(NamedTuple):
    """A whole HTTP answer, read within the deadline."""

    status: int
    body: bytes
    retry_after: float | None  # seconds the server asked us to wait, if it did

    @property
    def busy(self) -> bool:
        """Rate-limited, overloaded or failing: worth another try."""
        return self.status == 429 or self.status >= 500


def _connection_failed(error: BaseException) -> bool:
    """No answer was had: another try may get one. A read timeout has spent the time: not retried."""
    import httpx

    return isinstance(error, httpx.TransportError) and (
        isinstance(error, httpx.ConnectTimeout) or not isinstance(error, httpx.TimeoutException))


def _retry_after(headers: httpx.Headers) -> float | None:
    """``retry-after-ms``, or ``retry-after`` in seconds or as an HTTP date."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            import email.utils  # only for the rare date form

            try:
                seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
            except (TypeError, ValueError):
                continue
        if math.isfinite(seconds):
            return max(0.0, seconds)
    return None


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


def _plain(value: Any) -> Any:
    """JSON for what ``json`` does not know: read-only mappings, sets, attrs values."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    raise TypeError(f"cannot send a {type(value).__name__} to a System One service")


# -- the answer -------------------------------------------------------------------

def _json_or_text(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return body[:300].decode(errors="replace")


def _field(body: Any) -> str | None:
    """The field a validation error names, from the shapes servers use:
    ``{"detail": [{"loc": [...]}]}`` (FastAPI), ``{"error": {"field"|"param"|"path": ...}}``,
    ``{"field": ...}``, ``{"errors": {field: [...]}}``."""
    if not isinstance(body, dict):
        return None
    detail = body.get("detail")
    if isinstance(detail, list) and detail and isinstance(detail[0], dict) and detail[0].get("loc"):
        loc = [str(part) for part in detail[0]["loc"]]
        return ".".join(loc[1:] if loc[0] == "body" and len(loc) > 1 else loc)
    for holder in (body.get("error"), body):
        if isinstance(holder, dict):
            for key in ("field", "param", "path", "loc"):
                if isinstance(holder.get(key), str | list):
                    value = holder[key]
                    return value if isinstance(value, str) else ".".join(map(str, value))
    errors = body.get("errors")
    if isinstance(errors, dict) and errors:
        return str(next(iter(errors)))
    return None


def _message(body: Any) -> str:
    if isinstance(body, str):
        return body or "(empty answer)"
    if isinstance(body, dict):
        for key in ("error", "message", "detail"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, dict) and isinstance(value.get("message"), str):
                return value["message"]
            if isinstance(value, list) and value:
                return "; ".join(str(e.get("msg", e)) if isinstance(e, dict) else str(e) for e in value)
    return json.dumps(body)[:300]


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
        return NoulAnswer(_probability(answer["noul"], "noul"))
    if isinstance(question, Choice):
        options = [str(option) for option in question.options]
        probabilities = _distribution(answer["probabilities"], options)
        choice = answer["choice"]
        if choice not in probabilities:
            raise ValueError(f"choice {choice!r} is not one of the options")
        return ChoiceAnswer(choice, probabilities, _probability(answer["confidence"], "confidence"))
    levels = [str(level) for level in range(len(question.levels))]
    probabilities = _distribution(answer["probabilities"], levels)
    score = _number(answer["score"], "score")
    if not -1e-9 <= score <= len(levels) - 1 + 1e-9:  # a weighted sum may round past the top level
        raise ValueError(f"score {score} is outside levels 0..{len(levels) - 1}")
    return ScoreAnswer(score, probabilities, _probability(answer["confidence"], "confidence"))


def _distribution(value: Any, keys: list[str]) -> dict[str, float]:
    """A probability for every key asked (an option left out has 0), summing to about 1."""
    if not isinstance(value, dict):
        raise TypeError("probabilities is not an object")
    unknown = set(value) - set(keys)
    if unknown:
        raise ValueError(f"probabilities for what was not asked: {sorted(unknown)[:5]}")
    out = {key: _probability(value.get(key, 0.0), f"probability of {key!r}") for key in keys}
    if abs(sum(out.values()) - 1.0) > _SUM_TOLERANCE:
        raise ValueError(f"probabilities sum to {sum(out.values()):.3f}, not 1")
    return out


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"{what} is {value!r}, not a number")
    return float(value)


def _probability(value: Any, what: str) -> float:
    number = _number(value, what)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{what} is {number}, not a probability")
    return number
