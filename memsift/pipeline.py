"""Running a list of stages: the two paths, and any path a user composes.

>>> result = recall(Message("why did we pick Stripe?"), services)
>>> result.text          # '' most of the time
>>> result.stopped_by    # 'classify: reaction needs no memory', 'render: added 1 items', ...
>>> for step in result.trace: print(step.stage, step.verdict, f"{step.elapsed * 1000:.2f} ms")

Every stage runs within a budget (``stages.budget``): its own work and the
deadlines of the services it calls. One that runs past it ends the path with
nothing added.

Fail open: a stage that raises ends the path with nothing added and the error
in the trace. A hook built on this never breaks the agent; and it is not
off in silence: the failure is written to the health file, whose next news
tells the agent in one line that memory is off, and again once it works.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Sequence
from typing import TypeVar

from attrs import evolve

from ._budget import within
from .errors import DeadlineExceeded
from .services import Services
from .stages import (
    BRIEF_STAGES, RECALL_STAGES, RETAIN_STAGES, Briefing, EndPath, Keep, Sift, Stage, budget, is_remote, stage_name,
)
from .stages.path import _Path
from .types import Brief, Exchange, Message, Recall, Retained, Step, Usage

S = TypeVar("S", bound=_Path)


def run(stages: Sequence[Stage], services: Services, state: S) -> S:
    """Apply the stages in order until one ends the path."""
    steps = _steps(stages, services, state)
    call: Call | S = next(steps)
    while isinstance(call, tuple):
        try:
            # In a thread of its own, so that no stage, whatever it reads, holds the path past its budget.
            outcome: object = within(*call)
        except Exception as exc:
            outcome = exc
        call = _step_or_end(steps, outcome)
    return call


async def arun(stages: Sequence[Stage], services: Services, state: S) -> S:
    """``run`` for an event loop: each stage in a worker thread, the loop never blocked.

    One runner decides for both, so the same stages give the same state.
    Cancelling the task ends the path at once: the stage running then finishes
    in its thread, and no later stage starts.
    """
    from ._budget import awithin, on_loop

    with on_loop():
        steps = _steps(stages, services, state)
        call: Call | S = next(steps)
        while isinstance(call, tuple):
            try:
                outcome: object = await awithin(*call)
            except Exception as exc:
                outcome = exc
            call = _step_or_end(steps, outcome)
    return call


Call = tuple[float, Stage, Services, _Path]
"""What the runner asks its driver to do: a stage to call, its budget, and its arguments."""


def _step_or_end(steps: Generator[Call, object, S], outcome: object) -> Call | S:
    """The next stage to call, given how the last one ended (a state, or what it raised); or the
    path's final state."""
    try:
        return steps.throw(outcome) if isinstance(outcome, BaseException) else steps.send(outcome)
    except StopIteration as done:
        final: S = done.value
        return final


def _steps(stages: Sequence[Stage], services: Services, state: S) -> Generator[Call, object, S]:
    """The path, without the calls: yields each stage to call (with its budget) and is sent what
    it returned or thrown what it raised, so the sync and the async paths decide alike."""
    health = services.health
    broken = health.broken_names() if health is not None else set()  # one read: usually none
    for stage in stages:
        t0 = time.perf_counter()
        name = getattr(stage, "__name__", type(stage).__name__)
        before, steps = _spent(services), len(state.trace)
        try:
            state = yield (budget(stage, services.config, state), stage, services, state)  # type: ignore[assignment]
        except EndPath as end:
            return _charged(end.state, services, before, steps)  # type: ignore[return-value]
        except DeadlineExceeded as late:  # slow is not broken: nothing added this time, no notice
            return state.log(name, "late", t0, why=str(late)).end(name, "over its budget")
        except Exception as exc:  # fail open: nothing added, the trace says why
            why = f"{type(exc).__name__}: {exc}"
            if health is not None:
                health.broken(stage_name(name), why)
            failed = state.log(name, "error", t0, why=why)
            return _charged(failed.end(name, f"failed: {type(exc).__name__}"), services, before, steps)
        state = _charged(state, services, before, steps)
        if health is not None and stage_name(name) in broken:
            health.succeeded(stage_name(name))
        if state.stopped_by:
            return state
    return state


def _spent(services: Services) -> Usage | None:
    """What the decider has spent so far, if it counts (the remote ones do)."""
    return getattr(services.decider, "spent", None)


def _charged(state: S, services: Services, before: Usage | None, steps: int) -> S:
    """The state with what its stage spent on the decider put on the last step the stage logged."""
    after = _spent(services)
    if before is None or after is None or len(state.trace) <= steps:
        return state
    usage = after.since(before)
    if not (usage.questions or usage.tokens_in or usage.tokens_out):
        return state
    *rest, last = state.trace
    return evolve(state, trace=(*rest, evolve(last, usage=usage)))


def recall(message: Message, services: Services, stages: Sequence[Stage] = RECALL_STAGES) -> Recall:
    """What memory adds to this message, and the trace of why."""
    return _recalled(run(stages, services, Sift(message=message)), services)


async def arecall(message: Message, services: Services, stages: Sequence[Stage] = RECALL_STAGES) -> Recall:
    """``recall`` for an event loop: the same result and trace, the loop never blocked.

    >>> result = await arecall(Message("why did we pick Stripe?"), services)
    """
    return _recalled(await arun(stages, services, Sift(message=message)), services)


def _recalled(state: Sift, services: Services) -> Recall:
    if not state.stopped_by:
        state = state.end("pipeline", "ran out of stages")
    items = state.chosen if state.text else ()  # only what was rendered was added
    _record_costs(services, state.message.session, state.trace)
    notice = state.notice or health_news(services, state.message.session)
    return Recall(state.text, items, state.kind, state.trace, state.stopped_by, notice)


def health_news(services: Services, session: str) -> str | None:
    """What changed since this session last heard, said once: a remote service in use came back
    or went away, memory went off or came back on, a damaged file was set aside.

    >>> health_news(services, "s1")
    'memory paused: Cognee at http://127.0.0.1:8000 unreachable since 14:02; reminders are off'
    """
    if services.health is None:
        return None
    in_use = [service.name for service in (services.decider, services.store)
              if service is not None and is_remote(service)]
    return services.health.news(session, in_use)


def brief(services: Services, *, session: str = "", focus: str = "", budget: int | None = None,
          stages: Sequence[Stage] = BRIEF_STAGES) -> Brief:
    """The session brief: a few facts of the project's memory, chosen for a session as it starts
    (or resumes, or is compacted), within ``budget`` characters (``brief_chars`` by default; 0: none).

    ``focus`` names what is in play (the branch, the files being changed): facts that touch it are
    preferred. What it shows is given to the session: recall does not show it again.

    >>> result = brief(services, session="s1", focus="feature/photo-upload")
    >>> print(result.text)           # '' when memory holds nothing worth the budget
    >>> result.trace[-2].why         # what was left out for the budget, and why
    """
    state = _briefing(services, session, focus, budget)
    return _briefed(state if state.stopped_by else run(stages, services, state), services)


async def abrief(services: Services, *, session: str = "", focus: str = "", budget: int | None = None,
                 stages: Sequence[Stage] = BRIEF_STAGES) -> Brief:
    """``brief`` for an event loop: the same result and trace, the loop never blocked."""
    state = _briefing(services, session, focus, budget)
    return _briefed(state if state.stopped_by else await arun(stages, services, state), services)


def _briefing(services: Services, session: str, focus: str, budget: int | None) -> Briefing:
    chars = services.config.brief_chars if budget is None else budget
    state = Briefing(session=session, budget=chars, focus=focus)
    return state if chars > 0 else state.end("brief", "off (brief_chars is 0)")


def _briefed(state: Briefing, services: Services) -> Brief:
    if not state.stopped_by:
        state = state.end("pipeline", "ran out of stages")
    items = state.chosen if state.text else ()
    return Brief(state.text, items, state.trace, state.stopped_by, state.notice)


def retain(exchange: Exchange, services: Services, stages: Sequence[Stage] = RETAIN_STAGES) -> Retained:
    """Keep what would save redoing work: append it to the notes, revise them, sync the store."""
    return _retained(run(stages, services, Keep(exchange=exchange)), services)


async def aretain(exchange: Exchange, services: Services, stages: Sequence[Stage] = RETAIN_STAGES) -> Retained:
    """``retain`` for an event loop: the same result and trace, the loop never blocked.

    Cancelled, it stops before the next stage: a stage that writes (the notes,
    the outbox) finishes its write first, so nothing is left half-written.
    """
    return _retained(await arun(stages, services, Keep(exchange=exchange)), services)


def _retained(state: Keep, services: Services) -> Retained:
    _record_costs(services, state.exchange.session, state.trace)
    return Retained(state.keep, state.category, state.lines, state.edits, state.trace,
                    state.stopped_by or "done", state.notice)


def _record_costs(services: Services, session: str, trace: Sequence[Step]) -> None:
    """Add what a remote decider cost on this path to the session's total (nothing spent: no write)."""
    if not any(step.usage is not None for step in trace):
        return
    from .costs import SessionCosts, spent

    total = spent(trace)
    if total is not None:
        SessionCosts(services.config.home).add(session, total)
