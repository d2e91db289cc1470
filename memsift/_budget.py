"""Deadlines: nothing added is better than late.

Each service call gets its own deadline. The call runs in a daemon thread, so a
service that hangs past it is abandoned, not waited for: the path goes on (and
ends with nothing) on time, and the hook process exits without joining it.

>>> within(2.0, decider.decide, state, questions)   # or DeadlineExceeded
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from .errors import DeadlineExceeded

T = TypeVar("T")


def within(seconds: float, call: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Return ``call(*args, **kwargs)``, or raise DeadlineExceeded after ``seconds``.

    An exception raised by the call is raised here, in the caller's thread.
    """
    outcome: list[tuple[bool, object]] = []

    def run() -> None:
        try:
            outcome.append((True, call(*args, **kwargs)))
        except BaseException as exc:  # handed to the caller, whatever it is
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name="memsift-call", daemon=True)
    worker.start()
    worker.join(max(seconds, 0.0))
    if not outcome:
        raise DeadlineExceeded(f"no answer within its {seconds:g} s deadline")
    ok, value = outcome[0]
    if ok:
        return value  # type: ignore[return-value]
    raise value  # type: ignore[misc]
