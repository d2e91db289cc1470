"""Deadlines and the threads they need: memsift/_runtime/budget.py."""

from __future__ import annotations

import threading
import time

import pytest

from memsift._runtime.budget import Workers
from memsift.errors import DeadlineExceeded, ServiceUnavailable


@pytest.fixture
def workers():
    pool = Workers()
    yield pool
    pool.close()


def within(seconds, call, *args, **kwargs):
    """A call within a deadline on a pool of its own, as call_service makes one."""
    pool = Workers()
    try:
        return pool.within(seconds, lambda: call(*args, **kwargs))
    finally:
        pool.close(timeout=0)


def test_within_returns_the_value_of_the_call():
    assert within(1.0, lambda a, b=0: a + b, 2, b=3) == 5


def test_within_returns_none_when_the_call_does():
    calls = []

    assert within(1.0, calls.append, "x") is None
    assert calls == ["x"]


def test_within_raises_the_calls_exception_in_the_caller():
    error = KeyError("missing")

    def fails():
        raise error

    with pytest.raises(KeyError) as caught:
        within(1.0, fails)

    assert caught.value is error


def test_within_raises_even_a_base_exception_in_the_caller():
    def exits():
        raise SystemExit(3)

    with pytest.raises(SystemExit) as caught:
        within(1.0, exits)

    assert caught.value.code == 3


def test_within_runs_the_call_in_another_thread():
    seen = []

    within(1.0, lambda: seen.append(threading.current_thread()))

    assert seen and seen[0] is not threading.current_thread() and seen[0].daemon


def test_a_slow_call_raises_deadline_exceeded_without_being_waited_for():
    release = threading.Event()
    started = threading.Event()

    def hangs():
        started.set()
        release.wait(30)
        return "too late"

    t0 = time.perf_counter()
    try:
        with pytest.raises(DeadlineExceeded, match=r"0\.2 s deadline"):
            within(0.2, hangs)
        elapsed = time.perf_counter() - t0
    finally:
        release.set()

    assert started.is_set()
    assert elapsed < 0.2 + 1.0


def test_a_deadline_exceeded_is_a_service_unavailable():
    # so a path ends on a late service the same way it ends on a service that is down
    assert issubclass(DeadlineExceeded, ServiceUnavailable)


def test_an_exception_raised_after_the_deadline_never_reaches_the_caller():
    release = threading.Event()
    done = threading.Event()

    def fails_late():
        release.wait(5)
        done.set()
        raise RuntimeError("late")

    with pytest.raises(DeadlineExceeded):
        within(0.05, fails_late)
    release.set()
    assert done.wait(5)  # it raised, after the deadline, when the caller had moved on
