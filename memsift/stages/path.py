"""What every stage shares: the path's state, and calling a service within its deadline.

A stage is any callable ``(services, state) -> state``. It returns the next
state, a new frozen value (``attrs.evolve``), never the one it was given
changed; it ends the path by returning ``state.end(stage, why)`` (or raising
``EndPath``), and the runner in ``pipeline.py`` stops there. A stage of one's
own asks the decider with ``ask`` and calls a store with ``call_service``, so
deadlines, breakers and costs hold for it as for the built-in ones. The
contract, field by field: docs/library.md.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from attrs import evolve, field, frozen

from .._runtime.bounds import RECENT_TURNS
from .._runtime.budget import PastDeadline, allowance
from .._runtime.health import FAILING, REFUSED, for_session, one_line
from ..errors import ConfigurationError, DeadlineExceeded, ServerError, ServiceUnavailable
from ..services import Services
from ..types import (
    Answer, Category, ChoiceAnswer, Decider, Edit, Exchange, Item, Kind, Message, NoulAnswer, Question, Redactor, Step,
    Store,
)


P = TypeVar("P", bound="State")
T = TypeVar("T")


@frozen
class State:
    """What every path's state holds: the steps taken, why the path ended, and a notice for the user.
    A path of one's own subclasses it (with a ``session`` field, if it is a session's).

    ``trace``: one ``Step`` a stage logged (``log``), in order; the runner adds each stage's
    cost to its last step. ``stopped_by``: ``"<stage>: <why>"`` once a stage ended the path
    (``end``), '' while it goes on. ``notice``: one line for the user, set when a service the
    path needed is paused or a stage failed; the runner adds the session's news at the end.
    """

    trace: tuple[Step, ...] = ()
    stopped_by: str = ""
    notice: str | None = None

    def log(self: P, stage: str, verdict: str, since: float, score: float | None = None, why: str = "") -> P:
        """This state with one more step in its trace: ``stage`` decided ``verdict`` (on ``score``, if
        one, because of ``why``), timed from ``since`` (a ``time.perf_counter()``)."""
        step = Step(stage, verdict, time.perf_counter() - since, score, why)
        return evolve(self, trace=(*self.trace, step))

    def end(self: P, stage: str, why: str) -> P:
        """This state, ended by ``stage`` because of ``why``: the runner runs no further stage."""
        return evolve(self, stopped_by=f"{stage}: {why}")


@frozen
class Sift(State):
    """The recall path's state: the message and what has been found for it.

    ``message``: the message, redacted (and cut to its head and tail) by the ``redact`` stage.
    ``kind``: the message's kind, set by ``classify``; None before. ``answered``: a note
    answered, so the store is not searched: set by ``notes`` (a note clearly the answer) and by
    ``gate`` and ``search`` (notes were found and the store will not be asked); ``gate``,
    ``search`` and ``judge`` do nothing when it is set. ``noted``: the pointers of the facts the
    notes hold, set by ``notes``: their copies in the store are not weighed again. ``candidates``:
    the store's passages, set by ``search``. ``chosen``: the items to add, best first: set by ``notes``, then
    ``judge`` (the best notes and passages), narrowed by ``dedupe``. ``text``: what is added,
    rendered by ``render``; only items rendered count as added.
    """

    message: Message = field(kw_only=True)
    kind: Kind | None = None
    answered: bool = False
    noted: frozenset[str] = frozenset()
    candidates: tuple[Item, ...] = ()
    chosen: tuple[Item, ...] = ()
    text: str = ""


@frozen
class Keep(State):
    """The retain path's state: the exchange and what was made of it.

    ``exchange``: the exchange, redacted (and bounded) by ``redact_exchange``. ``category``
    and ``keep``: why it is kept or dropped, set by ``keep`` (``novel`` sets ``keep`` back to
    False for a line the notes already hold). ``line``: the exchange distilled to one line of
    notes, set by ``distill``. ``edits``: the notes it supersedes (``novel``), then the edits
    applied (``revise``). ``lines``: the lines written to the notes, set by ``append_notes``.
    """

    exchange: Exchange = field(kw_only=True)
    category: Category | None = None
    keep: bool = False
    line: str = ""
    lines: tuple[str, ...] = ()
    edits: tuple[Edit, ...] = ()


@frozen
class Briefing(State):
    """The session brief's state: the session it is for, what is in play, the facts weighed and chosen.

    ``session``: the session the brief is for. ``budget``: the characters the brief may take, its
    header included. ``focus``: words of what is in play (the branch, the files being changed),
    which ``choose_facts`` prefers. ``candidates``: the facts weighed, set by ``read_facts`` and
    narrowed by ``screen_facts``. ``chosen``: the facts chosen (``choose_facts``), in the order the
    notes hold them once ``render_brief`` has run. ``text``: the brief, rendered by ``render_brief``.
    """

    session: str = field(kw_only=True)
    budget: int = field(kw_only=True)
    focus: str = ""
    candidates: tuple[Item, ...] = ()
    chosen: tuple[Item, ...] = ()
    text: str = ""


PathState = Sift | Keep | Briefing
Stage = Callable[[Services, Any], Any]
"""A stage: ``(services, state) -> state``, any callable (a function, an object with ``__call__``)."""


# -- calling a service ---------------------------------------------------------

class EndPath(Exception):
    """Raised inside a stage to end the path with the state it carries."""

    def __init__(self, state: State) -> None:
        self.state = state


def call_service(services: Services, state: PathState, stage: str, target: Decider | Store, seconds: float,
                 since: float, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, a call to ``target``, within ``seconds`` (and the path's deadline),
    minding its breaker when it is remote: from the stage named ``stage``, on ``services``, in the
    path at ``state``, timed in its trace from ``since`` (a ``time.perf_counter()``).

    >>> found = call_service(services, state, "lookup", store, 5.0, t0, store.search, query, limit=5, timeout=5.0)

    On any failure the path ends with nothing added (``EndPath``); a remote service that is down
    pauses memory and the state carries the one-line notice. A service says it runs in-process
    with ``remote = False``: it has no breaker, and its failure is this call's alone. The stage
    calling it is given ``seconds`` more by the runner.
    """
    service = target.name
    health = services.health if is_remote(target) else None
    if health is not None and not health.allows(service):
        paused = state.log(stage, "paused", since, why=f"{service} is paused")
        raise EndPath(evolve(paused.end(stage, f"{service} paused"),
                             notice=health.notice(service, session_of(state))))
    budget = allowance()
    if budget is not None:
        budget.extend(seconds)
    try:
        result = services._workers.within(seconds, functools.partial(fn, *args, **kwargs), key=service,
                                          until=budget.until if budget is not None else math.inf)
    except (ServiceUnavailable, ConfigurationError) as exc:
        if isinstance(exc, DeadlineExceeded) and budget is not None and budget.past_deadline():
            raise PastDeadline(f"{service} was still being asked") from exc  # the caller's deadline, not its fault
        # Either way memory pauses with a notice: a wrong key must not turn it off in silence.
        refused = isinstance(exc, ConfigurationError)
        if health is not None:
            health.failed(service, _reason(exc))
        ended = state.log(stage, "misconfigured" if refused else "unavailable", since, why=f"{service}: {exc}")
        why = f"{service} {REFUSED}: {exc}" if refused else f"{service} {_outcome(exc)}"
        if health is not None:
            notice = health.notice(service, session_of(state))
        elif isinstance(exc, DeadlineExceeded):
            notice = None  # slow is not broken
        else:  # closed by the stage's next success in this session
            notice = _failure_notice(services, state, stage_name(stage), f"{service}: {exc}")
        raise EndPath(evolve(ended.end(stage, why), notice=notice)) from exc
    if health is not None:
        health.succeeded(service)
    return result


def _failure_notice(services: Services, state: State, what: str, why: str) -> str | None:
    """The line for the user when ``what`` (a stage, a service of memsift's own) failed in this call.

    Its session hears it once, and again when it works (the health file, entry for this session
    alone); no other session hears of it. A call with no session (or services without a health
    file) has the line on its own result.
    """
    session = session_of(state)
    if services.health is None or not session:
        return f"memory off for this call: {what}: {one_line(why)}"
    return services.health.notice(services.health.broken(what, why, session=session), session)


def _failure_entry(state: State, stage: str) -> str:
    """The health file's name for a failure of ``stage`` in this call's session (closed by its next success)."""
    return for_session(stage_name(stage), session_of(state))


def _located(exc: BaseException) -> str:
    """An error as a trace shows it: its type, what it says, and where it was raised.

    >>> _located(KeyError("missing"))   # raised at line 12 of my_stages.py, in pick
    "KeyError: 'missing' (my_stages.py:12 in pick)"
    """
    import traceback  # only once a stage failed: a hook's every message would pay for it

    frames = traceback.extract_tb(exc.__traceback__)
    at = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    return f"{type(exc).__name__}: {exc}{at}"


def _reason(exc: ServiceUnavailable | ConfigurationError) -> str:
    """Why a service's breaker opened, as the notice reads it: refused, failing, or away."""
    if isinstance(exc, ConfigurationError):
        return f"{REFUSED}: {exc}"
    if isinstance(exc, ServerError):
        return f"{FAILING} {exc.status}: {exc}"
    return str(exc)


def _outcome(exc: ServiceUnavailable | ConfigurationError) -> str:
    return f"failing (answered {exc.status})" if isinstance(exc, ServerError) else "unavailable"


def stage_name(name: str) -> str:
    """How the health file and the notices name a stage."""
    return f"the {name} stage"


def is_remote(service: Decider | Store) -> bool:
    """Whether a service has a breaker: all do, but those that say ``remote = False``."""
    return getattr(service, "remote", True)


def session_of(state: State) -> str:
    """The session a path's state is for ('' when none: a library call that names none)."""
    if isinstance(state, Sift):
        return state.message.session
    if isinstance(state, Keep):
        return state.exchange.session
    return str(getattr(state, "session", ""))


def ask(services: Services, state: PathState, stage: str, since: float,
        questions: Mapping[str, Question]) -> dict[str, Answer]:
    """Ask the decider of ``services`` the ``questions`` about ``state``, within its deadline (the
    backend these questions are routed to, if any), for the stage named ``stage`` whose step is
    timed from ``since``: the answers by question id, or ``EndPath`` when it cannot answer.

    >>> answers = ask(services, state, "urgent", t0, {"urgent": Noul("urgent", "Is this an outage?")})
    """
    route = getattr(services.decider, "for_questions", None)
    decider = route(questions) if route is not None else services.decider
    answers: dict[str, Answer] = call_service(services, state, stage, decider, services.config.decider_deadline,
                                              since, decider.decide, decision_state(state), questions)
    return answers


def decision_state(state: PathState) -> dict[str, Any]:
    """What the decider reads of ``state``: the message, the recent turns, the kind once known (or the
    exchange, on the retain path)."""
    if isinstance(state, Keep):
        return {"user": state.exchange.user, "assistant": state.exchange.assistant}
    if isinstance(state, Briefing):
        return {"focus": state.focus}
    recent = state.message.conversation[-RECENT_TURNS:]
    out: dict[str, Any] = {
        "message": state.message.text,
        "conversation": [{"role": t.role, "text": t.text} for t in recent],
    }
    if state.kind is not None:
        out["kind"] = state.kind.value
    return out


@functools.lru_cache(maxsize=4096)
def _scrubbed(redactor: Redactor, text: str) -> str:
    """Each turn is redacted once, not once per later message of the session."""
    return redactor.redact(text)


def scrubber(redactor: Redactor) -> Callable[[str], str]:
    """The redactor's ``redact``, remembered per text when the redactor can be a cache key."""
    try:
        hash(redactor)
    except TypeError:  # a plain dataclass, say: redacting uncached is slower, never wrong
        return redactor.redact
    return functools.partial(_scrubbed, redactor)


def _side(answer: Answer, label: Callable[[str], T], yes: Callable[[T], bool],
          threshold: float) -> tuple[float, bool, T]:
    """Decide a choice by the summed probability of its "yes" options, then take the likeliest
    option of the side chosen: (probability of yes, yes?, option)."""
    assert isinstance(answer, ChoiceAnswer)
    probabilities = {label(option): p for option, p in answer.probabilities.items()}
    p_yes = sum(p for option, p in probabilities.items() if yes(option))
    chosen = p_yes >= threshold
    side = [option for option in probabilities if yes(option) == chosen] or list(probabilities)
    return p_yes, chosen, max(side, key=probabilities.__getitem__)


def _yes(answer: Answer) -> float:
    """A Noul's answer: the probability of yes."""
    assert isinstance(answer, NoulAnswer)
    return answer.noul

