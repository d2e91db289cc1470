"""Contract checks for your own ``Store``, ``Decider``, ``Notebook``, ``Redactor`` and ``Reviser``.

Every check is called the same way: with ``make``, a callable that returns a
new implementation each time (a class that takes no arguments will do), and
options by keyword. It builds what it needs, uses it the way memsift's stages
do, and returns None, or raises ``ContractError`` naming the promise broken:
a method missing or taking other arguments, an answer of the wrong shape, an
exception where none belongs (which call raised it, and what). They run in
seconds against an in-process implementation; a remote one is checked
against its real service (point the factory at a test server).

>>> check_store(lambda: SQLiteStore(tmp_path / f"{uuid.uuid4()}.sqlite"))
>>> check_decider(EmbeddedDecider.load)
>>> check_notebook(lambda: NotesFile(tmp_path / f"{uuid.uuid4()}.md"))
>>> check_redactor(PatternRedactor)
>>> check_reviser(DuplicateReviser)
>>> check_store(BrokenStore)
Traceback (most recent call last):
memsift.testing.contracts.ContractError: BrokenStore.search(self, q) cannot be called as
search(query, *, limit, timeout): got an unexpected keyword argument 'limit'
"""

from __future__ import annotations

import functools
import inspect
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ..errors import ConfigurationError, ServiceUnavailable
from ..notes import apply_edits
from ..types import (
    Answer, Choice, ChoiceAnswer, Decider, Edit, Item, Notebook, Noul, NoulAnswer, Question, Redactor, Reviser,
    Score, ScoreAnswer, Store, probability,
)

T = TypeVar("T")
TIMEOUT = 30.0  # what a check gives each call: a remote test service answers well within it


class ContractError(AssertionError):
    """An implementation broke a promise of memsift's protocols; the message says which."""


def _promise(holds: bool, what: str) -> None:
    if not holds:
        raise ContractError(what)


def _calling(what: str, call: Callable[[], T]) -> T:
    """``call()``; an exception it raises is a broken promise, said with the call that raised it."""
    try:
        return call()
    except ContractError:
        raise
    except Exception as error:
        raise ContractError(f"{what} raised {type(error).__name__}: {error}") from error


def _made(make: Callable[[], T], what: str) -> T:
    _promise(callable(make), f"a check takes a factory that makes a new {what} (a class, a lambda), not {make!r}")
    return _calling(f"making a {what} with {getattr(make, '__name__', make)!r}", make)


def _method(implementation: object, name: str, positional: Sequence[str], keywords: Sequence[str] = ()) -> None:
    """The implementation has ``name`` and it takes these arguments, as the stages pass them."""
    shown = ", ".join([*positional, *(["*", *keywords] if keywords else [])])
    owner = type(implementation).__name__
    method = getattr(implementation, name, None)
    if not callable(method):
        raise ContractError(f"{owner} has no method {name}({shown})")
    try:
        signature = inspect.signature(method)
    except (TypeError, ValueError):  # a builtin that does not say: calling it will tell
        return
    try:
        signature.bind(*positional, **dict.fromkeys(keywords))
    except TypeError as error:
        own = str(inspect.signature(getattr(type(implementation), name, method)))
        raise ContractError(f"{owner}.{name}{own} cannot be called as {name}({shown}): {error}") from None


def _threads(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Each call in a thread of its own, all at once (hooks of one project run side by side)."""
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            results[index] = calls[index]()
        except BaseException as error:  # the check reports it
            errors.append(error)

    workers = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        raise ContractError(f"a call from several threads at once raised {errors[0]!r}") from errors[0]
    return results


# -- Store ---------------------------------------------------------------------

_PASSAGES = (
    Item("ex-kit-queue", "Queues: RabbitMQ over Kafka, because operations already run RabbitMQ.", "passage",
         "memsift:decision"),
    Item("ex-kit-heap", "The nightly worker ran out of memory; the heap is capped at 1.5 GB now.", "passage",
         "memsift:incident"),
    Item("ex-kit-deploy", "Never deploy on Thursdays: the payment provider freezes releases.", "passage",
         "memsift:constraint"),
)


def check_store(make: Callable[[], Store], *, settle: Callable[[Store], None] | None = None,
                down: Callable[[], Store] | None = None, timeout: float = TIMEOUT) -> None:
    """A ``Store``: a name; ``search`` on an empty store returns an empty list; what ``add`` took
    is found by its words, as the ``Item`` it was (id, text, origin; a source naming where it is), at most ``limit``
    of them; ``add`` is idempotent per id; adds from several threads at once all land.

    ``make`` returns a new, empty store each call. ``settle(store)`` waits until what was added
    can be searched (a service that indexes in the background). ``down`` returns the store
    pointed at a service that is not there: ``search`` and ``add`` must then raise
    ``ServiceUnavailable`` (or ``ConfigurationError`` for a refusal), never anything else.
    ``timeout`` is what each call is given (a service that indexes slowly wants more).

    >>> check_store(lambda: JsonStore(tmp_path / f"{uuid.uuid4()}.json"))
    """
    wait = settle or (lambda store: None)
    store = _made(make, "store")
    _promise(isinstance(getattr(store, "name", None), str) and bool(store.name), "a store has a non-empty name")
    _method(store, "search", ["query"], ["limit", "timeout"])
    _method(store, "add", ["items"], ["timeout"])
    empty = _calling("search on an empty store", lambda: store.search("why did we choose RabbitMQ?", limit=5,
                                                                        timeout=timeout))
    _promise(isinstance(empty, list) and empty == [], f"search on an empty store returns [], not {empty!r}")

    _calling("add", lambda: store.add(list(_PASSAGES), timeout=timeout))
    _calling("add of an item it holds (a retried write)", lambda: store.add([_PASSAGES[0]], timeout=timeout))
    wait(store)
    found = _calling("search", lambda: store.search("why did we choose RabbitMQ over Kafka for the queues?", limit=5,
                                                     timeout=timeout))
    _promise(all(isinstance(item, Item) for item in found), "search returns Items")
    _promise(len(found) <= 5, f"search returns at most limit=5 items, not {len(found)}")
    ids = [item.id for item in found]
    _promise("ex-kit-queue" in ids, f"an added passage is found by its words (searched RabbitMQ, got {ids})")
    _promise(ids.count("ex-kit-queue") == 1, "add is idempotent per id: a passage added twice is found once")
    queue = next(item for item in found if item.id == "ex-kit-queue")
    _promise((queue.text, queue.origin) == (_PASSAGES[0].text, "passage") and bool(queue.source),
             f"search returns the item as it was added (its text and origin, and a source), not {queue!r}")
    one = _calling("search", lambda: store.search("memory heap worker RabbitMQ Thursdays deploy", limit=1,
                                                   timeout=timeout))
    _promise(len(one) <= 1, f"search returns at most limit=1 item, not {len(one)}")

    fresh = _made(make, "store")
    batches = [[Item(f"ex-kit-thread-{t}-{i}", f"Thread {t} fact {i}: the cache key holds tenant{t}x{i}.",
                     "passage", "memsift:decision") for i in range(3)] for t in range(4)]
    _threads([functools.partial(fresh.add, batch, timeout=timeout) for batch in batches])
    wait(fresh)
    for t in range(4):
        got = {item.id for item in fresh.search(f"tenant{t}x0 tenant{t}x1 tenant{t}x2 cache key", limit=12,
                                                timeout=timeout)}
        _promise({f"ex-kit-thread-{t}-{i}" for i in range(3)} <= got,
                 f"adds from several threads at once all land (thread {t}'s items: {sorted(got)})")
    if down is not None:
        _check_down(_made(down, "store whose service is away"))


def _check_down(store: Store) -> None:
    for call in (lambda: store.search("anything", limit=3, timeout=5.0),
                 lambda: store.add([_PASSAGES[0]], timeout=5.0)):
        try:
            call()
        except (ServiceUnavailable, ConfigurationError):
            continue
        except Exception as error:
            raise ContractError(f"a store whose service is away raises ServiceUnavailable, not {error!r}") from error
        raise ContractError("a store whose service is away raises ServiceUnavailable; it answered")


# -- Decider -------------------------------------------------------------------

def _questions() -> dict[str, Question]:
    """The questions memsift's stages ask, one of each task, as they ask them."""
    from ..stages import ANSWERS, KEEP_OPTIONS, KIND_OPTIONS, NOVEL_OPTIONS, WORTH
    from ..stages._distill import FACT

    return {
        "kind": Choice("kind", "What kind of message is this?", KIND_OPTIONS),
        "worth": Noul("worth", WORTH),
        "answers": Noul("answers", {"question": ANSWERS, "item": _PASSAGES[0].text, "origin": "note"}),
        "keep": Choice("keep", "Does this exchange deserve memory?", KEEP_OPTIONS),
        "fact": Noul("fact", {"question": FACT, "item": "RabbitMQ over Kafka, because ops run RabbitMQ.",
                              "origin": "assistant", "position": 0}),
        "novel": Choice("novel", {"question": "How does the new line relate to this note?",
                                  "item": _PASSAGES[0].text, "new": "Queues: RabbitMQ, since ops know it."},
                        NOVEL_OPTIONS),
    }


STATE = {"message": "why did we choose RabbitMQ over Kafka?", "conversation": [], "kind": "past_choice",
         "user": "which queue?", "assistant": "RabbitMQ over Kafka, because ops run RabbitMQ."}


def check_decider(make: Callable[[], Decider], *, tasks: Sequence[str] | None = None, levels: bool = False) -> None:
    """A ``Decider``: a name; one answer for each question asked, under its id, of the question's
    type; a Noul's probability in [0, 1]; a Choice's probabilities over exactly its options, each in
    [0, 1], summing to 1, with the choice among them; no questions, no answers; calls from several
    threads at once answered alike.

    ``make`` returns the decider to check. ``tasks`` limits the check to the question tasks it
    answers (a routed backend); ``levels`` adds a Score question (memsift asks none; System One
    answers them).

    >>> check_decider(lambda: OverlapJudge(EmbeddedDecider.load()), tasks=["answers"])
    """
    decider = _made(make, "decider")
    _promise(isinstance(getattr(decider, "name", None), str) and bool(decider.name), "a decider has a name")
    _method(decider, "decide", ["state", "questions"])
    questions = {qid: q for qid, q in _questions().items() if tasks is None or q.task in tasks}
    if levels:
        questions["level"] = Score("urgency", "How urgent is the message?", ("low", "medium", "high"))
    answers = _calling(f"decide, asked {sorted(questions)}", lambda: decider.decide(STATE, questions))
    _promise(isinstance(answers, Mapping) and set(answers) == set(questions),
             f"decide answers each question under its id: asked {sorted(questions)}, got "
             f"{sorted(answers) if isinstance(answers, Mapping) else answers!r}")
    for qid, question in questions.items():
        _check_answer(qid, question, answers[qid])
    _promise(_calling("decide, asked nothing", lambda: decider.decide(STATE, {})) == {},
             "decide with no questions returns {}")
    together = _threads([lambda: decider.decide(STATE, questions) for _ in range(4)])
    for answered in together:
        _promise(set(answered) == set(questions), "calls from several threads at once are each answered whole")


def _check_answer(qid: str, question: Question, answer: Answer) -> None:
    if isinstance(question, Noul):
        _promise(isinstance(answer, NoulAnswer) and _is_probability(answer.noul),
                 f"{qid}: a Noul is answered with a NoulAnswer whose noul is in [0, 1], not {answer!r}")
        return
    options = question.options if isinstance(question, Choice) else dict.fromkeys(question.levels)
    kind = ChoiceAnswer if isinstance(question, Choice) else ScoreAnswer
    _promise(isinstance(answer, kind), f"{qid}: a {question.type} question is answered with a {kind.__name__}")
    assert isinstance(answer, ChoiceAnswer | ScoreAnswer)
    probabilities = answer.probabilities
    if isinstance(question, Choice):
        _promise(set(probabilities) == set(options), f"{qid}: probabilities over exactly the options "
                                                     f"{sorted(options)}, not {sorted(probabilities)}")
    else:  # levels are named by their text or their index, as System One does
        _promise(len(probabilities) == len(options), f"{qid}: one probability a level, not {sorted(probabilities)}")
    _promise(all(_is_probability(p) for p in probabilities.values()) and _is_probability(answer.confidence),
             f"{qid}: probabilities and confidence in [0, 1]")
    _promise(math.isclose(sum(probabilities.values()), 1.0, abs_tol=1e-3),
             f"{qid}: probabilities sum to 1, not {sum(probabilities.values()):.4f}")
    if isinstance(answer, ChoiceAnswer):
        _promise(answer.choice in options, f"{qid}: the choice {answer.choice!r} is one of the options")
    else:
        _promise(0.0 <= answer.score <= len(options) - 1, f"{qid}: a score within the levels' indices")


def _is_probability(value: object) -> bool:
    try:
        probability(value)
    except (TypeError, ValueError):
        return False
    return True


# -- Notebook ------------------------------------------------------------------

def check_notebook(make: Callable[[], Notebook]) -> None:
    """A ``Notebook``: empty at first; ``append`` adds lines at the end, each once; ``items`` are
    its notes with a source ending in ``:<line number>``; ``candidates`` are all notes up to
    ``above`` lines and at most ``limit`` (the likeliest among them) past it; ``apply`` applies
    the edits whose line still reads ``old``, returns those, and leaves every other line as it
    was; appends from several threads at once all land.

    ``make`` returns a new, empty notebook each call.

    >>> check_notebook(lambda: NotesFile(tmp_path / f"{uuid.uuid4()}.md"))
    """
    notes = _made(make, "notebook")
    for name, positional, keywords in (("lines", [], []), ("items", [], []), ("append", ["lines"], []),
                                       ("apply", ["edits"], []), ("candidates", ["query"], ["limit", "above"])):
        _method(notes, name, positional, keywords)
    _promise(_calling("lines", notes.lines) == [] and _calling("items", notes.items) == [],
             "a new notebook has no lines and no items")
    first = ["Queues: RabbitMQ over Kafka, because ops run RabbitMQ.", "Deploys: never on Thursdays."]
    _calling("append", lambda: notes.append(first))
    _calling("append of a line it holds", lambda: notes.append([first[1]]))
    _promise(notes.lines() == first, f"append adds at the end, each line once: {notes.lines()}")
    items = notes.items()
    _promise([item.text for item in items] == first and all(item.origin == "note" for item in items),
             "items are the notes, in order, with origin 'note'")
    _promise([item.source.rsplit(":", 1)[-1] for item in items] == ["1", "2"],
             f"an item's source ends with its line number: {[item.source for item in items]}")

    all_of_them = _calling("candidates", lambda: notes.candidates("RabbitMQ", limit=1, above=10))
    _promise(len(all_of_them) == 2, "candidates are every note while the notes have at most `above` lines")
    notes.append([f"Filler {i}: the build cache lives in /var/cache/build{i}." for i in range(12)])
    narrowed = notes.candidates("why RabbitMQ over Kafka?", limit=3, above=5)
    _promise(0 < len(narrowed) <= 3, f"past `above` lines, at most `limit` candidates, not {len(narrowed)}")
    _promise(any("RabbitMQ" in item.text for item in narrowed), "narrowed candidates hold the likeliest note")

    before = notes.lines()
    edits = [Edit(1, "replace", "Queues: RabbitMQ, since ops run it.", old=before[0]),
             Edit(2, "remove", old="a line that is not there")]
    applied = _calling("apply", lambda: notes.apply(edits))
    after = notes.lines()
    _promise([(e.action, e.text) for e in applied] == [("replace", "Queues: RabbitMQ, since ops run it.")],
             f"apply applies the edit whose line reads `old` and drops the stale one: {applied}")
    _promise(after == apply_edits(before, edits[:1]), "apply changes only the lines it names")

    fresh = _made(make, "notebook")
    _threads([functools.partial(fresh.append, [f"Thread {t}: fact {i}." for i in range(5)]) for t in range(4)])
    held = set(fresh.lines())
    _promise(all(f"Thread {t}: fact {i}." in held for t in range(4) for i in range(5)),
             "appends from several threads at once lose no line")


# -- Redactor ------------------------------------------------------------------

# Shapes every redactor must catch; fake values, built so no scanner mistakes this file for a leak.
_SECRETS = {
    "a GitHub token": "ghp_" + "Zk4Rm8Qx2Lw7Tn1Vb5Hc9Jd3Fg6Sa0PeYuIo",
    "an AWS access key id": "AKIA" + "QX7TJ2LWZ5RN3VBM",
    "a URL's password": "Pv5Kx8" + "Zq2Lm7",
    "a password after its name": "hunter2" + "-Xq9!vB",
}
_CARRIERS = ("export GITHUB_TOKEN={}", "aws_access_key_id = {}", "DATABASE_URL=postgres://app:{}@db:5432/shop",
             "the admin password is {}")
_PLAIN = "Queues: RabbitMQ over Kafka, because ops run RabbitMQ (decision 2026-12-01 ex-1a2b3c4d)."


def check_redactor(make: Callable[[], Redactor]) -> None:
    """A ``Redactor``: hashable (the stages cache per redactor); each credential shape is removed;
    plain prose comes back unchanged; redacting twice changes nothing more; safe from several
    threads at once. ``make`` returns the redactor to check.

    >>> check_redactor(PatternRedactor)
    """
    redactor = _made(make, "redactor")
    _method(redactor, "redact", ["text"])
    try:
        hash(redactor)
    except TypeError as error:
        raise ContractError("a redactor is hashable: the stages cache each text's redaction per redactor") from error
    for (what, secret), carrier in zip(_SECRETS.items(), _CARRIERS, strict=True):
        text = carrier.format(secret)
        redacted = _calling("redact", functools.partial(redactor.redact, text))
        _promise(secret not in redacted, f"{what} is redacted: {text!r}")
    _promise(redactor.redact(_PLAIN) == _PLAIN, f"plain prose comes back unchanged: {redactor.redact(_PLAIN)!r}")
    for carrier, secret in zip(_CARRIERS, _SECRETS.values(), strict=True):
        once = redactor.redact(carrier.format(secret))
        _promise(redactor.redact(once) == once, f"redacting twice changes nothing more: {once!r}")
    texts = [carrier.format(secret) for carrier, secret in zip(_CARRIERS, _SECRETS.values(), strict=True)]
    alone = [redactor.redact(text) for text in texts]
    _promise(_threads([lambda: [redactor.redact(text) for text in texts] for _ in range(4)]) == [alone] * 4,
             "redacting from several threads at once gives what one thread gets")


# -- Reviser -------------------------------------------------------------------

def check_reviser(make: Callable[[], Reviser]) -> None:
    """A ``Reviser``: returns a list of ``Edit``; each names a line by its number (1-based, within
    the notes) and its exact text (``old``); an action of ``replace`` (with one line of new text)
    or ``remove``; at most one edit a line. ``make`` returns the reviser to check.

    >>> check_reviser(DuplicateReviser)
    """
    reviser = _made(make, "reviser")
    _method(reviser, "revise", ["lines", "added"])
    lines = ["# Project notes", "Queues: RabbitMQ over Kafka, because ops run RabbitMQ.",
             "Deploys: never on Thursdays.", "Queues: RabbitMQ over Kafka, since ops run RabbitMQ."]
    edits = _calling("revise", lambda: reviser.revise(lines, [lines[-1]]))
    _promise(isinstance(edits, list) and all(isinstance(e, Edit) for e in edits), "revise returns a list of Edit")
    for edit in edits:
        _promise(1 <= edit.line <= len(lines), f"an edit names a line of the notes: {edit}")
        _promise(edit.old == lines[edit.line - 1], f"an edit's `old` is its line's exact text: {edit}")
        _promise(edit.action in ("replace", "remove"), f"an edit replaces or removes: {edit}")
        _promise(edit.action == "remove" or (bool(edit.text) and "\n" not in edit.text),
                 f"a replacement is one line of text: {edit}")
    named = [edit.line for edit in edits]
    _promise(len(named) == len(set(named)), f"at most one edit a line: {edits}")
