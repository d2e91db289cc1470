"""Deadlines: nothing added is better than late.

Each service call gets its own deadline. The call runs in a daemon thread, so a
service that hangs past it is abandoned, not waited for: the path goes on (and
ends with nothing) on time, and the hook process exits without joining it.

>>> within(2.0, decider.decide, state, questions)   # or DeadlineExceeded
>>> await awithin(2.0, decider.decide, state, questions)   # the same, from an event loop
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

from .errors import DeadlineExceeded

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")
Outcome = tuple[bool, object]  # (returned?, what it returned or raised)

# The event loop a path was started from (``arecall``, ``aretain``): calls made deep inside its
# stages' threads may schedule work on it (a remote decider's concurrent questions).
_CALLER_LOOP: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "memsift_caller_loop", default=None)


def within(seconds: float, call: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Return ``call(*args, **kwargs)``, or raise DeadlineExceeded after ``seconds``.

    An exception raised by the call is raised here, in the caller's thread.
    """
    outcome: list[Outcome] = []
    _start(call, args, kwargs, outcome.append).join(max(seconds, 0.0))
    if not outcome:
        raise DeadlineExceeded(f"no answer within its {seconds:g} s deadline")
    return _unwrapped(outcome[0])


async def awithin(seconds: float, call: Callable[..., T], *args: object, **kwargs: object) -> T:
    """``within`` for an event loop: awaiting the call never blocks the loop, and cancelling the
    awaiting task abandons the call as a deadline does."""
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[Outcome] = loop.create_future()

    def deliver(outcome: Outcome) -> None:
        if not future.done():  # cancelled, or past its deadline: nobody is waiting
            future.set_result(outcome)

    def settle(outcome: Outcome) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits for this call any more
            loop.call_soon_threadsafe(deliver, outcome)

    _start(call, args, kwargs, settle)
    try:
        outcome = await asyncio.wait_for(future, max(seconds, 0.0))
    except TimeoutError:
        raise DeadlineExceeded(f"no answer within its {seconds:g} s deadline") from None
    return _unwrapped(outcome)


@contextlib.contextmanager
def on_loop() -> Iterator[None]:
    """Within this block, calls made by the path may schedule work on the running event loop."""
    import asyncio

    token = _CALLER_LOOP.set(asyncio.get_running_loop())
    try:
        yield
    finally:
        _CALLER_LOOP.reset(token)


def caller_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop the running path was started from, if it was (``arecall``, ``aretain``)."""
    return _CALLER_LOOP.get()


def _start(call: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object],
           settle: Callable[[Outcome], object]) -> threading.Thread:
    """Run the call in a daemon thread, in a copy of the caller's context, and hand its outcome on."""
    context = contextvars.copy_context()

    def run() -> None:
        try:
            outcome: Outcome = (True, context.run(call, *args, **kwargs))
        except BaseException as exc:  # handed to the caller, whatever it is
            outcome = (False, exc)
        settle(outcome)

    worker = threading.Thread(target=run, name="memsift-call", daemon=True)
    worker.start()
    return worker


def _unwrapped(outcome: Outcome) -> T:  # type: ignore[type-var]
    ok, value = outcome
    if ok:
        return value  # type: ignore[return-value]
    raise value  # type: ignore[misc]
