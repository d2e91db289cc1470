"""Running a list of stages: the two paths, and any path a user composes.

>>> result = recall(Message("why did we pick Stripe?"), services)
>>> result.text          # '' most of the time
>>> result.stopped_by    # 'classify: reaction needs no memory', 'render: added 1 items', ...
>>> for step in result.trace: print(step.stage, step.verdict, f"{step.elapsed * 1000:.2f} ms")
>>> recall(message, services, deadline=0.5).stopped_by   # a harness's own deadline, in seconds
'classify: past the 0.5 s deadline'

Each stage runs in a worker thread of the services, within its allowance: a
second of its own work (thirty on retain), plus the deadline of each service
call it makes. One that runs past it ends the path with nothing added ("over
its budget"); so does one still running at the call's ``deadline`` ("past
the 0.5 s deadline"), which no service is blamed for. Either way the stage is
given up on, not waited for: it finishes alone in its thread, so a write it
started (the notes, the outbox) is never left half done.

Fail open: a stage that raises ends the path with nothing added and the error,
with where it was raised, in the trace. A hook built on this never breaks the
agent; and it is not off in silence: the session whose call failed is told in
one line that memory is off, and again once the stage works (no other session
hears of it). A shared remote service that is down pauses memory for everyone
instead, as its breaker says (``call_service``).

Each call is charged what its own stages asked of a remote decider
(``costs.charge``), whatever else runs on the same services at the same time.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Sequence
from typing import TypeVar

from attrs import evolve

from . import stages as _stages
from ._runtime.budget import Allowance, Pending, PastDeadline, on_loop, until
from .costs import Meter
from .errors import DeadlineExceeded
from .services import Services
from .stages import BRIEF_STAGES, RECALL_STAGES, RETAIN_STAGES, Briefing, EndPath, Keep, Sift, Stage, is_remote
from .stages.path import State, _failure_entry, _failure_notice, _located, session_of, stage_name
from .types import Brief, Exchange, Item, Message, Recall, Retained, Step, Usage

S = TypeVar("S", bound=State)
Shown = TypeVar("Shown", Sift, Briefing)  # a path that ends in text shown to the agent


def run(stages: Sequence[Stage], services: Services, state: S, *, deadline: float | None = None) -> S:
    """Apply the ``stages`` in order to ``state`` (each called as ``stage(services, state)``) until one
    ends the path; past ``deadline`` seconds (None: no deadline of the call's own), end it with what
    the last stage done returned.

    The runner of both paths, and of any path of stages over a state of one's own
    (a subclass of ``stages.State`` with a ``session``):

    >>> run([redact, classify], services, Sift(message=Message("thanks!")), deadline=1.0).stopped_by
    'classify: reaction needs no memory'
    """
    steps = _steps(stages, services, state, deadline)
    call: _Call | S = next(steps)
    while isinstance(call, _Call):
        try:
            outcome: object = call.start().result(call.allowance.ends, call.late)
        except Exception as exc:
            outcome = exc
        call = _step_or_end(steps, outcome)
    return call


async def arun(stages: Sequence[Stage], services: Services, state: S, *, deadline: float | None = None) -> S:
    """``run`` for an event loop, with the same ``stages``, ``services``, ``state`` and ``deadline``:
    each stage in a worker thread, the loop never blocked.

    One runner decides for both, so the same stages give the same state.
    Cancelling the task ends the path at once: the stage running then finishes
    in its thread, and no later stage starts.
    """
    with on_loop():
        steps = _steps(stages, services, state, deadline)
        call: _Call | S = next(steps)
        while isinstance(call, _Call):
            try:
                outcome: object = await call.start().aresult(call.allowance.ends, call.late)
            except Exception as exc:
                outcome = exc
            call = _step_or_end(steps, outcome)
    return call


class _Call:
    """One stage to run: in a worker of the services, within its allowance, its costs on its own meter."""

    def __init__(self, stage: Stage, name: str, services: Services, state: State, allowance: Allowance) -> None:
        self.stage, self.name, self.services, self.state = stage, name, services, state
        self.allowance = allowance
        self.meter = Meter()
        self.late = "over its budget"

    def start(self) -> Pending[object]:
        return self.services._workers.start(self._run, key=f"the {self.name} stage")

    def _run(self) -> object:
        with self.allowance.current(), self.meter.current():  # in the worker: what the stage calls finds them
            return self.stage(self.services, self.state)


def _step_or_end(steps: Generator[_Call, object, S], outcome: object) -> _Call | S:
    """The next stage to call, given how the last one ended (a state, or what it raised); or the
    path's final state."""
    try:
        return steps.throw(outcome) if isinstance(outcome, BaseException) else steps.send(outcome)
    except StopIteration as done:
        final: S = done.value
        return final


def _steps(stages: Sequence[Stage], services: Services, state: S,
           deadline: float | None) -> Generator[_Call, object, S]:
    """The path, without the calls: yields each stage to call and is sent what it returned or
    thrown what it raised, so the sync and the async paths decide alike."""
    if services._workers.closed:
        raise RuntimeError("these services are closed: open new ones")
    ends = until(deadline)
    health, session = services.health, session_of(state)
    broken = health.broken_names(session) if health is not None and session else set()  # usually none
    own = _stages.RETAIN_WORK if isinstance(state, Keep) else _stages.LOCAL_WORK
    for stage in stages:
        t0 = time.perf_counter()
        name = getattr(stage, "__name__", type(stage).__name__)
        if time.monotonic() >= ends:
            return _past(state, name, t0, deadline)
        call = _Call(stage, name, services, state, Allowance(own, ends))
        steps = len(state.trace)
        try:
            state = yield call  # type: ignore[assignment]
        except EndPath as end:
            return _charged(end.state, call.meter.total, steps)  # type: ignore[return-value]
        except (DeadlineExceeded, PastDeadline) as late:  # slow is not broken: nothing added this time, no notice
            if call.allowance.past_deadline():
                return _charged(_past(state, name, t0, deadline), call.meter.total, steps)
            return _charged(state.log(name, "late", t0, why=str(late)).end(name, "over its budget"),
                            call.meter.total, steps)
        except Exception as exc:  # fail open: nothing added, the trace says where and why
            failed = state.log(name, "error", t0, why=_located(exc)).end(name, f"failed: {type(exc).__name__}")
            notice = _failure_notice(services, state, stage_name(name), f"{type(exc).__name__}: {exc}")
            return _charged(evolve(failed, notice=notice), call.meter.total, steps)
        state = _charged(state, call.meter.total, steps)
        if health is not None and (entry := _failure_entry(state, name)) in broken:
            health.succeeded(entry)
        if state.stopped_by:
            return state
    return state


def _past(state: S, name: str, since: float, deadline: float | None) -> S:
    """The state as it was before ``name``, ended: the call's own deadline passed."""
    why = f"past the {deadline:g} s deadline"
    return state.log(name, "late", since, why=f"the call's {deadline:g} s deadline passed").end(name, why)


def _charged(state: S, usage: Usage, steps: int) -> S:
    """The state with what its stage spent on the decider put on the last step the stage logged."""
    if len(state.trace) <= steps or not (usage.questions or usage.tokens_in or usage.tokens_out):
        return state
    *rest, last = state.trace
    return evolve(state, trace=(*rest, evolve(last, usage=usage)))


def recall(message: Message, services: Services, stages: Sequence[Stage] = RECALL_STAGES, *,
           deadline: float | None = None) -> Recall:
    """What memory adds to ``message``, and the trace of why: ``stages`` run in order on ``services``;
    nothing is added past ``deadline`` seconds (None: the stages' own budgets alone).

    >>> recall(Message("why did we pick Stripe?", session="s1"), services, deadline=2.0).text
    """
    return _recalled(run(stages, services, Sift(message=message), deadline=deadline), services)


async def arecall(message: Message, services: Services, stages: Sequence[Stage] = RECALL_STAGES, *,
                  deadline: float | None = None) -> Recall:
    """``recall`` for an event loop: the same ``message``, ``services``, ``stages`` and ``deadline``,
    the same result and trace, the loop never blocked.

    >>> result = await arecall(Message("why did we pick Stripe?"), services, deadline=1.0)
    """
    return _recalled(await arun(stages, services, Sift(message=message), deadline=deadline), services)


def _recalled(state: Sift, services: Services) -> Recall:
    state, items, notice = _finished(state, services, state.message.session)
    return Recall(state.text, items, state.kind, state.trace, state.stopped_by, notice)


def _finished(state: Shown, services: Services, session: str) -> tuple[Shown, tuple[Item, ...], str | None]:
    """A recall's or a brief's path as its caller sees it: ended, its costs recorded, what was
    rendered (only that was added: past a deadline, what was chosen and not rendered gives nothing)
    and the session's news."""
    if not state.stopped_by:
        state = state.end("pipeline", "ran out of stages")
    _record_costs(services, session, state.trace)
    return state, (state.chosen if state.text else ()), state.notice or health_news(services, session)


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
          stages: Sequence[Stage] = BRIEF_STAGES, deadline: float | None = None) -> Brief:
    """The session brief: a few facts of the project's memory (the notes of ``services``), chosen for
    ``session`` as it starts (or resumes, or is compacted), within ``budget`` characters
    (``brief_chars`` by default; 0: none), by ``stages`` run in order; nothing is given past
    ``deadline`` seconds.

    ``focus`` names what is in play (the branch, the files being changed): facts that touch it are
    preferred. What it shows is given to the session: recall does not show it again.

    >>> result = brief(services, session="s1", focus="feature/photo-upload")
    >>> print(result.text)           # '' when memory holds nothing worth the budget
    >>> result.trace[-3].why         # choose: what was left out for the budget, and why
    """
    state = _briefing(services, session, focus, budget)
    return _briefed(state if state.stopped_by else run(stages, services, state, deadline=deadline), services)


async def abrief(services: Services, *, session: str = "", focus: str = "", budget: int | None = None,
                 stages: Sequence[Stage] = BRIEF_STAGES, deadline: float | None = None) -> Brief:
    """``brief`` for an event loop: the same ``services``, ``session``, ``focus``, ``budget``, ``stages``
    and ``deadline``, the same result and trace, the loop never blocked."""
    state = _briefing(services, session, focus, budget)
    return _briefed(state if state.stopped_by else await arun(stages, services, state, deadline=deadline),
                    services)


def _briefing(services: Services, session: str, focus: str, budget: int | None) -> Briefing:
    chars = services.config.brief_chars if budget is None else budget
    state = Briefing(session=session, budget=chars, focus=focus)
    return state if chars > 0 else state.end("brief", "off (brief_chars is 0)")


def _briefed(state: Briefing, services: Services) -> Brief:
    state, items, notice = _finished(state, services, state.session)
    return Brief(state.text, items, state.trace, state.stopped_by, notice)


def retain(exchange: Exchange, services: Services, stages: Sequence[Stage] = RETAIN_STAGES, *,
           deadline: float | None = None) -> Retained:
    """Keep what of ``exchange`` would save redoing work: ``stages`` append it to the notes of
    ``services``, revise them, sync the store.

    Past ``deadline`` seconds it returns what is safe: before the line is written, nothing kept;
    after, the store's item waits in the outbox, sent by the next retain (or ``flush``).
    """
    return _retained(run(stages, services, Keep(exchange=exchange), deadline=deadline), services)


async def aretain(exchange: Exchange, services: Services, stages: Sequence[Stage] = RETAIN_STAGES, *,
                  deadline: float | None = None) -> Retained:
    """``retain`` for an event loop: the same ``exchange``, ``services``, ``stages`` and ``deadline``,
    the same result and trace, the loop never blocked.

    Cancelled, it stops before the next stage: a stage that writes (the notes,
    the outbox) finishes its write first, so nothing is left half-written.
    """
    return _retained(await arun(stages, services, Keep(exchange=exchange), deadline=deadline), services)


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
