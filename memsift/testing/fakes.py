"""Fakes that keep memsift's contracts exactly: for tests of a harness built on memsift.

>>> store = MemoryStore()
>>> store.add([Item("ex-1", "Payments: Stripe over Mollie", "passage", "memory")], timeout=1)
>>> [item.id for item in store.search("why Stripe?", limit=5, timeout=1)]
['ex-1']
>>> store.down = True
>>> store.search("why Stripe?", limit=5, timeout=1)
Traceback (most recent call last):
memsift.errors.ServiceUnavailable: memory store is down
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attrs import evolve

from .._words.text import stems
from ..costs import charge
from ..errors import ServiceUnavailable
from ..types import (
    Answer, Category, Choice, ChoiceAnswer, Item, Kind, NoulAnswer, Question, Score, ScoreAnswer, Usage,
)


class Clock:
    """A clock that moves only when told, for what memsift times (a breaker's cool-down, the outbox's
    leases): ``clock()`` reads it, as ``time.time()`` is read; ``advance`` moves it. It reads
    ``start`` at first (``START``, 2026-12-01 00:00 UTC, by default).

    >>> clock = Clock()
    >>> services = open_services(config, project, clock=clock)   # the store goes down, memory pauses...
    >>> clock.advance(config.breaker_cooldown)                    # ...and the next call probes it again
    >>> clock() - Clock.START
    30.0
    """

    START = 1_796_083_200.0  # 2026-12-01 00:00 UTC

    def __init__(self, start: float = START) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` on."""
        with self._lock:
            self._now += seconds


class MemoryStore:
    """A ``Store`` in a dict: items found by the share of the query's words they hold, best first.

    ``search(query, *, limit, timeout)`` and ``add(items, *, timeout)`` as ``types.Store`` says
    (the ``timeout`` goes unused: a dict answers at once). Set ``down = True`` and every call
    raises ``ServiceUnavailable``, as a store does when its service is away; ``remote`` says whether memsift minds
    a breaker for it (True, as for a real service).
    """

    name = "memory store"

    def __init__(self, *, remote: bool = True) -> None:
        self.remote = remote
        self.down = False
        self.items: dict[str, Item] = {}
        self._lock = threading.Lock()

    def add(self, items: Sequence[Item], *, timeout: float) -> None:
        self._answering()
        with self._lock:
            self.items.update((item.id, item) for item in items)  # idempotent per id

    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]:
        self._answering()
        asked = stems(query)
        with self._lock:
            held = list(self.items.values())
        scored = []
        for item in held:
            words = stems(item.text)
            shared = len(asked & words) / (len(asked) or 1)
            if shared:
                scored.append((shared, item))
        scored.sort(key=lambda pair: -pair[0])
        return [evolve(item, score=shared) for shared, item in scored[:limit]]

    def _answering(self) -> None:
        if self.down:
            raise ServiceUnavailable(f"{self.name} is down")


class ScriptedDecider:
    """A ``Decider`` that answers each question by its task, from a script.

    ``kind`` and ``keep`` pick the option of a Choice (or give its probabilities
    as a mapping); ``worth`` is the probability of yes; ``answers(item, origin)``
    the probability that one memory item answers the message; ``fact(clause,
    origin)`` the probability that a clause states a kept exchange's fact;
    ``novel(note, new)`` how a new note line stands to an older one
    (``"restates"``, ``"updates"`` or ``"differs"``). A Score question gets its
    middle level. Every call is recorded: the state it read and the questions
    it was asked. With ``usage``, each question costs that much, as a remote
    decider's does: charged to the path that asked (``costs.charge``) and
    summed in ``spent``.

    >>> decider = ScriptedDecider(kind=Kind.REACTION)
    >>> recall(Message("thanks!"), evolve(services, decider=decider)).stopped_by
    'classify: reaction needs no memory'
    >>> priced = ScriptedDecider(usage=Usage(1, 300, 1, 0.000015))
    >>> recall(Message("why did we pick Stripe?"), evolve(services, decider=priced)).trace[1].usage
    Usage(questions=1, tokens_in=300, tokens_out=1, usd=1.5e-05, calibrated=True)
    """

    name = "scripted decider"
    remote = False

    def __init__(self, *, kind: Kind | Mapping[str, float] = Kind.PAST_CHOICE, worth: float = 0.9,
                 answers: Callable[[str, str], float] | None = None,
                 keep: Category | Mapping[str, float] = Category.DECISION,
                 fact: Callable[[str, str], float] | None = None,
                 novel: Callable[[str, str], str] | None = None, usage: Usage | None = None) -> None:
        self.kind, self.worth, self.keep = kind, worth, keep
        self.answers = answers or (lambda item, origin: 0.0)
        self.fact = fact or (lambda clause, origin: 0.5)
        self.novel = novel or (lambda note, new: "differs")
        self.usage = usage
        self.spent = Usage()
        self.calls: list[tuple[dict[str, Any], dict[str, Question]]] = []
        self._lock = threading.Lock()

    def decide(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Answer]:
        answers = {qid: self._answer(question) for qid, question in questions.items()}
        cost = sum((self.usage for _ in questions), Usage()) if self.usage is not None else Usage()
        with self._lock:
            self.calls.append((dict(state), dict(questions)))
            self.spent += cost
        if questions and self.usage is not None:
            charge(cost)
        return answers

    def asked(self, task: str) -> list[Question]:
        """Every question of this task asked so far, in order."""
        return [q for _, questions in self.calls for q in questions.values() if q.task == task]

    def _answer(self, question: Question) -> Answer:
        about = question.instructions if isinstance(question.instructions, Mapping) else {}
        if isinstance(question, Score):
            middle = question.levels[len(question.levels) // 2]
            return ScoreAnswer(float(len(question.levels) // 2), {lv: float(lv == middle) for lv in question.levels},
                               1.0)
        if isinstance(question, Choice):
            picks: dict[str, Callable[[], Any]] = {
                "kind": lambda: self.kind, "keep": lambda: self.keep,
                "novel": lambda: self.novel(about["item"], about["new"]),
            }
            pick = picks.get(question.task, lambda: next(iter(question.options)))()
            return _chosen(question, pick)
        yes: dict[str, Callable[[], float]] = {
            "worth": lambda: self.worth,
            "answers": lambda: self.answers(about["item"], about["origin"]),
            "fact": lambda: self.fact(about["item"], about["origin"]),
        }
        return NoulAnswer(yes.get(question.task, lambda: 0.5)())


def _chosen(question: Choice, pick: Any) -> ChoiceAnswer:
    if isinstance(pick, Mapping):
        probabilities = {str(o): float(pick.get(o, 0.0)) for o in question.options}
    else:
        probabilities = {str(o): 1.0 if o == pick else 0.0 for o in question.options}
    best = max(probabilities, key=probabilities.__getitem__)
    return ChoiceAnswer(best, probabilities, probabilities[best])
