"""A stand-in for the hosted LLM that Cognee's cognify needs: NOT a model.

Cognee cannot cognify without an LLM, and no hosted model is reachable from
the test machines, so this speaks just enough of the OpenAI wire format for
Cognee's own code to run for real. Embeddings are not served here: the tests
give Cognee real MiniLM embeddings.

    POST /v1/chat/completions  structured requests (json_schema, or json_object
                               with the schema in a ```json block of the prompt)
                               get the smallest JSON the schema accepts, with
                               strings taken from the user's text (so graph
                               extraction finds nothing and a summary is the
                               chunk's first words); plain requests get one
                               canned sentence.
    GET  /v1/models            the one model it claims to be
    GET  /stats                how many chat calls it answered (tests use it to
                               prove a search made no LLM call)

    python tests/cognee/standin_llm.py --port 0   # prints "listening on http://127.0.0.1:PORT"

Standard library only; binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "gpt-4o-mini"  # a name litellm knows to support json_schema output
_calls = {"chat": 0, "structured": 0}
_calls_lock = threading.Lock()


def smallest_instance(schema: Any, root: dict, text: str, depth: int = 0) -> Any:
    """The smallest value that *schema* accepts: empty lists, required keys only.

    >>> smallest_instance({"type": "object", "properties": {"n": {"type": "integer"}}}, {}, "")
    {'n': 0}
    """
    schema = _follow_refs(schema, root)
    if depth > 12 or not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("default") is not None:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [_follow_refs(option, root) for option in schema[key]]
            if any(option.get("type") == "null" for option in options):
                return None
            return smallest_instance(options[0], root, text, depth + 1)
    if "allOf" in schema:
        merged: dict = {}
        for part in schema["allOf"]:
            merged.update(_follow_refs(part, root))
        return smallest_instance(merged, root, text, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = None if "null" in kind else kind[0]
        if kind is None:
            return None
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties", {})
        required = schema.get("required", list(properties))
        return {name: smallest_instance(properties[name], root, text, depth + 1)
                for name in required if name in properties}
    if kind == "array":
        return [smallest_instance(schema.get("items", {}), root, text, depth + 1)
                for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return _string_for(schema, text)
    if kind in ("integer", "number"):
        low = schema.get("minimum", 0)
        return int(low) if kind == "integer" else float(low)
    if kind == "boolean":
        return False
    return None


def _follow_refs(schema: Any, root: dict) -> Any:
    for _ in range(50):  # refs can chain; a cycle must not hang the server
        if not (isinstance(schema, dict) and "$ref" in schema):
            break
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _string_for(schema: dict, text: str) -> str:
    formats = {"date-time": "2000-01-01T00:00:00Z", "date": "2000-01-01",
               "uuid": "00000000-0000-0000-0000-000000000000"}
    if schema.get("format") in formats:
        return formats[schema["format"]]
    value = " ".join(text.split())[:200] or "n/a"
    value = value[: schema.get("maxLength", len(value))]
    return value.ljust(schema.get("minLength", 0), "x")


def _text_of(content: Any) -> str:
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _schema_in_prompt(messages: list[dict]) -> dict | None:
    for message in messages:
        found = re.search(r"```json\s*(\{.*?\})\s*```", _text_of(message.get("content")), re.S)
        if found:
            try:
                return json.loads(found.group(1))
            except json.JSONDecodeError:
                continue
    return None


def reply_for(request: dict) -> tuple[str, bool]:
    """The assistant's content for a chat request, and whether it was structured."""
    messages = request.get("messages", [])
    user_text = next((_text_of(m.get("content")) for m in reversed(messages)
                      if m.get("role") == "user"), "")
    response_format = request.get("response_format") or {}
    schema = None
    if response_format.get("type") == "json_schema":
        schema = response_format.get("json_schema", {})
        schema = schema.get("schema", schema)
    elif response_format.get("type") == "json_object":
        schema = _schema_in_prompt(messages) or {"type": "object"}
    if schema is None:
        return "[stand-in LLM, no model behind it] " + " ".join(user_text.split())[:200], False
    return json.dumps(smallest_instance(schema, schema, user_text)), True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read /stats
        pass

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        elif self.path.startswith("/stats"):
            with _calls_lock:
                self._json(200, dict(_calls))
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
            return self._json(404, {"error": {"message": f"no route {self.path}"}})
        try:
            request = json.loads(body or b"{}")
        except json.JSONDecodeError:
            return self._json(400, {"error": {"message": "body is not JSON"}})
        content, structured = reply_for(request)
        with _calls_lock:
            _calls["chat"] += 1
            _calls["structured"] += structured
        if request.get("stream"):
            return self._stream(content)
        return self._json(200, {
            "id": f"chatcmpl-standin-{time.monotonic_ns()}", "object": "chat.completion",
            "created": int(time.time()), "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": len(body) // 4, "completion_tokens": len(content) // 4,
                      "total_tokens": (len(body) + len(content)) // 4},
        })

    def _stream(self, content: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for delta, finish in (({"role": "assistant", "content": content}, None), ({}, "stop")):
            chunk = {"id": "chatcmpl-standin", "object": "chat.completion.chunk",
                     "created": int(time.time()), "model": MODEL,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    port = parser.parse_args().port
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    server.daemon_threads = True
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
