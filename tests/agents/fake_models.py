"""Model APIs on 127.0.0.1 that the real Claude Code and Codex CLIs can talk to offline.

Each answers every turn with the text in ``reply`` and keeps every request it
got, so a test reads exactly what the agent sent the model:

    >>> with FakeModel("anthropic") as model:
    ...     model.reply = "Stripe, because Mollie dropped webhooks."
    ...     # ANTHROPIC_BASE_URL=model.url claude -p "..."
    ...     model.requests[-1].body["messages"]

The shapes follow the APIs as the pinned CLIs use them (one streamed request
per turn): Anthropic's Messages API (``POST /v1/messages``, server-sent events
``message_start`` .. ``message_stop``) and OpenAI's Responses API
(``POST /v1/responses``, ``response.created`` .. ``response.completed``).

The server is also the agents' HTTPS proxy: any attempt to reach another host
arrives as a ``CONNECT``, is refused and kept in ``requests``, so a test can
check that nothing left the machine.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from attrs import define, field

Api = Literal["anthropic", "openai"]
Event = tuple[str, dict[str, Any]]


@define
class Request:
    method: str
    path: str
    body: Any = None  # the parsed JSON body, when there is one

    @property
    def text(self) -> str:
        return json.dumps(self.body)


@define
class FakeModel:
    """One fake model API, served from a thread of the test process."""

    api: Api
    reply: str = "OK."
    requests: list[Request] = field(factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first (use it as a context manager)"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def turns(self) -> list[Request]:
        """The requests that asked the model for an answer, in order."""
        path = "/v1/messages" if self.api == "anthropic" else "/v1/responses"
        return [r for r in self.requests if r.method == "POST" and r.path.split("?")[0] == path]

    def connects(self) -> list[str]:
        return [r.path for r in self.requests if r.method == "CONNECT"]

    def __enter__(self) -> FakeModel:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def _handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass  # the test reads model.requests instead

        def do_CONNECT(self) -> None:
            model.requests.append(Request("CONNECT", self.path))
            self._send(403, b"", "text/plain")

        def do_GET(self) -> None:
            model.requests.append(Request("GET", self.path))
            if self.path.split("?")[0].endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}],
                                 "models": []})
            else:
                self._json(404, {"error": {"type": "not_found_error", "message": self.path}})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            model.requests.append(Request("POST", self.path, body))
            path = self.path.split("?")[0]
            request = body if isinstance(body, dict) else {}
            if path == "/v1/messages/count_tokens":
                self._json(200, {"input_tokens": max(1, len(raw) // 4)})
            elif path == "/v1/messages" and request.get("stream"):
                self._stream(anthropic_events(model.reply, request.get("model", "fake-model")))
            elif path == "/v1/responses" and request.get("stream"):
                self._stream(responses_events(model.reply, request.get("model", "fake-model")))
            else:
                self._json(404, {"error": {"type": "not_found_error", "message": f"fake: {path}"}})

        def _stream(self, events: Iterator[Event]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in events:
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
            self.close_connection = True

        def _json(self, status: int, data: object) -> None:
            self._send(status, json.dumps(data).encode(), "application/json")

        def _send(self, status: int, data: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def anthropic_events(text: str, model: str) -> Iterator[Event]:
    """A Messages API stream of one text block."""
    usage = {"input_tokens": 10, "output_tokens": 0, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    yield "message_start", {"type": "message_start", "message": {
        "id": f"msg_{uuid.uuid4().hex[:16]}", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}
    yield "content_block_start", {"type": "content_block_start", "index": 0,
                                  "content_block": {"type": "text", "text": ""}}
    yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                  "delta": {"type": "text_delta", "text": text}}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                            "usage": {"output_tokens": len(text.split())}}
    yield "message_stop", {"type": "message_stop"}


def responses_events(text: str, model: str) -> Iterator[Event]:
    """A Responses API stream of one assistant message."""
    response = {"id": f"resp_{uuid.uuid4().hex[:16]}", "object": "response", "model": model}
    item_id = f"msg_{uuid.uuid4().hex[:16]}"
    part = {"type": "output_text", "text": text, "annotations": []}
    item = {"type": "message", "id": item_id, "status": "completed", "role": "assistant", "content": [part]}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": len(text.split()), "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 10 + len(text.split())}
    where = {"item_id": item_id, "output_index": 0, "content_index": 0}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {**item, "status": "in_progress", "content": []}},
        {"type": "response.content_part.added", **where, "part": {**part, "text": ""}},
        {"type": "response.output_text.delta", **where, "delta": text},
        {"type": "response.output_text.done", **where, "text": text},
        {"type": "response.content_part.done", **where, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {**response, "status": "completed", "output": [item],
                                                    "usage": usage}},
    ]
    for number, event in enumerate(events):
        yield event["type"], {**event, "sequence_number": number}
