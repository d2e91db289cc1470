"""What every remote decider shares: POST JSON within a deadline, retry what is worth it, map errors.

    >>> endpoint = JsonEndpoint(checked_name("https://api.typesafe.ai/v1/systemone"), deadline=2.0,
    ...                         headers={"Authorization": "Bearer ts-..."},
    ...                         not_this_api="is MEMSIFT_DECIDER_URL a System One endpoint?")
    >>> endpoint.post("https://api.typesafe.ai/v1/systemone", {"state": ..., ...},
    ...               deadline=time.monotonic() + 2.0)
    {'model': 'jev-1.13.0', 'answers': {...}, 'usage': {...}}

Failures come out as memsift's errors: ``ConfigurationError`` when the
service refuses us (401/403: the key; 422: the request, naming the field;
any other 4xx), never retried; ``ServiceUnavailable`` when it stays
rate-limited (429), overloaded (529), failing (5xx) or unreachable after the
retries the deadline leaves room for, or answers with something that is not
JSON; ``DeadlineExceeded`` when an answer does not arrive in time.
"""

from __future__ import annotations

import json
import math
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from ..costs import charge
from ..errors import ConfigurationError, DeadlineExceeded, MemsiftError, ServiceUnavailable
from .._runtime.health import public_name
from .._runtime.remote import last_answer, read_within
from ..types import Usage

if TYPE_CHECKING:
    import asyncio

    import httpx
    import tenacity

    from ..config import Config

# httpx and tenacity cost about 120 ms to import: they are imported on the first
# request, so a process that builds a decider but never asks it pays nothing.

T = TypeVar("T")
_MAX_ATTEMPTS = 6
_LEAST_ATTEMPT = 0.05  # a retry with less time than this left could not get an answer back

# A refusal a backend reads in its own way (a 400 saying the model refuses logprobs...):
# given the status and the decoded body, the error to raise, or None for the usual mapping.
Refusal = Callable[[int, Any], "MemsiftError | None"]


# Each backend's own URL and model when the settings still hold System One's defaults.
DEFAULTS: dict[str, tuple[str, str]] = {
    "systemone": ("https://api.typesafe.ai/v1/systemone", "jev-1.13.0"),
    "openai": ("https://api.openai.com/v1", ""),
    "anthropic": ("https://api.anthropic.com/v1", ""),
}


def url_and_model(config: Config, backend: str) -> tuple[str, str]:
    """The URL and model a backend uses: those configured, or the backend's own defaults where the
    settings were left at System One's (a model must then be named: there is no safe default)."""
    jev_url, jev_model = DEFAULTS["systemone"]
    url, model = DEFAULTS[backend]
    url = url if config.decider_url == jev_url else config.decider_url
    model = model if config.decider_model == jev_model else config.decider_model
    if not model:
        raise ConfigurationError(f"MEMSIFT_DECIDER={backend} needs MEMSIFT_DECIDER_MODEL: the model to ask")
    return url, model


def chat_target(base_url: str, model: str, route: str) -> tuple[str, str]:
    """A chat backend's name and the URL of its route, once the settings that name it are checked.

    >>> chat_target("http://127.0.0.1:8080/v1/", "qwen2.5-1.5b-instruct", "/chat/completions")
    ('decider at 127.0.0.1:8080', 'http://127.0.0.1:8080/v1/chat/completions')
    """
    name = checked_name(base_url)
    if not model:
        raise ConfigurationError("MEMSIFT_DECIDER_MODEL must name the model to ask")
    return name, base_url.rstrip("/") + route


def checked_name(url: str | None, what: str = "decider") -> str:
    """The service's name for traces, the breaker and the notice: its host and port, never a key.

    >>> checked_name("http://127.0.0.1:8080/v1")
    'decider at 127.0.0.1:8080'
    """
    parts = urllib.parse.urlsplit(url or "")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"MEMSIFT_DECIDER_URL must be an http(s) URL, not {public_name(url or '')!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{what} at {host}" + (f":{parts.port}" if parts.port else "")


class JsonEndpoint:
    """One keep-alive HTTP client that posts JSON and reads the answer within a deadline.

    ``headers`` go with every request (the key among them: it is never put in
    an error message); ``not_this_api`` ends the error for a status that means
    the URL is not the API expected.
    """

    def __init__(self, name: str, *, deadline: float, connect_timeout: float = 0.5,
                 headers: Mapping[str, str] | None = None, not_this_api: str = "",
                 transport: httpx.BaseTransport | None = None) -> None:
        self.name = name
        self.deadline = deadline
        self._connect_timeout = connect_timeout
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         **(headers or {})}
        self._not_this_api = not_this_api
        self._transport = transport
        self._client: httpx.Client | None = None
        self._opening = threading.Lock()  # the questions of one call ask from several threads at once

    def post(self, url: str, payload: Any, deadline: float, *, refused: Refusal | None = None) -> Any:
        """The decoded JSON answer to ``payload``, retried on 429, 5xx and lost connections while
        ``deadline`` (``time.monotonic()`` seconds) allows."""
        body = json.dumps(payload, default=plain, ensure_ascii=False).encode()
        return self._payload(self._post(url, body, deadline), refused)

    def close(self) -> None:
        """Close the connections; the next request opens new ones."""
        with self._opening:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _post(self, url: str, body: bytes, deadline: float) -> _Reply:
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
            retry_error_callback=last_answer,
        )
        try:
            reply: _Reply = retrying(self._attempt, url, body, deadline)
            return reply
        except httpx.ConnectTimeout as error:
            raise ServiceUnavailable(f"{self.name} did not accept a connection within "
                                     f"{self._connect_timeout:g} s") from error
        except httpx.TimeoutException as error:
            raise DeadlineExceeded(f"{self.name} did not answer within {self.deadline:g} s") from error
        except httpx.TransportError as error:
            raise ServiceUnavailable(f"{self.name} is unreachable: {error or type(error).__name__}") from error

    def _attempt(self, url: str, body: bytes, deadline: float) -> _Reply:
        import httpx

        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded(f"{self.name}: no time left of its {self.deadline:g} s deadline")
        client = self._http()
        timeout = httpx.Timeout(remaining, connect=min(self._connect_timeout, remaining))
        request = client.build_request("POST", url, content=body, headers=self._headers, timeout=timeout)
        status, read, answered = read_within(client, request, deadline,
                                             late=f"{self.name} did not answer within {self.deadline:g} s")
        return _Reply(status, read, _retry_after(answered))

    def _payload(self, reply: _Reply, refused: Refusal | None) -> Any:
        """The JSON of a successful reply; otherwise the memsift error its status means."""
        said = f"{self.name} answered {reply.status}"
        if 200 <= reply.status < 300:
            try:
                return json.loads(reply.body)
            except ValueError as error:
                raise ServiceUnavailable(f"{said} with something that is not JSON") from error
        body = _json_or_text(reply.body)
        own = refused(reply.status, body) if refused is not None else None
        if own is not None:
            raise own
        if reply.status in (401, 403):
            raise ConfigurationError(f"{said}: the key was refused ({error_message(body)}); "
                                     "check MEMSIFT_DECIDER_API_KEY")
        if reply.status == 422:
            field = _field(body)
            at = f" at field {field!r}" if field else ""
            hint = "check MEMSIFT_DECIDER_MODEL" if field == "model" else self._not_this_api
            raise ConfigurationError(f"{said}: it refused the request{at} ({error_message(body)}); {hint}")
        if reply.busy:
            why = {429: "rate limited", 529: "overloaded"}.get(reply.status, error_message(body))
            wait = f", asked to wait {reply.retry_after:g} s" if reply.retry_after else ""
            raise ServiceUnavailable(f"{said}: {why}{wait}; gave up within the "
                                     f"{self.deadline:g} s deadline")
        raise ConfigurationError(f"{said}: {error_message(body)}; {self._not_this_api}")

    def _http(self) -> httpx.Client:
        with self._opening:  # one keep-alive client, made once: a second one's connections would never close
            if self._client is None:
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


def spend(decider: Any, usage: Usage) -> None:
    """Add ``usage`` to ``decider.spent`` (under its ``_spending`` lock: threads share a decider), and
    charge it to the path that asked (``memsift.costs``)."""
    with decider._spending:
        decider.spent += usage
    charge(usage)


def usage_of(questions: int, reported: Any, price: tuple[float, float], *,
             calibrated: bool = True) -> Usage:
    """The cost of one answer from the ``usage`` a service reported: System One and Anthropic say
    ``input_tokens``/``output_tokens``, OpenAI-compatible servers ``prompt_tokens``/``completion_tokens``;
    ``price`` is US dollars per million tokens sent and received.

    >>> usage_of(1, {"prompt_tokens": 200, "completion_tokens": 1}, (0.05, 0.0))
    Usage(questions=1, tokens_in=200, tokens_out=1, usd=1e-05, calibrated=True)
    """
    def count(*names: str) -> int:
        for name in names:
            value = reported.get(name) if isinstance(reported, dict) else None
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
        return 0  # a server that reports nothing costs nothing we can count

    sent, received = count("input_tokens", "prompt_tokens"), count("output_tokens", "completion_tokens")
    return Usage(questions, sent, received, (sent * price[0] + received * price[1]) / 1e6, calibrated)


def concurrently(calls: Sequence[Callable[[], T]], workers: int = 8) -> list[T]:
    """Every call's result, in order, with at most ``workers`` running at once; the first error
    raised is raised here. Daemon threads: a process never waits on them to exit (each call is
    bounded by its own deadline anyway).

    >>> concurrently([lambda: 1, lambda: 2])
    [1, 2]
    """
    if len(calls) == 1:
        return [calls[0]()]
    from .._runtime.budget import caller_loop

    loop = caller_loop()
    if loop is not None:  # a path started from an event loop: the questions are the loop's to schedule
        return _on_loop(loop, calls)
    results: list[tuple[bool, Any]] = [(False, None)] * len(calls)
    pending = iter(range(len(calls)))
    taking = threading.Lock()

    def work() -> None:
        while True:
            with taking:
                index = next(pending, None)
            if index is None:
                return
            try:
                results[index] = (True, calls[index]())
            except BaseException as error:  # handed to the caller
                results[index] = (False, error)

    threads = [threading.Thread(target=work, name="memsift-ask", daemon=True)
               for _ in range(min(workers, len(calls)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for ok, value in results:
        if not ok:
            raise value
    return [value for _, value in results]


def _on_loop(loop: asyncio.AbstractEventLoop, calls: Sequence[Callable[[], T]]) -> list[T]:
    """Every call's result, each run by the loop's executor; called from a thread other than the loop's."""
    import asyncio

    async def gathered() -> list[T]:
        return await asyncio.gather(*(loop.run_in_executor(None, call) for call in calls))

    return asyncio.run_coroutine_threadsafe(gathered(), loop).result()


def plain(value: Any) -> Any:
    """JSON for what ``json`` does not know: read-only mappings, sets."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    raise TypeError(f"cannot send a {type(value).__name__} to a remote decider")


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


def error_message(body: Any) -> str:
    """What an error body says, from the shapes servers use."""
    if isinstance(body, str):
        return body or "(empty answer)"
    if isinstance(body, dict):
        for key in ("error", "message", "detail"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, dict) and isinstance(value.get("message"), str):
                return str(value["message"])
            if isinstance(value, list) and value:
                return "; ".join(str(e.get("msg", e)) if isinstance(e, dict) else str(e) for e in value)
    return json.dumps(body)[:300]
