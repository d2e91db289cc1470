"""OpenAI-compatible and Anthropic chat services on 127.0.0.1, checking requests against the contracts.

``OpenAIService`` serves ``POST /v1/chat/completions`` as OpenAI documents it:
a Bearer key, a known ``model``, ``messages`` of ``{role, content}``; with
``logprobs``/``top_logprobs`` it answers one token and its top
log-probabilities (``choices[0].logprobs.content[0].top_logprobs``); with a
``response_format`` of ``json_schema`` it answers the JSON text of an object
(``choices[0].message.content``). A model named in ``refuses_logprobs``
answers 400 as OpenAI does for reasoning models; ``drops_logprobs`` makes it
leave them out silently, as old Ollama builds did.

``AnthropicService`` serves ``POST /v1/messages``: ``x-api-key`` and
``anthropic-version`` headers, ``model``, ``max_tokens``, ``messages``, the
``tools`` and a ``tool_choice`` forcing one of them; it answers with a
``tool_use`` block whose input follows the tool's ``enum``.

What the "model" says comes from ``answerer(prompt, labels)``: a weight per
label (the default reads the prompt's hash, so it is stable per request).
Token counts are a stand-in: a quarter of the prompt's characters, as the
System One stub counts them; they are not a real tokenizer's.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from http_service import JsonService, Received, Scripted

Answerer = Callable[[str, list[str]], Mapping[str, float]]
Structurer = Callable[[str, Mapping[str, Any]], Any]  # (prompt, schema) -> the object answered


def hashed_weights(prompt: str, labels: list[str]) -> dict[str, float]:
    return {label: 1.0 + zlib.crc32(f"{prompt}|{label}".encode()) % 1000 / 1000 for label in labels}


def labels_in(prompt: str) -> list[str]:
    """The labels a prompt offers, from its last line ("Answer with one label: A, B, C.")."""
    found = re.search(r"Answer with one label: (.+)\.$", prompt)
    assert found, f"no labels offered in {prompt[-200:]!r}"
    return found.group(1).split(", ")


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _error(status: int, message: str, kind: str = "invalid_request_error", param: str | None = None) -> Scripted:
    return Scripted(status, {"error": {"message": message, "type": kind, "param": param, "code": None}})


class ChatService(JsonService):
    """What the two chat services share: a base URL ending in /v1, the key they expect, and how
    they answer a question (``answerer``) or a structured request (``structurer``)."""

    def __init__(self, *, api_key: str | None, answerer: Answerer, structurer: Structurer | None) -> None:
        super().__init__()
        self.base_url = self.url + "/v1"
        self.api_key = api_key
        self.answerer = answerer
        self.structurer = structurer


class OpenAIService(ChatService):
    MODELS = frozenset({"gpt-4.1-mini", "qwen2.5-1.5b-instruct", "o4-mini"})

    def __init__(self, *, api_key: str | None = None, answerer: Answerer = hashed_weights,
                 structurer: Structurer | None = None) -> None:
        super().__init__(api_key=api_key, answerer=answerer, structurer=structurer)
        self.refuses_logprobs = {"o4-mini"}
        self.drops_logprobs = False
        self.answer_format = "plain"  # "spaced": tokens as " Yes"; "missing": no label among the top ones

    def serve(self, received: Received) -> Scripted:
        if received.path != "/v1/chat/completions":
            return _error(404, f"Unknown request URL: POST {received.path}", "invalid_request_error")
        if self.api_key and received.headers.get("authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided", "invalid_request_error")
        try:
            request = received.json()
        except ValueError:
            return _error(400, "We could not parse the JSON body of your request.")
        refusal = self._validate(request)
        if refusal is not None:
            return refusal
        prompt = request["messages"][-1]["content"]
        usage = {"prompt_tokens": sum(tokens(m["content"]) for m in request["messages"])}
        if "response_format" in request:
            assert self.structurer is not None, "this service was not given structured answers"
            content = self.structurer(prompt, request["response_format"]["json_schema"]["schema"])
            text = content if isinstance(content, str) else json.dumps(content)
            return self._completion(request, text, None, {**usage, "completion_tokens": tokens(text)})
        top = self._top_logprobs(prompt, request["top_logprobs"])
        logprobs = None if self.drops_logprobs else {"content": [{**top[0], "top_logprobs": top}]}
        return self._completion(request, top[0]["token"], logprobs, {**usage, "completion_tokens": 1})

    def _validate(self, request: Any) -> Scripted | None:
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list) or not request["messages"]:
            return _error(400, "'messages' is a required property", param="messages")
        for message in request["messages"]:
            if set(message) != {"role", "content"} or message["role"] not in ("system", "user", "assistant") \
                    or not isinstance(message["content"], str):
                return _error(400, f"Invalid message: {message!r}"[:200], param="messages")
        if request.get("model") not in self.MODELS:
            return _error(404, f"The model `{request.get('model')}` does not exist", "invalid_request_error",
                          param="model")
        allowed = {"model", "messages", "max_tokens", "temperature", "logprobs", "top_logprobs", "response_format"}
        if set(request) - allowed:
            return _error(400, f"Unrecognized request arguments: {sorted(set(request) - allowed)}")
        if "response_format" in request:
            form = request["response_format"]
            if form.get("type") != "json_schema" or not isinstance(form.get("json_schema", {}).get("schema"), dict):
                return _error(400, "response_format must be a json_schema", param="response_format")
            return None
        if request.get("logprobs") is not True or not isinstance(request.get("top_logprobs"), int) \
                or not 0 <= request["top_logprobs"] <= 20:
            return _error(400, "top_logprobs must be an integer between 0 and 20 with logprobs true",
                          param="top_logprobs")
        if request["model"] in self.refuses_logprobs:
            return _error(400, "logprobs are not supported with reasoning models", param="logprobs")
        if request.get("max_tokens") != 1:
            return _error(400, "this service is asked for one token", param="max_tokens")
        return None

    def _top_logprobs(self, prompt: str, k: int) -> list[dict[str, Any]]:
        labels = labels_in(prompt)
        weights = dict(self.answerer(prompt, labels))
        # Some mass goes to tokens that are no label: renormalising over the labels removes it.
        weights = {**weights, "The": 0.3, "I": 0.2}
        if self.answer_format == "missing":
            weights = {"The": 0.5, "I": 0.5}
        total = sum(weights.values())
        ranked = sorted(((w / total, t) for t, w in weights.items() if w > 0), reverse=True)[:k]
        spell = (lambda t: f" {t.capitalize()}") if self.answer_format == "spaced" else (lambda t: t)
        return [{"token": spell(t) if t not in ("The", "I") else t, "logprob": math.log(p),
                 "bytes": list(spell(t).encode())} for p, t in ranked]

    def _completion(self, request: dict[str, Any], text: str, logprobs: Any, usage: dict[str, int]) -> Scripted:
        return Scripted(200, {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1764547200, "model": request["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "logprobs": logprobs, "finish_reason": "length" if logprobs else "stop"}],
            "usage": {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]},
        })


class AnthropicService(ChatService):
    MODELS = frozenset({"claude-haiku-4-5", "claude-sonnet-4-5"})

    def __init__(self, *, api_key: str = "sk-ant-test", answerer: Answerer = hashed_weights,
                 structurer: Structurer | None = None) -> None:
        super().__init__(api_key=api_key, answerer=answerer, structurer=structurer)
        self.confidence = 0.8
        self.pick: str | None = None  # a label to pick whatever the enum says (a model gone astray)
        self.skip_tool = False  # answer with text, not the forced tool call

    def serve(self, received: Received) -> Scripted:
        if received.path != "/v1/messages":
            return _anthropic_error(404, "not_found_error", f"no route {received.path}")
        if received.headers.get("x-api-key") != self.api_key:
            return _anthropic_error(401, "authentication_error", "invalid x-api-key")
        if received.headers.get("anthropic-version") != "2023-06-01":
            return _anthropic_error(400, "invalid_request_error", "anthropic-version header is required")
        try:
            request = received.json()
        except ValueError:
            return _anthropic_error(400, "invalid_request_error", "the body is not JSON")
        refusal = self._validate(request)
        if refusal is not None:
            return refusal
        tool = request["tools"][0]
        prompt = request["messages"][-1]["content"]
        schema = tool["input_schema"]
        if "label" in schema.get("properties", {}):
            labels = schema["properties"]["label"]["enum"]
            weights = self.answerer(prompt, labels)
            label = self.pick or max(labels, key=lambda lb: weights.get(lb, 0.0))
            tool_input: Any = {"label": label, "confidence": self.confidence}
        else:
            assert self.structurer is not None, "this service was not given structured answers"
            tool_input = self.structurer(prompt, schema)
        block = ({"type": "text", "text": "I think the answer is yes."} if self.skip_tool else
                 {"type": "tool_use", "id": "toolu_01", "name": tool["name"], "input": tool_input})
        sent = tokens(request.get("system", "")) + tokens(prompt) + tokens(json.dumps(request["tools"]))
        return Scripted(200, {"id": "msg_01", "type": "message", "role": "assistant", "model": request["model"],
                              "content": [block], "stop_reason": "tool_use", "stop_sequence": None,
                              "usage": {"input_tokens": sent, "output_tokens": tokens(json.dumps(block))}})

    def _validate(self, request: Any) -> Scripted | None:
        def bad(message: str) -> Scripted:
            return _anthropic_error(400, "invalid_request_error", message)

        if not isinstance(request, dict):
            return bad("the body must be an object")
        for key in ("model", "max_tokens", "messages"):
            if key not in request:
                return bad(f"{key}: Field required")
        if request["model"] not in self.MODELS:
            return _anthropic_error(404, "not_found_error", f"model: {request['model']}")
        allowed = {"model", "max_tokens", "messages", "system", "temperature", "tools", "tool_choice"}
        if set(request) - allowed:
            return bad(f"{sorted(set(request) - allowed)[0]}: Extra inputs are not permitted")
        if not isinstance(request["max_tokens"], int) or request["max_tokens"] < 1:
            return bad("max_tokens: must be a positive integer")
        messages = request["messages"]
        if not messages or any(set(m) != {"role", "content"} or m["role"] not in ("user", "assistant")
                               for m in messages) or messages[0]["role"] != "user":
            return bad("messages: must alternate user and assistant turns, starting with user")
        tools = request.get("tools")
        if not isinstance(tools, list) or len(tools) != 1 or not {"name", "input_schema"} <= set(tools[0]) \
                or tools[0]["input_schema"].get("type") != "object":
            return bad("tools: each tool has a name and an object input_schema")
        if request.get("tool_choice") != {"type": "tool", "name": tools[0]["name"]}:
            return bad("tool_choice: memsift forces its one tool")
        return None


def _anthropic_error(status: int, kind: str, message: str) -> Scripted:
    return Scripted(status, {"type": "error", "error": {"type": kind, "message": message}})
