"""A decider on any OpenAI-compatible chat API that returns token log-probabilities.

OpenAI, vLLM, llama.cpp's ``llama-server``, Ollama, OpenRouter's chat route:
each question is one ``POST {base}/chat/completions`` asking for one token
of a few single-token labels (``yes``/``no``, a letter per option, a digit
per level) with ``logprobs`` and ``top_logprobs``; the labels' probabilities
are read from the top log-probabilities and renormalised over the labels.
The questions of one call run concurrently, all within the one deadline.

    >>> decider = OpenAICompatibleDecider("http://127.0.0.1:8080/v1", model="qwen2.5-1.5b-instruct")
    >>> decider.decide({"message": "why Stripe?"}, {"worth": Noul("worth", "Is this a technical choice?")})
    {'worth': NoulAnswer(noul=0.91, type='noul')}

A model that refuses log-probabilities (reasoning models answer 400
"logprobs are not supported"; some servers drop the field silently) cannot
give calibrated answers: that is a ``ConfigurationError``, found on the first
request and remembered in ``<home>/decider-probe.json``, so later hooks fail
at once without asking and ``memsift doctor`` can say why
(``logprob_support``).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, MemsiftError, ServiceUnavailable
from .._fs.files import locked, read_regular, write_atomically
from ..types import Answer, Noul, Question, Usage
from ._http import JsonEndpoint, chat_target, url_and_model, error_message, spend, usage_of
from ._labels import SYSTEM, Asked, ask_each

if TYPE_CHECKING:
    import httpx

    from ..config import Config

PROBE_FILE = "decider-probe.json"
TOP_LOGPROBS = 20  # OpenAI's most; vLLM's default --max-logprobs
REPROBE_AFTER = 3600.0  # seconds a refusal is believed: a fixed server is asked again after it


class LogprobsRefused(ConfigurationError):
    """The model gives no token log-probabilities: choose a model that does."""


class OpenAICompatibleDecider:
    """The ``Decider`` seam on ``/v1/chat/completions`` with log-probabilities.

    ``base_url``: the API's base URL, ending in ``/v1``; ``model``: the model to ask; ``api_key``:
    sent as the service expects it (never shown in an error); ``deadline``: seconds one ``decide``
    call may take, all its questions together; ``connect_timeout``: seconds to open a connection;
    ``price``: US dollars per million tokens (sent, received), for the costs each answer is charged;
    ``workers``: how many of one call's questions are asked at once; ``transport``: an
    ``httpx.BaseTransport`` the requests go through instead of the network (an
    ``httpx.MockTransport`` in tests, a proxy's).
    ``home``: memsift's home, where the models found to refuse log-probabilities are remembered
    (None: they are not).

    >>> OpenAICompatibleDecider("http://127.0.0.1:8080/v1", model="qwen2.5-1.5b-instruct", deadline=2.0)
    """

    remote = True  # a breaker guards it: when it is down, memory pauses

    def __init__(self, base_url: str, *, model: str, api_key: str | None = None,
                 deadline: float = 2.0, connect_timeout: float = 0.5,
                 price: tuple[float, float] = (0.0, 0.0), home: Path | None = None,
                 workers: int = 8, transport: httpx.BaseTransport | None = None) -> None:
        self.name, self.url = chat_target(base_url, model, "/chat/completions")
        self.model = model
        self.deadline = deadline
        self.price = price  # USD per million tokens (sent, received)
        self.spent = Usage()  # what every answer so far cost, all paths together (each is charged its own)
        self._spending = threading.Lock()
        self._probes = _Probes(home) if home is not None else None
        self._known_good = False
        self._workers = workers
        self._endpoint = JsonEndpoint(
            self.name, deadline=deadline, connect_timeout=connect_timeout, transport=transport,
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            not_this_api="is MEMSIFT_DECIDER_URL an OpenAI-compatible base URL ending in /v1?")

    @classmethod
    def from_config(cls, config: Config) -> OpenAICompatibleDecider:
        """The decider ``MEMSIFT_DECIDER_URL``/``_MODEL``/``_API_KEY`` describe (a base URL ending in /v1)."""

        url, model = url_and_model(config, "openai")
        return cls(url, model=model, api_key=config.decider_api_key, deadline=config.decider_deadline,
                   connect_timeout=config.connect_timeout, price=config.decider_price, home=config.home)

    def decide(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Answer]:
        """Every one of ``questions`` answered over ``state``, one request each, all within ``deadline`` seconds."""
        if not questions:
            return {}
        if not self._known_good and self._probes is not None:  # read once per process, until it answers
            refusal = self._probes.refusal(self.url, self.model)
            if refusal:
                raise LogprobsRefused(refusal)
        answers, usage = ask_each(state, questions, self._ask, seconds=self.deadline, workers=self._workers)
        if not self._known_good and self._probes is not None:
            known = self._probes.known(self.url, self.model)
            if known is None or known.get("refused"):  # written when it changes, not on every hook
                self._probes.record(self.url, self.model, "")
        self._known_good = True
        spend(self, usage)
        return answers

    def structured(self, system: str, prompt: str, schema: Mapping[str, Any], *, name: str,
                   deadline: float) -> tuple[Any, Usage]:
        """A JSON object following ``schema`` (strict structured output, named ``name``), answered to
        ``prompt`` under the ``system`` prompt by ``deadline`` (a ``time.monotonic()``), and what it cost.

        Raises ``ServiceUnavailable`` when the answer is not such an object's JSON text.
        """
        payload = {"model": self.model, "temperature": 0,
                   "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
                   "response_format": {"type": "json_schema",
                                       "json_schema": {"name": name, "strict": True, "schema": schema}}}
        reply = self._endpoint.post(self.url, payload, deadline)
        try:
            content = reply["choices"][0]["message"]["content"]
            return json.loads(content), usage_of(0, reply.get("usage"), self.price)
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise ServiceUnavailable(f"{self.name} gave no JSON object: {error!r}") from None

    def close(self) -> None:
        self._endpoint.close()

    def _ask(self, asked: Asked, deadline: float) -> tuple[Answer, Usage]:
        payload = {"model": self.model, "max_tokens": 1, "temperature": 0,
                   "logprobs": True, "top_logprobs": TOP_LOGPROBS,
                   "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": asked.prompt}]}
        try:
            reply = self._endpoint.post(self.url, payload, deadline, refused=self._refused)
            top = _top_logprobs(self.name, reply)
        except LogprobsRefused as refused:
            if self._probes is not None:
                self._probes.record(self.url, self.model, str(refused))
            raise
        probabilities = _over_labels(top, asked.labels)
        if probabilities is None:
            raise ServiceUnavailable(f"{self.name} put none of the labels {', '.join(asked.labels)} "
                                     f"among its top {TOP_LOGPROBS} tokens")
        return asked.answer(probabilities), usage_of(1, reply.get("usage"), self.price)

    def _refused(self, status: int, body: Any) -> MemsiftError | None:
        said = error_message(body)
        if status == 400 and "logprob" in said.lower():
            return LogprobsRefused(f"{self.name} answered {status}: the model {self.model!r} gives no "
                                   f"log-probabilities ({said}); choose a non-reasoning model, or "
                                   "MEMSIFT_DECIDER=anthropic for forced choices")
        if status == 404 and "model" in said.lower():
            return ConfigurationError(f"{self.name} answered {status}: {said}; check MEMSIFT_DECIDER_MODEL")
        return None


def _top_logprobs(name: str, reply: Any) -> list[tuple[str, float]]:
    """(token, logprob) of the first generated token's alternatives; a refusal when there are none."""
    try:
        choice = reply["choices"][0]
    except (KeyError, IndexError, TypeError):
        raise ServiceUnavailable(f"{name} answered without choices") from None
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content:  # a server that silently drops logprobs (older Ollama) lands here
        raise LogprobsRefused(f"{name} answered without log-probabilities; the server or model does not "
                              "give them (an Ollama older than 0.12.11, a reasoning model?)")
    first = content[0] if isinstance(content[0], dict) else {}
    alternatives = first.get("top_logprobs") or [first]
    out: list[tuple[str, float]] = []
    for entry in alternatives:
        token, logprob = (entry.get("token"), entry.get("logprob")) if isinstance(entry, dict) else (None, None)
        if isinstance(token, str) and isinstance(logprob, int | float) and not isinstance(logprob, bool) \
                and logprob <= 0 and not math.isnan(logprob):
            out.append((token, float(logprob)))
        else:
            raise ServiceUnavailable(f"{name} gave a malformed top_logprobs entry: {entry!r}"[:300])
    return out


def _over_labels(top: list[tuple[str, float]], labels: tuple[str, ...]) -> dict[str, float] | None:
    """Each label's probability renormalised over the labels; None when no label is among them.

    Tokens are compared trimmed and case-folded (" Yes", "yes" and "YES" are one label, their
    probabilities summed); a label outside the top tokens gets 0.
    """
    wanted = {label.casefold(): label for label in labels}
    mass = dict.fromkeys(labels, 0.0)
    for token, logprob in top:
        label = wanted.get(token.strip().casefold())
        if label is not None:
            mass[label] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0:
        return None
    return {label: value / total for label, value in mass.items()}


class _Probes:
    """Which (endpoint, model) pairs were found to refuse log-probabilities, in ``<home>/decider-probe.json``."""

    def __init__(self, home: Path) -> None:
        self.path = Path(home) / PROBE_FILE

    def refusal(self, url: str, model: str) -> str:
        """Why this model was found to refuse log-probabilities ('' if it was not, or is not known)."""
        entry = self.known(url, model) or {}
        fresh = isinstance(entry.get("at"), int | float) and time.time() - entry["at"] < REPROBE_AFTER
        return str(entry.get("refused") or "") if fresh else ""

    def known(self, url: str, model: str) -> dict[str, Any] | None:
        entry = self._read().get(f"{url} {model}")
        return entry if isinstance(entry, dict) else None

    def record(self, url: str, model: str, refused: str) -> None:
        with locked(self.path):
            data = self._read()
            data[f"{url} {model}"] = {"refused": refused, "at": time.time()}
            write_atomically(self.path, json.dumps(data, indent=1))

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(read_regular(self.path))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}


def logprob_support(config: Config, *, probe: bool = False) -> tuple[bool | None, str]:
    """Whether the OpenAI-compatible model ``config`` names gives log-probabilities, for ``memsift doctor``.

    ``(True, "")`` when it was seen to, ``(False, why)`` when it refused, ``(None, "not probed
    yet")`` when no request has told; ``probe=True`` asks it one question now to find out (a
    service that is down or refuses the key raises ``ServiceUnavailable`` / ``ConfigurationError``).

    >>> logprob_support(load_config())
    (False, "decider at api.openai.com answered 400: the model 'o4-mini' gives no log-probabilities ...")
    """
    decider = OpenAICompatibleDecider.from_config(config)
    probes = _Probes(config.home)
    if probe:
        try:
            decider.decide({"message": "memsift doctor"}, {"probe": Noul("probe", "Is this a test?")})
        except LogprobsRefused as refused:
            return False, str(refused)
        finally:
            decider.close()
    entry = probes.known(decider.url, decider.model)
    if entry is None:
        return None, "not probed yet"
    return (False, str(entry["refused"])) if entry.get("refused") else (True, "")
