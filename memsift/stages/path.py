"""What every stage shares: the path's state, and calling a service within its deadline.

A stage takes the services and the path's state and returns the next state.
It ends the path by returning ``state.end(stage, why)``; the runner in
``pipeline.py`` stops there. A stage of one's own asks the decider with
``ask`` and calls a store with ``call_service``, so deadlines and breakers
hold for it as for the built-in ones.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from attrs import evolve, field, frozen

from .._bounds import RECENT_TURNS
from .._budget import within
from .._health import FAILING, REFUSED
from ..errors import ConfigurationError, DeadlineExceeded, ServerError, ServiceUnavailable
from ..services import Services
from ..types import (
    Answer, Category, ChoiceAnswer, Decider, Edit, Exchange, Item, Kind, Message, NoulAnswer, Question, Redactor, Step,
    Store,
)


P = TypeVar("P", bound="_Path")
T = TypeVar("T")


@frozen
class _Path:
    trace: tuple[Step, ...] = ()
    stopped_by: str = ""
    notice: str | None = None

    def log(self: P, stage: str, verdict: str, since: float, score: float | None = None, why: str = "") -> P:
        """This state with one more step in its trace, timed from ``since``."""
        step = Step(stage, verdict, time.perf_counter() - since, score, why)
        return evolve(self, trace=(*self.trace, step))

    def end(self: P, stage: str, why: str) -> P:
        """This state, ended: the runner runs no further stage."""
        return evolve(self, stopped_by=f"{stage}: {why}")


@frozen
class Sift(_Path):
    """The recall path's state: the message and what has been found for it."""

    message: Message = field(kw_only=True)
    kind: Kind | None = None
    answered: bool = False  # a note answered: no need to search the store
    candidates: tuple[Item, ...] = ()
    chosen: tuple[Item, ...] = ()
    text: str = ""


@frozen
class Keep(_Path):
    """The retain path's state: the exchange and what was made of it."""

    exchange: Exchange = field(kw_only=True)
    category: Category | None = None
    keep: bool = False
    line: str = ""  # the exchange distilled to one line of notes
    lines: tuple[str, ...] = ()  # the lines written to the notes
    edits: tuple[Edit, ...] = ()


PathState = Sift | Keep
Stage = Callable[[Services, Any], Any]


# -- calling a service ---------------------------------------------------------

class EndPath(Exception):
    """Raised inside a stage to end the path with the state it carries."""

    def __init__(self, state: _Path) -> None:
        self.state = state


def call_service(services: Services, state: PathState, stage: str, target: Decider | Store, seconds: float,
                 since: float, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a service within its deadline, minding its breaker when it is remote.

    On any failure the path ends with nothing added; a remote service that is
    down pauses memory and the state carries the one-line notice. A service
    says it runs in-process with ``remote = False``: it has no breaker.
    """
    service = target.name
    health = services.health if is_remote(target) else None
    troubles = services.health  # a local service failing is no outage to wait out: memory is off
    if health is not None and not health.allows(service):
        paused = state.log(stage, "paused", since, why=f"{service} is paused")
        raise EndPath(evolve(paused.end(stage, f"{service} paused"),
                             notice=health.notice(service, _session(state))))
    try:
        result = within(seconds, fn, *args, **kwargs)
    except (ServiceUnavailable, ConfigurationError) as exc:
        # Either way memory pauses with a notice: a wrong key must not turn it off in silence.
        refused = isinstance(exc, ConfigurationError)
        if health is not None:
            health.failed(service, _reason(exc))
        elif troubles is not None and not isinstance(exc, DeadlineExceeded):
            troubles.broken(stage_name(stage), f"{service}: {exc}")  # closed by the stage's next success
        notice = health.notice(service, _session(state)) if health is not None else None
        ended = state.log(stage, "misconfigured" if refused else "unavailable", since, why=f"{service}: {exc}")
        why = f"{service} {REFUSED}: {exc}" if refused else f"{service} {_outcome(exc)}"
        raise EndPath(evolve(ended.end(stage, why), notice=notice)) from exc
    if health is not None:
        health.succeeded(service)
    return result


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


def _session(state: PathState) -> str:
    return state.message.session if isinstance(state, Sift) else state.exchange.session


def ask(services: Services, state: PathState, stage: str, since: float,
        questions: Mapping[str, Question]) -> dict[str, Answer]:
    """Ask the decider, within its deadline (the backend these questions are routed to, if any)."""
    route = getattr(services.decider, "for_questions", None)
    decider = route(questions) if route is not None else services.decider
    answers: dict[str, Answer] = call_service(services, state, stage, decider, services.config.decider_deadline,
                                              since, decider.decide, decision_state(state), questions)
    return answers


def decision_state(state: PathState) -> dict[str, Any]:
    """What the decider reads: the message, the recent turns, the kind once known."""
    if isinstance(state, Keep):
        return {"user": state.exchange.user, "assistant": state.exchange.assistant}
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

