"""The retain path's stages, when an exchange ends, and the questions they ask."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence

from attrs import evolve

from .._runtime.bounds import EXCHANGE_CHARS, NOTE_CHARS, bounded
from .._notes.lines import fact_of, tail_of
from .._words.text import overlap, stems
from ..notes import exchange_id
from ..services import Services
from ..types import Answer, Category, Choice, ChoiceAnswer, Edit, Exchange, Item, Noul
from .path import EndPath, Keep, Stage, _yes, _side, ask, call_service, scrubber

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


def redact_exchange(services: Services, state: Keep) -> Keep:
    t0 = time.perf_counter()
    scrub = scrubber(services.redactor)
    clean = Exchange(bounded(state.exchange.user, EXCHANGE_CHARS, scrub),
                     bounded(state.exchange.assistant, EXCHANGE_CHARS, scrub), state.exchange.session)
    return evolve(state, exchange=clean).log(
        "redact", "redacted" if clean != state.exchange else "clean", t0)


def screen_exchange(services: Services, state: Keep) -> Keep:
    """An exchange whose text gives the agent orders (a role marker, an override of its instructions,
    a download piped into a shell aimed at it) is not kept: memory is quoted data, never instructions.
    It ends here, before any decider reads it; the reason is in the trace, the text is not."""
    from .._words.orders import reads_as_orders  # retain only: its patterns cost a quiet message nothing

    t0 = time.perf_counter()
    for side, text in (("user message", state.exchange.user), ("answer", state.exchange.assistant)):
        reason = reads_as_orders(text)
        if reason is not None:
            why = f"the {side} reads as orders to the agent: {reason}"
            return state.log("screen", "orders", t0, why=why).end("screen", f"not kept: {why}")
    return state


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
    from . import _distill as distilling  # retain only: its patterns cost a quiet message nothing

    t0 = time.perf_counter()
    assert state.category is not None
    exchange = state.exchange
    said = candidate_clauses(exchange)
    if not said:
        return state.log("distill", "nothing to keep", t0).end("distill", "no clause states a fact")
    questions = {
        str(i): Noul("fact", {"question": distilling.FACT, "item": clause, "origin": origin, "position": position})
        for i, (origin, position, clause) in enumerate(said)
    }
    answers = ask(services, state, "distill", t0, questions)
    scored = [(_yes(answers[str(i)]), i, clause) for i, (_, _, clause) in enumerate(said)]
    facts = distilling.pick(scored, services.config.fact_threshold, state.category.value)
    line = distilling.note_line(facts, state.category.value, time.strftime("%Y-%m-%d"), exchange_id(exchange),
                                (exchange.user, exchange.assistant))
    return evolve(state, line=line).log("distill", f"{len(facts)} of {len(said)} clauses", t0,
                                            max(p for p, _, _ in scored))


def candidate_clauses(exchange: Exchange) -> list[tuple[str, int, str]]:
    """(origin, position in its own turn, clause) of every clause that could state the exchange's
    fact: the answer's first clause is its first, however long the user's message was; a user's
    question is never the fact, only what they state is a candidate."""
    from . import _distill as distilling

    return [(origin, position, clause) for origin, text in (("user", exchange.user), ("assistant", exchange.assistant))
            for position, clause in enumerate(distilling.clauses(text, questions=origin == "assistant"))][:MAX_CLAUSES]


MAX_CLAUSES = 40  # a long answer's tail is rarely its fact; the questions stay few


NOVEL_OPTIONS: dict[str, str | None] = {
    "restates": "the new line says what this note already says",
    "updates": "the new line changes this note's fact on the same subject: a newer figure, choice or fix",
    "differs": "the new line is about something else",
}
NOVEL_CANDIDATES = 5  # the notes closest in words are the only ones a new line could repeat


def novel(services: Services, state: Keep) -> Keep:
    """Keep only what is new: a line the notes already hold is not kept again (the fuller wording of
    the two stays, dated today); neither is an exchange that applies what a note already says (its
    answer repeats that fact's words); a line that updates an older note supersedes it (a named
    edit: every other line stays as it is)."""
    t0 = time.perf_counter()
    line = state.line
    config = services.config
    answer = state.exchange.assistant
    # The notes a new line could repeat share its words or its answer's: narrowed as recall narrows them.
    nearby = services.notebook.candidates(f"{line}\n{answer}", limit=config.narrowed_notes,
                                          above=config.narrow_notes_above)
    log, session = services.session_log, state.exchange.session
    given = log.given(session) if log is not None and session else set()  # by recall or by the brief
    reminded = _given(services, given, line, nearby, answer)
    if reminded:  # the answer repeats what memory gave this session (the reminder it just read)
        return evolve(state, keep=False).log("novel", "restates", t0, why=reminded.source).end(
            "novel", f"memory gave it this session ({reminded.source})")
    notes = _closest_notes(nearby, line)
    known = _known(services, nearby, answer, given)
    if known is not None and all(number != line_number(known) for number, _ in notes):
        notes.append((line_number(known), known.text))
    if not notes:
        return state.log("novel", "new", t0, why="no note on the subject")
    questions = {
        str(number): Choice("novel", {"question": "How does the new line relate to this note?", "item": text,
                                      "new": line}, NOVEL_OPTIONS)
        for number, text in notes
    }
    answers = ask(services, state, "novel", t0, questions)
    verdicts = {number: answers[str(number)] for number, _ in notes}
    text = dict(notes)
    updated = [n for n, a in verdicts.items() if _chose(a, "updates", config.novel_threshold)]
    restated = [n for n, a in verdicts.items() if _chose(a, "restates", config.novel_threshold) and n not in updated]
    if restated:
        return _said_again(services, state, restated[0], text[restated[0]], t0, "restates")
    if known is not None and line_number(known) not in updated:
        return _said_again(services, state, line_number(known), known.text, t0, "applies")
    edits = tuple(Edit(n, "remove", old=text[n]) for n in updated)
    return evolve(state, edits=edits).log("novel", f"supersedes {len(updated)}" if updated else "new", t0)


def _known(services: Services, notes: Sequence[Item], answer: str, given: set[str]) -> Item | None:
    """The note whose fact and keys already hold ``known_share`` of the answer's words (weighted by
    their rarity in the notes), ``KNOWN_WORDS`` of them at least; or, of the notes this session was
    given (by its brief or by recall: what the agent just read), one that holds ``applied_share``
    of them: the exchange applies what that note says. (A short answer sharing two rare words with
    a note says too little to tell.)"""
    if not notes:
        return None
    from ._rank import holding

    read_keys = getattr(services.notebook, "keys", None)
    keys = read_keys() if read_keys is not None else {}
    if _says_more(answer, notes, keys):
        return None
    held = holding(answer, notes, keys)
    config = services.config
    for share, shared, note in held:
        if share < config.applied_share:
            break  # best first: none further holds enough
        tail = tail_of(note.text)
        if (note.id in given or (tail is not None and tail[2] in given)) and shared >= GIVEN_WORDS:
            return note
    if not held:
        return None
    share, shared, best = held[0]
    return best if share >= config.known_share and shared >= KNOWN_WORDS else None


KNOWN_WORDS, GIVEN_WORDS = 6, 3
NEW_SPECIFICS = 3  # named things and figures an answer may bring that no note holds, and still only apply one


def _says_more(answer: str, notes: Sequence[Item], keys: Mapping[str, str]) -> bool:
    """Does the answer name things or figures no note (nor its keys) holds, more than one? Then it
    says something new, whatever it repeats: an update, or a fact beside an older one."""
    from ..decider._features import specifics
    from ._rank import keyed

    named = specifics(answer)
    if len(named) <= NEW_SPECIFICS:
        return False
    held: set[str] = set()
    for note in notes:
        held |= specifics(keyed(note, keys))
    return len(named - held) > NEW_SPECIFICS


def _said_again(services: Services, state: Keep, number: int, old: str, t0: float, how: str) -> Keep:
    """The same fact again: the new line replaces the old when it says more (every named thing and
    figure of the old, and others); else the old line stays, moved last and dated today."""
    from ..decider._features import specifics

    new, before = specifics(fact_of(state.line)), specifics(fact_of(old))
    if new > before:
        return evolve(state, edits=(Edit(number, "remove", old=old),)).log(
            "novel", f"{how}, reworded", t0, why=f"line {number}: the new wording says more")
    why = "the notes already say it" if how == "restates" else "the answer applies what the notes say"
    state = evolve(state, keep=False).log("novel", how, t0, why=f"line {number}")
    tail = tail_of(old)
    if tail is None:  # a line a person wrote stays as it was written, where it was
        return state.end("novel", f"{why} (line {number})")
    refreshed = f"{fact_of(old)} ({tail[0]} {time.strftime('%Y-%m-%d')} {tail[2]})"
    services.notebook.append([refreshed])  # first: a crash between the two leaves a twin, never a loss
    # The same line already dated today was only moved last; an older one is removed where it was.
    edits = services.notebook.apply([Edit(number, "remove", old=old)]) if refreshed != old else []
    return evolve(state, lines=(refreshed,), edits=tuple(edits)).end(
        "novel", f"{why} (line {number}): moved last, dated today")


def _given(services: Services, given: set[str], line: str, notes: Sequence[Item], answer: str = "") -> Item | None:
    """The note this session was given (recall's reminders and its brief, in the session log; a
    stored fact by its pointer) that already holds the new line's words at ``said_share``, or whose
    words the answer holds at that share: an answer that restates or applies what memory just
    reminded it of adds nothing. ``given``: what this session was given."""
    if not given:
        return None
    from .recall import already_said  # the measure dedupe uses for a turn that restates an item

    pointers = tuple(f" {item_id})" for item_id in given if item_id.startswith("ex-"))
    share = services.config.said_share
    applied = [stems(answer)] if answer else []
    for note in notes:
        reminder = note.id in given or bool(pointers and note.text.endswith(pointers))
        if not reminder:
            continue
        fact = fact_of(note.text)
        if already_said(fact_of(line), [stems(fact)], share) or already_said(fact, applied, share):
            return note
    return None


def _chose(answer: Answer, option: str, threshold: float) -> bool:
    assert isinstance(answer, ChoiceAnswer)
    return answer.choice == option and answer.probabilities[option] >= threshold


def _closest_notes(notes: Sequence[Item], line: str) -> list[tuple[int, str]]:
    """The notes that share the most of the new line's words: (line number, text), best first."""
    new = stems(fact_of(line))  # the tails' tag words and dates say nothing
    if not new:
        return []
    shared = []
    for note in notes:
        shares = overlap(stems(fact_of(note.text)), new)
        if shares >= NOVEL_OVERLAP:
            shared.append((shares, line_number(note), note.text))
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
    add_keys = getattr(services.notebook, "add_keys", None)  # a notebook of one's own may keep no keys
    if add_keys is not None:
        from ._rank import keys_for

        add_keys({exchange_id(state.exchange): keys_for(state.line, state.exchange.user, state.exchange.assistant)})
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
    """Send the kept exchange's fact line and the exchange it came from to the store, through the
    outbox: what cannot go now goes later."""
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
    """The store's item for a kept exchange: its fact line, judged and shown as a note is, and the
    whole exchange, redacted, as its source (``memsift show ex-…`` prints it)."""
    whole = f"{state.exchange.user}\n\n{state.exchange.assistant}"
    return Item(exchange_id(state.exchange), state.line, "passage", f"memsift:{state.category}", exchange=whole)


def catch_up(services: Services, state: Keep) -> Keep:
    """Send what earlier retains queued and could not send (the store was away, its file damaged),
    whether or not this exchange is kept. A store still away leaves them queued; the path goes on."""
    t0 = time.perf_counter()
    try:
        if services.outbox is None or services.store is None or not services.outbox.pending():
            return state
        done = flush(services, state.exchange.session).removeprefix("flush: ")
    except Exception as exc:  # the outbox busy or broken: this exchange is still kept, the next one retries
        return state.log("catch_up", "failed", t0, why=f"{type(exc).__name__}: {exc}")
    return state.log("catch_up", done, t0)


def flush(services: Services, session: str = "") -> str:
    """Drain the outbox to the store within the store's deadline, minding its breaker: at the end
    of an agent's session, what the outbox holds goes to the store.

    >>> flush(services, "s1")
    'flush: 3 sent, 0 pending'

    Returns what happened, in the words of a trace; nothing queued is lost
    when the store is down (the next drain sends it).
    """
    outbox, store = services.outbox, services.store
    if outbox is None or store is None:
        return "flush: no outbox"
    t0 = time.perf_counter()
    deadline = services.config.store_deadline
    state = Keep(exchange=Exchange("", "", session))  # call_service ends a path: this one is empty
    try:
        sent = call_service(services, state, "flush", store, deadline, t0, outbox.drain, store,
                            timeout=deadline)
    except EndPath as end:
        return end.state.stopped_by
    return f"flush: {sent} sent, {outbox.pending()} pending"


def embed_kept(services: Services, state: Keep) -> Keep:
    """The vectors of what was just written, computed now, off the agent's path, of each fact as
    recall's semantic judge embeds it (bounded, redacted, without its tail; the store's item holds
    the same line) and as recall ranks it (with its keys): the embedder caches them
    (``vectors.sqlite``), so a searching message embeds only itself. Last, and silent: a slow or
    failing model never holds up or undoes what was kept, and a vector missing is computed when
    first needed."""
    if services.embedder is None or not state.lines:
        return state
    from ..semantic.judge import embedded_text

    from ._rank import keyed, keys_for

    scrub = scrubber(services.redactor)
    exchange = state.exchange
    facts = [bounded(fact_of(line), NOTE_CHARS, scrub) for line in state.lines]
    # As recall ranks them too: each fact and the keys of its exchange.
    ranked_by = [keyed(Item("", line, "note", ""), {exchange_id(exchange): keys_for(line, exchange.user,
                                                                                    exchange.assistant)})
                 for line in state.lines]
    with contextlib.suppress(Exception):  # the model is an extra: whatever went wrong, what was kept stays kept
        services.embedder.embed([*(embedded_text(fact) for fact in facts), *ranked_by])
    return state


RETAIN_STAGES: tuple[Stage, ...] = (catch_up, redact_exchange, screen_exchange, keep, distill, novel, append_notes,
                                    revise, sync, embed_kept)
