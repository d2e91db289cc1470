"""Deadlines and the threads they need: nothing added is better than late.

A path runs each stage, and each service call a stage makes, in a worker
thread of its ``Services`` (``Workers``), so that it can give up on one that
runs past its time without waiting for it: the path goes on (and ends with
nothing) on time, and a hook process exits without joining the thread. The
threads are reused, end after a while idle, and end when the services close.

    >>> workers = Workers()
    >>> workers.within(2.0, lambda: decider.decide(state, questions))   # or DeadlineExceeded
    >>> await workers.start(lambda: decider.decide(state, questions)).aresult(lambda: time.monotonic() + 2, "late")

A call given up on keeps its thread until it returns: a service that hangs
holds at most ``Workers.STUCK`` threads; past that, a call to it fails at once
(``DeadlineExceeded``) instead of starting another.

The runner gives each stage an ``Allowance``: its own work's seconds, pushed on
by the deadline of each service call it makes (``call_service``), never past
the deadline of the path (``recall(..., deadline=2.0)``).
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import functools
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Generic, TypeVar

from ..errors import DeadlineExceeded

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")
Outcome = tuple[bool, object]  # (returned?, what it returned or raised)

# The event loop a path was started from (``arecall``, ``aretain``): calls made deep inside its
# stages' threads may schedule work on it (a remote decider's concurrent questions).
_CALLER_LOOP: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "memsift_caller_loop", default=None)


class PastDeadline(Exception):
    """The path's own deadline passed: no further call is made, and no service is blamed for it."""


class Workers:
    """The threads a ``Services`` runs stages and service calls in: reused, never more than the calls
    running at once plus ``STUCK`` per service given up on, all gone once ``close`` returns."""

    IDLE = 10.0  # seconds a thread waits for work before it ends
    STUCK = 4  # calls of one service (or runs of one stage) given up on and still running; past it, fail at once

    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._jobs: collections.deque[Callable[[], Callable[[], None]]] = collections.deque()
        self._idle = 0  # threads waiting for a job
        self._finishing = 0  # threads handing an outcome over: each takes a job next, without waiting
        self._threads: set[threading.Thread] = set()
        self._stuck: collections.Counter[str] = collections.Counter()
        self.closed = False

    def start(self, call: Callable[[], T], *, key: str = "") -> Pending[T]:
        """Run ``call`` in a worker thread, in a copy of the caller's context; ``key`` names what it
        calls (a service, a stage), for the count of calls given up on and still running."""
        pending: Pending[T] = Pending(self, key)
        context = contextvars.copy_context()

        def job() -> Callable[[], None]:
            """Run the call; what hands its outcome to whoever waits for it."""
            try:
                outcome: Outcome = (True, context.run(call))
            except BaseException as exc:  # handed to the caller, whatever it is
                outcome = (False, exc)
            return functools.partial(pending._settle, outcome)

        with self._ready:
            if self.closed:
                raise RuntimeError("these services are closed")
            if key and self._stuck[key] >= self.STUCK:
                raise DeadlineExceeded(f"{self._stuck[key]} earlier calls of {key} are still running past "
                                       "their deadlines")
            self._jobs.append(job)
            if self._idle + self._finishing >= len(self._jobs):
                self._ready.notify()
            else:
                worker = threading.Thread(target=self._work, name="memsift-worker", daemon=True)
                self._threads.add(worker)
                worker.start()
        return pending

    def within(self, seconds: float, call: Callable[[], T], *, key: str = "", until: float = math.inf) -> T:
        """``call()``, or DeadlineExceeded after ``seconds`` (or at ``until``, a ``time.monotonic()``,
        when sooner); what it raises is raised here."""
        ends = min(time.monotonic() + seconds, until)
        return self.start(call, key=key).result(lambda: ends, f"no answer within its {seconds:g} s deadline")

    def threads(self) -> int:
        """How many threads are alive: working, waiting for work, or running a call given up on."""
        with self._ready:
            return sum(thread.is_alive() for thread in self._threads)

    def close(self, timeout: float = 5.0) -> None:
        """Start no more calls; wait up to ``timeout`` seconds for the threads to end (idle ones end at
        once; one running a call ends when it returns)."""
        with self._ready:
            self.closed = True
            self._ready.notify_all()
            threads = list(self._threads)
        ends = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, ends - time.monotonic()))

    def _work(self) -> None:
        me, finishing = threading.current_thread(), False
        while True:
            with self._ready:
                if finishing:
                    self._finishing, finishing = self._finishing - 1, False
                while not self._jobs and not self.closed:
                    self._idle += 1
                    woke = self._ready.wait(self.IDLE)
                    self._idle -= 1
                    if not woke and not self._jobs:
                        break
                if not self._jobs:  # closed, or idle too long
                    self._threads.discard(me)
                    return
                job = self._jobs.popleft()
            deliver = job()
            with self._ready:  # the caller's next call, started once it hears this one, is this thread's
                self._finishing, finishing = self._finishing + 1, True
            deliver()


class Pending(Generic[T]):
    """A call running in a worker: wait for it (``result``, ``aresult``) until a time that may move."""

    def __init__(self, workers: Workers, key: str) -> None:
        self._workers, self._key = workers, key
        self._outcome: Outcome | None = None
        self._given_up = False
        self._done = threading.Event()
        self._wake: list[Callable[[], object]] = []

    def result(self, ends: Callable[[], float], late: str) -> T:
        """What the call returned (or raised), or DeadlineExceeded(late) once ``time.monotonic()``
        reaches ``ends()``, read again each time it is reached."""
        while not self._done.wait(max(0.0, ends() - time.monotonic())):
            if time.monotonic() >= ends() and self._give_up():
                raise DeadlineExceeded(late)
        return self._unwrapped()

    async def aresult(self, ends: Callable[[], float], late: str) -> T:
        """``result`` for an event loop: awaiting it never blocks the loop, and cancelling the awaiting
        task gives the call up as a deadline does."""
        import asyncio

        loop = asyncio.get_running_loop()
        settled: asyncio.Future[None] = loop.create_future()

        def deliver() -> None:
            if not settled.done():
                settled.set_result(None)

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits for this call any more
                loop.call_soon_threadsafe(deliver)

        self._on_settle(wake)
        try:
            while self._outcome is None:
                remaining = ends() - time.monotonic()
                if remaining <= 0:
                    if self._give_up():
                        raise DeadlineExceeded(late)
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(settled), remaining)
        except asyncio.CancelledError:
            self._give_up()
            raise
        return self._unwrapped()

    def _settle(self, outcome: Outcome) -> None:
        with self._workers._ready:
            self._outcome = outcome
            if self._given_up:
                self._workers._stuck[self._key] -= 1
            wake, self._wake = self._wake, []
        self._done.set()
        for call in wake:
            call()

    def _on_settle(self, call: Callable[[], object]) -> None:
        with self._workers._ready:
            if self._outcome is None:
                self._wake.append(call)
                return
        call()

    def _give_up(self) -> bool:
        """Leave the call to finish alone: False when it has just finished after all."""
        with self._workers._ready:
            if self._outcome is not None:
                return False
            if not self._given_up:
                self._given_up = True
                self._workers._stuck[self._key] += 1
            return True

    def _unwrapped(self) -> T:
        assert self._outcome is not None
        ok, value = self._outcome
        if ok:
            return value  # type: ignore[return-value]
        raise value  # type: ignore[misc]


class Allowance:
    """The time the runner gives one stage: ``own`` seconds of its own work, pushed on by each service
    call it makes (``extend``), never past the path's deadline (``until``, a ``time.monotonic()``)."""

    def __init__(self, own: float, until: float = math.inf) -> None:
        self.until = until
        self._ends = time.monotonic() + own
        self._lock = threading.Lock()

    def extend(self, seconds: float) -> None:
        with self._lock:
            self._ends += seconds

    def ends(self) -> float:
        """When the runner gives the stage up."""
        return min(self._ends, self.until)

    def past_deadline(self) -> bool:
        """Whether the path's own deadline has passed (not only the stage's allowance)."""
        return time.monotonic() >= self.until

    @contextlib.contextmanager
    def current(self) -> Iterator[None]:
        """Within this block (the stage's thread), ``call_service`` finds this allowance."""
        token = _ALLOWANCE.set(self)
        try:
            yield
        finally:
            _ALLOWANCE.reset(token)


_ALLOWANCE: contextvars.ContextVar[Allowance | None] = contextvars.ContextVar("memsift_allowance", default=None)


def allowance() -> Allowance | None:
    """The allowance of the stage running in this thread, if a runner started it."""
    return _ALLOWANCE.get()


def until(deadline: float | None) -> float:
    """The ``time.monotonic()`` at which a path given ``deadline`` seconds from now ends (inf: none)."""
    return math.inf if deadline is None else time.monotonic() + max(deadline, 0.0)


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
