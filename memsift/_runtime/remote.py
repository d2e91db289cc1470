"""What the remote services share: one HTTP request, read whole within a deadline and a byte cap.

>>> status, body, headers = read_within(client, client.build_request("GET", "/health"),
...                                     deadline=time.monotonic() + 2, late="Cognee did not answer")
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..errors import DeadlineExceeded, ServiceUnavailable

if TYPE_CHECKING:
    import httpx
    import tenacity


def read_within(client: httpx.Client, request: httpx.Request, deadline: float,
                late: str, limit: int | None = None, who: str = "the service") -> tuple[int, bytes, httpx.Headers]:
    """Send ``request`` and read its whole body, or raise ``DeadlineExceeded(late)``; with ``limit``,
    ``ServiceUnavailable`` (naming the service as *who*) as soon as the body passes that many bytes (a
    declared length past it is refused before a byte of the body is read).

    httpx's timeouts bound each read, not the whole answer: the body is read
    in pieces against the clock, so an answer trickling in byte by byte cannot
    outrun the deadline (``time.monotonic()`` seconds), nor one that never ends
    hold more than ``limit`` bytes.
    """
    response = client.send(request, stream=True)
    try:
        declared = response.headers.get("content-length", "")
        if limit is not None and declared.isdigit() and int(declared) > limit:
            raise ServiceUnavailable(f"{who} answered {int(declared)} bytes, over the {limit} it may")
        body = bytearray()
        for piece in response.iter_bytes():
            body += piece
            if limit is not None and len(body) > limit:
                raise ServiceUnavailable(f"{who} answered more than the {limit} bytes it may")
            if time.monotonic() > deadline:
                raise DeadlineExceeded(late)
    finally:
        response.close()
    return response.status_code, bytes(body), response.headers


def last_answer(attempt: tenacity.RetryCallState) -> Any:
    """Out of tries, the last attempt's answer stands: ``Retrying(retry_error_callback=last_answer)``."""
    if attempt.outcome is None:  # tenacity calls this only once an attempt has ended
        raise RuntimeError("no attempt has ended")
    return attempt.outcome.result()
