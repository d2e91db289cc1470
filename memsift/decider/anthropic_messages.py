"""A decider on Anthropic's Messages API: a forced tool call whose input is one of the labels.

Anthropic gives no token probabilities, so each question is one
``POST {base}/messages`` that forces the tool ``answer``, whose input is an
enum of the labels (``yes``/``no``, a letter per option, a digit per level)
and a self-reported ``confidence``. The chosen label gets that confidence,
the others share the rest. These are not calibrated probabilities: every
answer's ``Usage`` says ``calibrated=False``, the trace shows it, and the
thresholds for this backend are set apart (an ``[anthropic]`` table in
``config.toml``).

    >>> decider = AnthropicDecider("https://api.anthropic.com/v1", model="claude-haiku-4-5", api_key="sk-ant-...")
    >>> decider.decide({"message": "why Stripe?"}, {"worth": Noul("worth", "Is this a technical choice?")})
    {'worth': NoulAnswer(noul=0.9, type='noul')}
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ServiceUnavailable
from ..types import Answer, Question, Usage
from ._http import JsonEndpoint, chat_target, url_and_model, spend, usage_of
from ._labels import SYSTEM, Asked, ask_each

if TYPE_CHECKING:
    import httpx

    from ..config import Config

API_VERSION = "2023-06-01"
TOOL = "answer"
MAX_TOKENS = 64  # a tool call with one label and a number


class AnthropicDecider:
    """The ``Decider`` seam on ``/v1/messages`` with forced tool use; answers are uncalibrated.

    Its arguments mean what ``OpenAICompatibleDecider``'s do: ``base_url``, ``model``, ``api_key``
    (sent as ``x-api-key``), ``deadline``, ``connect_timeout``, ``price``, ``workers`` and
    ``transport``; Anthropic gives no log-probabilities to probe, so there is no ``home``.
    """

    remote = True  # a breaker guards it: when it is down, memory pauses

    def __init__(self, base_url: str, *, model: str, api_key: str | None = None,
                 deadline: float = 2.0, connect_timeout: float = 0.5,
                 price: tuple[float, float] = (0.0, 0.0), workers: int = 8,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.name, self.url = chat_target(base_url, model, "/messages")
        self.model = model
        self.deadline = deadline
        self.price = price  # USD per million tokens (sent, received)
        self.spent = Usage(calibrated=False)
        self._spending = threading.Lock()
        self._workers = workers
        headers = {"anthropic-version": API_VERSION, **({"x-api-key": api_key} if api_key else {})}
        self._endpoint = JsonEndpoint(
            self.name, deadline=deadline, connect_timeout=connect_timeout, transport=transport,
            headers=headers, not_this_api="is MEMSIFT_DECIDER_URL Anthropic's base URL ending in /v1?")

    @classmethod
    def from_config(cls, config: Config) -> AnthropicDecider:
        url, model = url_and_model(config, "anthropic")
        return cls(url, model=model, api_key=config.decider_api_key, deadline=config.decider_deadline,
                   connect_timeout=config.connect_timeout, price=config.decider_price)

    def decide(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Answer]:
        """Every one of ``questions`` answered over ``state``, one request each, all within ``deadline`` seconds."""
        if not questions:
            return {}
        answers, usage = ask_each(state, questions, self._ask, seconds=self.deadline, workers=self._workers)
        spend(self, usage)
        return answers

    def structured(self, system: str, prompt: str, schema: Mapping[str, Any], *, name: str,
                   deadline: float) -> tuple[Any, Usage]:
        """The input of a forced tool call (named ``name``) following ``schema``, answered to ``prompt``
        under the ``system`` prompt by ``deadline`` (a ``time.monotonic()``), and what it cost."""
        reply = self._endpoint.post(self.url, self._payload(system, prompt, name, dict(schema), 4096), deadline)
        return self._tool_input(reply, name), usage_of(0, reply.get("usage"), self.price, calibrated=False)

    def close(self) -> None:
        self._endpoint.close()

    def _ask(self, asked: Asked, deadline: float) -> tuple[Answer, Usage]:
        schema = {"type": "object", "required": ["label", "confidence"], "additionalProperties": False,
                  "properties": {"label": {"type": "string", "enum": list(asked.labels)},
                                 "confidence": {"type": "number", "minimum": 0, "maximum": 1}}}
        reply = self._endpoint.post(self.url, self._payload(SYSTEM, asked.prompt, TOOL, schema, MAX_TOKENS),
                                    deadline)
        picked = self._tool_input(reply, TOOL)
        label, confidence = picked.get("label"), picked.get("confidence")
        if label not in asked.labels:
            raise ServiceUnavailable(f"{self.name} picked {label!r}, not one of {', '.join(asked.labels)}")
        if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
            raise ServiceUnavailable(f"{self.name} gave a confidence of {confidence!r}, not a number in 0..1")
        usage = usage_of(1, reply.get("usage"), self.price, calibrated=False)
        return asked.answer(_spread(label, float(confidence), asked.labels)), usage

    def _payload(self, system: str, prompt: str, tool: str, schema: dict[str, Any],
                 max_tokens: int) -> dict[str, Any]:
        return {"model": self.model, "max_tokens": max_tokens, "temperature": 0, "system": system,
                "messages": [{"role": "user", "content": prompt}],
                "tools": [{"name": tool, "description": "Give the answer.", "input_schema": schema}],
                "tool_choice": {"type": "tool", "name": tool}}

    def _tool_input(self, reply: Any, tool: str) -> dict[str, Any]:
        content = reply.get("content") if isinstance(reply, dict) else None
        for block in content if isinstance(content, list) else []:
            if (isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == tool
                    and isinstance(block.get("input"), dict)):
                return dict(block["input"])
        raise ServiceUnavailable(f"{self.name} answered without calling the tool {tool!r}")


def _spread(label: str, confidence: float, labels: tuple[str, ...]) -> dict[str, float]:
    """The picked label gets its confidence (at least an even share: it was picked), the others the rest."""
    share = max(confidence, 1 / len(labels))
    rest = (1 - share) / (len(labels) - 1)
    return {other: share if other == label else rest for other in labels}
