"""The stages: small callables, one job each, composed into the two paths.

A stage takes the services and the path's state and returns the next state.
It ends the path by returning ``state.end(stage, why)``; the runner in
``pipeline.py`` stops there. A pipeline is a plain list of stages::

    quiet_or_notes = [redact, classify, notes, render]
    recall(message, services, stages=quiet_or_notes)
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from attrs import evolve, field, frozen

from .bounds import EXCHANGE_CHARS, MESSAGE_CHARS, NOTE_CHARS, TURN_CHARS, bounded
from .budget import within
from .config import Config
from .errors import ConfigurationError, DeadlineExceeded, ServiceUnavailable
from .health import REFUSED
from .notes import exchange_id, one_line
from .services import Services
from .text import content_words, stem
from .types import (
    Answer, Category, Choice, ChoiceAnswer, Decider, Edit, Exchange, Item, Kind, Message, Noul,
    NoulAnswer, Question, Redactor, Step, Store, Turn,
)

RECENT_TURNS = 4  # what the decider reads of the conversation: the last exchanges
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
            health.failed(service, f"{REFUSED}: {exc}" if refused else str(exc))
        elif troubles is not None and not isinstance(exc, DeadlineExceeded):
            troubles.broken(stage_name(stage), f"{service}: {exc}")  # closed by the stage's next success
        notice = health.notice(service, _session(state)) if health is not None else None
        ended = state.log(stage, "misconfigured" if refused else "unavailable", since, why=f"{service}: {exc}")
        why = f"{service} {REFUSED}: {exc}" if refused else f"{service} unavailable"
        raise EndPath(evolve(ended.end(stage, why), notice=notice)) from exc
    if health is not None:
        health.succeeded(service)
    return result


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


# -- recall --------------------------------------------------------------------

KIND_OPTIONS: dict[str, str | None] = {
    Kind.REACTION: "a reaction to the last answer: thanks, ok, praise, annoyance",
    Kind.ACTION_ON_FINISHED_WORK: "act on what was just done: commit, push, run the tests, revert it",
    Kind.COMPLETE_INSTRUCTION: "a task that carries everything it needs",
    Kind.GENERAL_KNOWLEDGE: "a question of general knowledge, not about this project",
    Kind.CONVERSATION_QUESTION: "a question about this conversation itself",
    Kind.NEW_DECISION: "a decision about to be made, where earlier choices or constraints may matter",
    Kind.PAST_CHOICE: "a question about an earlier choice or its reason",
    Kind.RESUMING_WORK: "picking up work started in an earlier session",
    Kind.RECURRING_PROBLEM: "a problem that happened before",
    Kind.BUILDS_ON_EXISTING: "a task that builds on something that already exists",
    Kind.EARLIER_EXCHANGE: "a reference to an exchange in an earlier session",
}

ANSWERS = ("Does this memory item hold what the agent needs to answer the user's message well, "
           "and is it not already said in the conversation?")
WORTH = ("Is the subject of the message one that project memory keeps: a technical choice, "
         "a constraint, or a problem met before?")
KEEP_OPTIONS: dict[str, str | None] = {
    Category.DECISION: "a technical choice and its reason",
    Category.CONSTRAINT: "a limit likely to cause trouble later",
    Category.INCIDENT: "a problem and its fix",
    Category.REACTION: "a reaction",
    Category.ONE_OFF: "a task done once",
    Category.UI_DETAIL: "a UI detail that belongs in the design system",
    Category.HABIT: "a cross-project habit that belongs in the agent's instruction file",
    Category.GENERAL: "general knowledge",
}


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


def redact(services: Services, state: Sift) -> Sift:
    """Secrets never reach a decider, a store or the notes: everything after sees redacted text.

    What is read of a long message or turn is its head and tail (``bounds``): the rest is left out.
    """
    t0 = time.perf_counter()
    scrub = scrubber(services.redactor)
    message = state.message
    clean = Message(bounded(message.text, MESSAGE_CHARS, scrub),
                    tuple(Turn(t.role, bounded(t.text, TURN_CHARS, scrub)) for t in message.conversation),
                    message.session)
    redacted = _placeholders(clean) > _placeholders(message)  # a cut alone changes the text too
    cut = f"read the head and tail of {len(message.text)} characters" if len(message.text) > MESSAGE_CHARS else ""
    return evolve(state, message=clean).log("redact", "redacted" if redacted else "clean", t0, why=cut)


def _placeholders(message: Message) -> int:
    return sum(text.count("[REDACTED:") for text in (message.text, *(t.text for t in message.conversation)))


def classify(services: Services, state: Sift) -> Sift:
    """The message's kind; the five quiet kinds end the path with nothing.

    Whether to search is decided on the summed probability of the six
    searching kinds (``search_threshold``), then the kind is the likeliest of
    the chosen side: a message torn between two searching kinds still searches.
    """
    t0 = time.perf_counter()
    answer = ask(services, state, "classify", t0, {"kind": Choice("kind", "What kind of message is this?",
                                                                  KIND_OPTIONS)})["kind"]
    p_search, searches, kind = _side(answer, Kind, lambda k: k.searches, services.config.search_threshold)
    state = evolve(state, kind=kind).log("classify", kind.value, t0, p_search,
                                         why=f"p(search)={p_search:.2f}")
    return state if searches else state.end("classify", f"{kind.value} needs no memory")


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


def notes(services: Services, state: Sift) -> Sift:
    """Each note judged alone against the message; a note that is clearly the answer ends the search.

    Notes that pass ``answers_threshold`` are kept. The store is not searched
    when the best of them passes ``settled_threshold`` AND leads the next note
    by ``settled_margin``: two notes judged alike mean the judge cannot tell
    which one answers, and the passages found next compete with them.
    """
    t0 = time.perf_counter()
    config = services.config  # thousands of notes: only the likeliest are judged
    items = services.notebook.candidates(search_query(state.message), limit=config.narrowed_notes,
                                         above=config.narrow_notes_above)
    judged = _judged(services, state, "notes", t0, items)
    chosen = _passing(config, state.kind, judged)
    if not chosen:
        return state.log("notes", "none answers", t0, why=f"{len(items)} notes judged")
    lead = chosen[0].score - (judged[1].score if len(judged) > 1 else 0.0)
    settled = chosen[0].score >= config.settled_threshold and lead >= config.settled_margin
    return evolve(state, chosen=chosen, answered=settled).log(
        "notes", f"{len(chosen)} answer" + (", settled" if settled else ""), t0, chosen[0].score,
        why=f"{len(items)} notes judged, lead {lead:.2f}")


def gate(services: Services, state: Sift) -> Sift:
    """Is the subject one memory keeps (a choice, a constraint, a problem)? No: nothing."""
    if state.answered:
        return state
    t0 = time.perf_counter()
    answer = ask(services, state, "gate", t0, {"worth": Noul("worth", WORTH)})["worth"]
    assert isinstance(answer, NoulAnswer)
    threshold = services.config.worth_threshold
    state = state.log("gate", "worth memory" if answer.noul >= threshold else "not worth memory", t0,
                      answer.noul)
    return state if answer.noul >= threshold else _no_search(state, "gate", "subject not worth memory")


def _no_search(state: Sift, stage: str, why: str) -> Sift:
    """The store will not be searched: go on with the notes found, or end with nothing."""
    return evolve(state, answered=True) if state.chosen else state.end(stage, why)


def search(services: Services, state: Sift) -> Sift:
    """The long-term store's closest passages, under a hard deadline."""
    if state.answered:
        return state
    t0 = time.perf_counter()
    store = services.store
    if store is None:
        return _no_search(state.log("search", "no store", t0), "search", "no store configured")
    limit = services.config.search_limit
    found = call_service(services, state, "search", store, services.config.store_deadline, t0,
                         store.search, search_query(state.message), limit=limit,
                         timeout=services.config.store_deadline)
    state = evolve(state, candidates=tuple(found)).log("search", f"{len(found)} passages", t0)
    return state if found else _no_search(state, "search", "the store has nothing close")


def search_query(message: Message) -> str:
    """The message; a terse one ('ok, parcel number first') borrows the last answer's words."""
    if len(content_words(message.text)) >= 4 or not message.conversation:
        return message.text
    return f"{message.text}\n{message.conversation[-1].text}"


def take_all(services: Services, state: Sift) -> Sift:
    """Every passage found is added: the behaviour of Cognee's official plugin, kept as a baseline."""
    t0 = time.perf_counter()
    return evolve(state, chosen=state.candidates).log("take all", f"{len(state.candidates)} passages", t0)


def judge(services: Services, state: Sift) -> Sift:
    """Each passage judged alone against the message; those that answer it join the notes found."""
    if state.answered:
        return state
    t0 = time.perf_counter()
    passages = _passing(services.config, state.kind, _judged(services, state, "judge", t0, state.candidates))
    best = sorted((*state.chosen, *passages), key=lambda item: item.score, reverse=True)
    chosen = tuple(best[: services.config.max_items])
    state = evolve(state, chosen=chosen).log(
        "judge", f"{len(passages)} of {len(state.candidates)} answer", t0,
        passages[0].score if passages else None)
    return state if chosen else state.end("judge", "no passage answers the message")


def _judged(services: Services, state: Sift, stage: str, t0: float, items: Sequence[Item]) -> list[Item]:
    """Every item with the judged probability that it answers the message as its score, best first;
    of two judged alike the later one, which is the newer note."""
    if not items:
        return []
    scrub = scrubber(services.redactor)  # a note may hold a pasted secret too
    questions = {
        str(i): Noul("answers", {"question": ANSWERS, "item": bounded(item.text, NOTE_CHARS, scrub),
                                 "origin": item.origin})
        for i, item in enumerate(items)
    }
    answers = ask(services, state, stage, t0, questions)
    order = sorted(range(len(items)), key=lambda i: (_probability(answers[str(i)]), i), reverse=True)
    return [evolve(items[i], score=_probability(answers[str(i)])) for i in order]


def _passing(config: Config, kind: Kind | None, judged: Sequence[Item]) -> tuple[Item, ...]:
    """The judged items that pass the bar, best first, at most ``max_items``."""
    threshold = answers_threshold(config, kind)
    return tuple(item for item in judged if item.score >= threshold)[: config.max_items]


def _probability(answer: Answer) -> float:
    assert isinstance(answer, NoulAnswer)
    return answer.noul


def answers_threshold(config: Config, kind: Kind | None) -> float:
    """The bar an item must pass: lower when the message asks about memory itself."""
    return config.asked_threshold if kind is not None and kind.asks_memory else config.answers_threshold


def dedupe(services: Services, state: Sift) -> Sift:
    """Drop what the conversation or the files the agent loads already say, repeats, and what this
    session was already given (unless the message plainly asks for it again: a judged probability
    of ``repeat_threshold``)."""
    t0 = time.perf_counter()
    turns = [{stem(w) for w in content_words(turn.text)} for turn in state.message.conversation]
    log = services.session_log
    given = log.given(state.message.session) if log is not None else set()
    kept: list[Item] = []
    seen: set[str] = set()
    repeat, share = services.config.repeat_threshold, services.config.said_share
    for item in state.chosen:
        key = " ".join(item.text.split()).lower()
        # Given earlier in this session: again only when the message plainly asks for it.
        if (item.id in given and item.score < repeat) or {key, item.id} & seen or already_said(item.text, turns, share):
            continue
        seen |= {key, item.id}
        kept.append(item)
    if kept and services.loaded_files:  # read only now: something is about to be added
        from .loaded import passages

        loaded = [{stem(w) for w in content_words(text)} for text in passages(services.loaded_files)]
        kept = [item for item in kept if not already_said(item.text, loaded, share)]
    dropped = len(state.chosen) - len(kept)
    state = evolve(state, chosen=tuple(kept)).log("dedupe", f"{len(kept)} new", t0,
                                                  why=f"{dropped} already said or given")
    if not kept:
        return state.end("dedupe", "everything found was already said")
    if log is not None:
        log.record(state.message.session, (item.id for item in kept))
    return state


def already_said(text: str, turns: Sequence[set[str]], share: float) -> bool:
    """Does one turn of the conversation already hold ``share`` of this item's words?

    One turn, not the whole conversation: a long session talks around a
    subject in many words without ever stating the fact itself. A turn that
    restates an item rewords it, so a share well under 1 is enough.
    """
    words = {stem(w) for w in content_words(text)}
    return bool(words) and any(len(words & said) / len(words) >= share for said in turns)


HEADER = "Project memory from earlier sessions (may be out of date; check the code):"
ITEM_CHARS = 600  # a kept exchange can be long; what is added stays a few lines


def render(services: Services, state: Sift) -> Sift:
    """A few lines, each with a pointer to where it came from."""
    t0 = time.perf_counter()
    if not state.chosen:
        return state.log("render", "nothing", t0).end("render", "nothing to add")
    lines = [HEADER] + [f"- {_shortened(one_line(item.text))} [{item.source}]" for item in state.chosen]
    text = "\n".join(lines)
    return evolve(state, text=text).log("render", f"{len(state.chosen)} items", t0).end(
        "render", f"added {len(state.chosen)} items")


def _shortened(text: str) -> str:
    return text if len(text) <= ITEM_CHARS else text[: ITEM_CHARS - 1].rstrip() + "…"


# -- retain --------------------------------------------------------------------

def redact_exchange(services: Services, state: Keep) -> Keep:
    t0 = time.perf_counter()
    scrub = scrubber(services.redactor)
    clean = Exchange(bounded(state.exchange.user, EXCHANGE_CHARS, scrub),
                     bounded(state.exchange.assistant, EXCHANGE_CHARS, scrub), state.exchange.session)
    return evolve(state, exchange=clean).log(
        "redact", "redacted" if clean != state.exchange else "clean", t0)


def keep(services: Services, state: Keep) -> Keep:
    """Would keeping this save redoing the same search or reasoning? (choice, constraint, incident)"""
    t0 = time.perf_counter()
    answer = ask(services, state, "keep", t0, {"keep": Choice("keep", "Does this exchange deserve memory?",
                                                              KEEP_OPTIONS)})["keep"]
    p_keep, kept, category = _side(answer, Category, lambda c: c.kept, services.config.keep_threshold)
    state = evolve(state, keep=kept, category=category).log("keep", category.value, t0, p_keep)
    return state if kept else state.end("keep", f"dropped as {category.value}")


def distill(services: Services, state: Keep) -> Keep:
    """The kept exchange as one short line: the decider judges each clause alone (does it state the
    fact?), code assembles the best ones with the category, the day and a pointer to the exchange."""
    from . import distill as distilling  # retain only: its patterns cost a quiet message nothing

    t0 = time.perf_counter()
    assert state.category is not None
    exchange = state.exchange
    # (origin, position in its own turn, clause): the answer's first clause is its first, however long
    # the user's message was.
    said = [(origin, position, clause) for origin, text in (("user", exchange.user), ("assistant", exchange.assistant))
            for position, clause in enumerate(distilling.clauses(text))][:MAX_CLAUSES]
    if not said:
        return state.log("distill", "nothing to keep", t0).end("distill", "no clause states a fact")
    questions = {
        str(i): Noul("fact", {"question": distilling.FACT, "item": clause, "origin": origin, "position": position})
        for i, (origin, position, clause) in enumerate(said)
    }
    answers = ask(services, state, "distill", t0, questions)
    scored = [(_probability(answers[str(i)]), i, clause) for i, (_, _, clause) in enumerate(said)]
    facts = distilling.pick(scored, services.config.fact_threshold)
    line = distilling.note_line(facts, state.category.value, time.strftime("%Y-%m-%d"), exchange_id(exchange))
    return evolve(state, line=line).log("distill", f"{len(facts)} of {len(said)} clauses", t0,
                                            max(p for p, _, _ in scored))


MAX_CLAUSES = 40  # a long answer's tail is rarely its fact; the questions stay few


NOVEL_OPTIONS: dict[str, str | None] = {
    "restates": "the new line says what this note already says",
    "updates": "the new line changes this note's fact on the same subject: a newer figure, choice or fix",
    "differs": "the new line is about something else",
}
NOVEL_CANDIDATES = 5  # the notes closest in words are the only ones a new line could repeat


def novel(services: Services, state: Keep) -> Keep:
    """Keep only what is new: a line the notes already hold is not kept; one that updates an older
    note supersedes it (a named edit: every other line stays as it is)."""
    t0 = time.perf_counter()
    line = state.line
    config = services.config
    # The notes a new line could repeat share its words: narrowed as recall narrows them.
    nearby = services.notebook.candidates(line, limit=config.narrowed_notes, above=config.narrow_notes_above)
    notes = _closest_notes(nearby, line)
    if not notes:
        return state.log("novel", "new", t0, why="no note on the subject")
    questions = {
        str(number): Choice("novel", {"question": "How does the new line relate to this note?", "item": text,
                                      "new": line}, NOVEL_OPTIONS)
        for number, text in notes
    }
    answers = ask(services, state, "novel", t0, questions)
    verdicts = {number: answers[str(number)] for number, _ in notes}
    restated = [n for n, a in verdicts.items() if _chose(a, "restates", config.novel_threshold)]
    if restated:
        return evolve(state, keep=False).log("novel", "restates", t0, why=f"line {restated[0]}").end(
            "novel", f"the notes already say it (line {restated[0]})")
    updated = [n for n, a in verdicts.items() if _chose(a, "updates", config.novel_threshold)]
    text = dict(notes)
    edits = tuple(Edit(n, "remove", old=text[n]) for n in updated)
    return evolve(state, edits=edits).log("novel", f"supersedes {len(updated)}" if updated else "new", t0)


def _chose(answer: Answer, option: str, threshold: float) -> bool:
    assert isinstance(answer, ChoiceAnswer)
    return answer.choice == option and answer.probabilities[option] >= threshold


def _closest_notes(notes: Sequence[Item], line: str) -> list[tuple[int, str]]:
    """The notes that share the most of the new line's words: (line number, text), best first."""
    new = {stem(w) for w in content_words(line)}
    if not new:
        return []
    shared = []
    for note in notes:
        old = {stem(w) for w in content_words(note.text)}
        overlap = len(old & new) / (min(len(old), len(new)) or 1)
        if overlap >= NOVEL_OVERLAP:
            shared.append((overlap, line_number(note), note.text))
    shared.sort(key=lambda s: (-s[0], s[1]))
    return [(number, text) for _, number, text in shared[:NOVEL_CANDIDATES]]


def line_number(note: Item) -> int:
    """A note's line in its file, from its pointer (``notes.md:12``)."""
    return int(note.source.rsplit(":", 1)[1])


NOVEL_OVERLAP = 0.3  # below this share of words two lines are not on the same subject


def append_notes(services: Services, state: Keep) -> Keep:
    """The note line goes in, after the store's item is queued: a crash between the two then
    leaves an item to send, never a note the store will not hear of."""
    t0 = time.perf_counter()
    why = ""
    if services.outbox is not None and services.store is not None:
        try:
            services.outbox.put([passage(state)])
        except Exception as exc:  # the outbox busy or broken: the note goes in all the same; sync queues again
            why = f"not queued first: {type(exc).__name__}: {exc}"
    services.notebook.append([state.line])
    return evolve(state, lines=(state.line,)).log("notes", "appended", t0, why=why)


def revise(services: Services, state: Keep) -> Keep:
    """The reviser names lines to replace or remove; code applies them, the rest stays as it is.

    The edits recorded are those applied: one whose line changed meanwhile (another
    retain got there first) is dropped, never applied to a neighbour.
    """
    t0 = time.perf_counter()
    lines = services.notebook.lines()
    edits = [*state.edits, *services.reviser.revise(lines, state.lines)]  # novel's supersedings first
    applied = services.notebook.apply(edits) if edits else []
    return evolve(state, edits=tuple(applied)).log("revise", f"{len(applied)} edits", t0,
                                                   why=f"{len(edits) - len(applied)} stale dropped")


def sync(services: Services, state: Keep) -> Keep:
    """Send the kept exchange to the store, whole, through the outbox: what cannot go now goes later."""
    t0 = time.perf_counter()
    store = services.store
    if store is None:
        return state.log("sync", "no store", t0)
    item = passage(state)
    deadline = services.config.store_deadline
    if services.outbox is None:
        call_service(services, state, "sync", store, deadline, t0, store.add, [item], timeout=deadline)
        return state.log("sync", "stored", t0)
    services.outbox.put([item])
    sent = call_service(services, state, "sync", store, deadline, t0,
                        services.outbox.drain, store, timeout=deadline)
    return state.log("sync", f"{sent} sent", t0, why=f"{services.outbox.pending()} pending")


def passage(state: Keep) -> Item:
    """The store's item for a kept exchange: the whole of it, redacted."""
    text = f"{state.exchange.user}\n\n{state.exchange.assistant}"
    return Item(exchange_id(state.exchange), text, "passage", f"memsift:{state.category}")


def catch_up(services: Services, state: Keep) -> Keep:
    """Send what earlier retains queued and could not send (the store was away, its file damaged),
    whether or not this exchange is kept. A store still away leaves them queued; the path goes on."""
    from .flush import flush  # it calls services as stages do: imported here, not in a cycle

    t0 = time.perf_counter()
    try:
        if services.outbox is None or services.store is None or not services.outbox.pending():
            return state
        done = flush(services, state.exchange.session).removeprefix("flush: ")
    except Exception as exc:  # the outbox busy or broken: this exchange is still kept, the next one retries
        return state.log("catch_up", "failed", t0, why=f"{type(exc).__name__}: {exc}")
    return state.log("catch_up", done, t0)


# -- budgets -------------------------------------------------------------------

LOCAL_WORK = 1.0  # seconds a recall stage may spend on its own work (redacting, reading notes), past its services'
# Retain runs detached, and what it keeps must not be dropped for being slow: its stages wait their
# turn at the notes' lock while other hooks write. Bounded all the same, should a holder hang.
RETAIN_WORK = 30.0
# The services each built-in stage calls, whose deadlines its budget adds; a stage not named here
# (one of the user's) may call either.
CALLS: dict[Stage, tuple[str, ...]] = {
    redact: (), classify: ("decider",), notes: ("decider",), gate: ("decider",), search: ("store",),
    take_all: (), judge: ("decider",), dedupe: (), render: (), catch_up: ("store",), redact_exchange: (),
    keep: ("decider",), distill: ("decider",), novel: ("decider",), append_notes: (), revise: (),
    sync: ("store",),
}


def budget(stage: Stage, config: Config, state: _Path) -> float:
    """Seconds the runner gives ``stage``: its own work, and the deadline of each service it calls."""
    deadlines = {"decider": config.decider_deadline, "store": config.store_deadline}
    try:
        calls = CALLS.get(stage, ("decider", "store"))
    except TypeError:  # a stage that cannot be a key: one of the user's
        calls = ("decider", "store")
    own = RETAIN_WORK if isinstance(state, Keep) else LOCAL_WORK
    return own + sum(deadlines[name] for name in calls)


RECALL_STAGES: tuple[Stage, ...] = (redact, classify, notes, gate, search, judge, dedupe, render)
EVERY_MESSAGE_STAGES: tuple[Stage, ...] = (redact, search, take_all, render)
RETAIN_STAGES: tuple[Stage, ...] = (catch_up, redact_exchange, keep, distill, novel, append_notes, revise, sync)
