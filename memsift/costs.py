"""What remote deciders cost, summed per session in ``<home>/costs.json`` (``memsift doctor`` reads it).

Each path's trace carries the ``Usage`` of every step that asked a remote
decider; at the end of the path it is added to its session's total. Nothing
is written when nothing was spent, so the embedded decider never touches it.

    >>> SessionCosts(home).add("s1", Usage(questions=3, tokens_in=900, tokens_out=3, usd=0.0000378))
    >>> session_costs(home)["s1"]
    Usage(questions=3, tokens_in=900, tokens_out=3, usd=3.78e-05, calibrated=True)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ._files import locked, read_regular, write_atomically
from .types import Step, Usage

FILE_NAME = "costs.json"
_REMEMBERED_SESSIONS = 500  # older sessions are forgotten, so the file stays small
_NO_SESSION = "(no session)"


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
    """The file of per-session totals; hook processes add to it in turn, under a lock."""

    def __init__(self, home: Path) -> None:
        self.path = Path(home) / FILE_NAME

    def add(self, session: str, usage: Usage) -> None:
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
    """Every remembered session's total, oldest first: what ``memsift doctor`` shows."""
    return SessionCosts(home).read()
