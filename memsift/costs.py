"""What remote deciders cost: each call's, charged to the path that asked, and summed per session in
``<home>/costs.json`` (``memsift doctor`` reads it).

A decider that costs money says what each ``decide`` call cost with
``charge``; the runner meters each stage on its own (``metered``), so one
``Services`` shared by threads and tasks charges every call only what it
asked, whatever runs beside it. Each path's trace then carries the ``Usage``
of every step that asked a remote decider; at the end of the path it is added
to its session's total. Nothing is written when nothing was spent, so the
embedded decider never touches it.

    >>> with metered() as meter:
    ...     decider.decide(state, questions)      # it calls charge(Usage(2, 600, 2, 0.0000252))
    >>> meter.total
    Usage(questions=2, tokens_in=600, tokens_out=2, usd=2.52e-05, calibrated=True)
    >>> SessionCosts(home).add("s1", Usage(questions=3, tokens_in=900, tokens_out=3, usd=0.0000378))
    >>> session_costs(home)["s1"]
    Usage(questions=3, tokens_in=900, tokens_out=3, usd=3.78e-05, calibrated=True)
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from ._fs.files import locked, read_regular, write_atomically
from .types import Step, Usage

FILE_NAME = "costs.json"
_REMEMBERED_SESSIONS = 500  # older sessions are forgotten, so the file stays small
_NO_SESSION = "(no session)"


class Meter:
    """What the calls made under it cost, together (``total``); each cost ``add``-ed is counted by the
    ``outer`` meter too, when it is nested in one."""

    def __init__(self, outer: Meter | None = None) -> None:
        self.total = Usage()
        self.outer = outer
        self._lock = threading.Lock()  # a stage's decider may answer from several threads

    def add(self, usage: Usage) -> None:
        """Count ``usage``, here and in the meters around this one."""
        with self._lock:
            self.total += usage
        if self.outer is not None:
            self.outer.add(usage)

    @contextlib.contextmanager
    def current(self) -> Iterator[Meter]:
        """Within this block (and the threads started from it with its context), ``charge`` adds here."""
        token = _METER.set(self)
        try:
            yield self
        finally:
            _METER.reset(token)


_METER: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("memsift_meter", default=None)


def charge(usage: Usage) -> None:
    """Count ``usage``, what an answer cost, toward the path that asked for it (nothing when no path
    meters it).

    A decider of your own that costs money calls it from ``decide``, once per call or once per
    question, in the thread (or a copy of the context) ``decide`` was called in:

    >>> charge(Usage(questions=1, tokens_in=312, tokens_out=1, usd=0.0000157))
    """
    meter = _METER.get()
    if meter is not None:
        meter.add(usage)


@contextlib.contextmanager
def metered() -> Iterator[Meter]:
    """A meter of what is charged within this block: the calls of one stage, one ``decide``."""
    with Meter(_METER.get()).current() as meter:
        yield meter


def spent(trace: Iterable[Step]) -> Usage | None:
    """What the steps of one trace cost together, or None when none asked a remote decider."""
    usages = [step.usage for step in trace if step.usage is not None]
    if not usages:
        return None
    total = Usage()
    for usage in usages:
        total += usage
    return total


class SessionCosts:
    """The file of per-session totals in memsift's ``home``; hook processes add to it in turn, under a lock."""

    def __init__(self, home: Path) -> None:
        self.path = Path(home) / FILE_NAME

    def add(self, session: str, usage: Usage) -> None:
        """Add ``usage`` to the total of ``session`` ('' counts as "(no session)")."""
        key = session or _NO_SESSION
        with locked(self.path):
            totals = self.read()
            total = totals.pop(key, Usage()) + usage
            totals[key] = total  # newest last, so trimming drops the oldest
            kept = list(totals.items())[-_REMEMBERED_SESSIONS:]
            write_atomically(self.path, json.dumps(
                {name: [u.questions, u.tokens_in, u.tokens_out, u.usd, u.calibrated] for name, u in kept}))

    def read(self) -> dict[str, Usage]:
        try:
            data = json.loads(read_regular(self.path))
        except (OSError, ValueError):
            return {}  # missing or torn: start again rather than fail a hook
        if not isinstance(data, dict):
            return {}
        out: dict[str, Usage] = {}
        for name, row in data.items():
            try:
                questions, sent, received, usd, calibrated = row
                out[name] = Usage(int(questions), int(sent), int(received), float(usd), bool(calibrated))
            except (TypeError, ValueError):
                continue
        return out


def session_costs(home: Path) -> dict[str, Usage]:
    """Every remembered session's total in memsift's ``home``, oldest first: what ``memsift doctor`` shows."""
    return SessionCosts(home).read()
