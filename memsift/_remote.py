"""What the remote services share: one HTTP request, read whole within a deadline.

>>> status, body, headers = read_within(client, client.build_request("GET", "/health"),
...                                     deadline=time.monotonic() + 2, late="Cognee did not answer")
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .errors import DeadlineExceeded

if TYPE_CHECKING:
    import httpx
    import tenacity


def read_within(client: httpx.Client, request: httpx.Request, deadline: float,
                late: str) -> tuple[int, bytes, httpx.Headers]:
    """Send ``request`` and read its whole body, or raise ``DeadlineExceeded(late)``.

    httpx's timeouts bound each read, not the whole answer: the body is read
    in pieces against the clock, so an answer trickling in byte by byte cannot
    outrun the deadline (``time.monotonic()`` seconds).
    """
    response = client.send(request, stream=True)
    try:
        body = bytearray()
        for piece in response.iter_bytes():
            body += piece
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
