"""Running a list of stages: the two paths, and any path a user composes.

>>> result = recall(Message("why did we pick Stripe?"), services)
>>> result.text          # '' most of the time
>>> result.stopped_by    # 'classify: reaction needs no memory', 'render: added 1 items', ...
>>> for step in result.trace: print(step.stage, step.verdict, f"{step.elapsed * 1000:.2f} ms")

Fail open: a stage that raises ends the path with nothing added and the error
in the trace. A hook built on this never breaks the agent.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TypeVar

from .services import Services
from .stages import RECALL_STAGES, RETAIN_STAGES, EndPath, Keep, Sift, Stage, _Path, is_remote
from .types import Exchange, Message, Recall, Retained

S = TypeVar("S", bound=_Path)


def run(stages: Sequence[Stage], services: Services, state: S) -> S:
    """Apply the stages in order until one ends the path."""
    for stage in stages:
        t0 = time.perf_counter()
        name = getattr(stage, "__name__", type(stage).__name__)
        try:
            state = stage(services, state)
        except EndPath as end:
            return end.state  # type: ignore[return-value]
        except Exception as exc:  # fail open: nothing added, the trace says why
            failed = state.log(name, "error", t0, why=f"{type(exc).__name__}: {exc}")
            return failed.end(name, f"failed: {type(exc).__name__}")
        if state.stopped_by:
            return state
    return state


def recall(message: Message, services: Services, stages: Sequence[Stage] = RECALL_STAGES) -> Recall:
    """What memory adds to this message, and the trace of why."""
    state = run(stages, services, Sift(message=message))
    if not state.stopped_by:
        state = state.end("pipeline", "ran out of stages")
    items = state.chosen if state.text else ()  # only what was rendered was added
    notice = state.notice or _health_news(services, message.session)
    return Recall(state.text, items, state.kind, state.trace, state.stopped_by, notice)


def _health_news(services: Services, session: str) -> str | None:
    """A remote service came back (or went away) since this session last heard: say so once."""
    if services.health is None:
        return None
    for service in (services.decider, services.store):
        if service is not None and is_remote(service):
            news = services.health.notice(service.name, session)
            if news:
                return news
    return None


def retain(exchange: Exchange, services: Services, stages: Sequence[Stage] = RETAIN_STAGES) -> Retained:
    """Keep what would save redoing work: append it to the notes, revise them, sync the store."""
    state = run(stages, services, Keep(exchange=exchange))
    return Retained(state.keep, state.category, state.lines, state.edits, state.trace,
                    state.stopped_by or "done", state.notice)
