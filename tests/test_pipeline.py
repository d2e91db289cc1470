"""The two paths end to end: memsift/pipeline.py.

Real embedded parts throughout; slow or broken doubles only to make a
service miss its deadline or fail, which the real ones do not do here.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import pytest
from attrs import evolve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from examples import INCIDENT as EXAMPLE_INCIDENT
from memsift.config import load_config
from memsift.errors import ConfigurationError, ServerError, ServiceUnavailable
from memsift.notes import NotesFile
from memsift.pipeline import recall, retain
from memsift.redact import PatternRedactor
from memsift.revise import DuplicateReviser
from memsift.services import Services, SessionLog
from memsift.stages import (
    EVERY_MESSAGE_STAGES, HEADER, Keep, classify, distill, notes, redact, redact_exchange, render,
)
from memsift.stages.recall import quoted
from memsift.stores.sqlite import SQLiteStore
from memsift.types import Category, Decider, Exchange, Item, Kind, Message, Recall, Store, Turn

GITHUB_TOKEN = "ghp_Q7vX2mL9kR4tW8zN1pC6yB3fH5jD0sAeUgIo"
CADDY = "Reverse proxy: Caddy over nginx because it renews TLS certificates on its own and the config is ten lines."
HTMX = "Frontend: the admin dashboard uses htmx, not React, so no build step is needed."
CELERY_FIX = Item("a1", "Celery workers hung after a broker connection reset; the fix was "
                        "broker_connection_retry_on_startup=True and a heartbeat of 30 seconds.",
                  "passage", "archive")
CELERY_BEAT = Item("a2", "Celery beat schedules the nightly invoice email at 02:00 UTC.", "passage", "archive")
INCIDENT = evolve(EXAMPLE_INCIDENT, session="s1")


def stages_of(result: Recall) -> list[str]:
    return [step.stage for step in result.trace]


@pytest.fixture
def project(services):
    """The services with a few notes and archive passages in place."""
    services.notebook.append([HTMX, CADDY])
    services.store.add([CELERY_FIX, CELERY_BEAT], timeout=1)
    return services


class RecordingDecider:
    """Passes every question to the real decider and keeps the states it was shown."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.states = inner, inner.name, []

    def decide(self, state, questions):
        self.states.append(repr(dict(state)) + repr(dict(questions)))
        return self.inner.decide(state, questions)


# -- recall end to end ---------------------------------------------------------------

def test_recall_a_reaction_adds_nothing_and_stops_at_classify(project):
    result = recall(Message("thanks, that works perfectly!"), project)

    assert result.text == "" and result.items == ()
    assert result.kind is Kind.REACTION
    assert result.stopped_by == "classify: reaction needs no memory"
    assert stages_of(result) == ["redact", "classify"]


def test_recall_a_note_that_answers_ends_the_search(project):
    result = recall(Message("why did we pick Caddy instead of nginx for the reverse proxy?"), project)

    assert result.text == f"{HEADER}\n- {quoted(CADDY)} [notes.md:2]"
    assert [item.text for item in result.items] == [CADDY]
    assert stages_of(result) == ["redact", "classify", "notes", "dedupe", "render"]
    assert result.stopped_by == "render: added 1 items"


def test_recall_answers_from_40000_notes_judging_only_the_closest_50(services):
    """Every note was judged once: near 40,000 the judge ran past the decider's 2 s deadline and
    memory went quiet. Narrowed, at most as many notes are judged at 40,000 as at 300."""
    words = "ledger invoice webhook shard replica cursor tenant quota bucket kernel socket proxy".split()
    filler = [f"decision: the {words[n % 12]} worker{n} uses batch {n % 97} for the {words[n % 7]} export"
              for n in range(40_000)]
    services.notebook.append([*filler[:25_000], CADDY, *filler[25_000:]])

    result = recall(Message("why did we pick Caddy instead of nginx for the reverse proxy?"), services)

    assert [item.text for item in result.items] == [CADDY]
    assert result.items[0].source == "notes.md:25001"
    notes_step = next(step for step in result.trace if step.stage == "notes")
    judged, ranked = map(int, re.match(r"the (\d+) ranked first of (\d+) notes judged", notes_step.why).groups())
    # The rare words' matches, at most the narrowed few, ranked; the first few of them judged.
    assert 1 <= ranked <= services.config.narrowed_notes, notes_step.why
    assert 1 <= judged <= services.config.judged_notes, notes_step.why


def test_recall_a_passage_from_the_store_goes_through_gate_search_and_judge(project):
    result = recall(Message("the celery workers are stuck again after the broker connection reset"), project)

    assert [item.id for item in result.items] == ["a1"]
    assert result.text.splitlines()[1:] == [f"- {quoted(CELERY_FIX.text)} [archive]"]
    assert stages_of(result) == ["redact", "classify", "notes", "gate", "search", "judge", "dedupe", "render"]
    assert result.kind is Kind.RECURRING_PROBLEM


def test_recall_every_step_is_in_the_trace_with_its_time(project):
    result = recall(Message("why did we pick Caddy instead of nginx for the reverse proxy?"), project)

    assert all(step.elapsed >= 0.0 for step in result.trace)
    assert result.trace[1].verdict == "past_choice"


def test_recall_a_secret_never_reaches_the_decider(project):
    recorder = RecordingDecider(project.decider)
    message = Message(f"the celery workers crash again, the broker token is {GITHUB_TOKEN}",
                      (), "s1")

    recall(message, evolve(project, decider=recorder))

    assert recorder.states and not any(GITHUB_TOKEN in seen for seen in recorder.states)


class RecordingStore:
    """Passes every search to the real store and keeps the queries it was sent."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.queries = inner, inner.name, []

    def search(self, query, *, limit, timeout):
        self.queries.append(query)
        return self.inner.search(query, limit=limit, timeout=timeout)

    def add(self, items, *, timeout):
        self.inner.add(items, timeout=timeout)


def test_recall_a_secret_never_reaches_the_store(project):
    recorder = RecordingStore(project.store)
    conversation = (Turn("user", "which token does the broker use?"),
                    Turn("assistant", f"The broker authenticates with {GITHUB_TOKEN}."))
    message = Message("ok", conversation, "s1")  # a terse message: the search borrows the last answer

    recall(message, evolve(project, store=recorder), stages=EVERY_MESSAGE_STAGES)
    recall(Message(f"celery hangs again, token {GITHUB_TOKEN}", (), "s1"), evolve(project, store=recorder),
           stages=EVERY_MESSAGE_STAGES)

    assert len(recorder.queries) == 2 and not any(GITHUB_TOKEN in query for query in recorder.queries)


# -- retain end to end ---------------------------------------------------------------

def test_retain_a_kept_exchange_appends_one_line_and_reaches_the_store(services):
    services.notebook.append([HTMX])

    result = retain(INCIDENT, services)

    assert result.keep and result.category.kept
    assert result.stopped_by == "done"
    lines = services.notebook.lines()
    assert lines == [HTMX, result.lines[0]]
    # The fact, short, with its category, day and a pointer to the whole exchange in the store.
    assert "server-side cursor" in lines[1] and "nightly export" not in lines[1]
    assert re.search(rf"\({result.category.value} \d{{4}}-\d\d-\d\d (ex-[0-9a-f]{{8}})\)$", lines[1])
    pointer = lines[1].rsplit(" ", 1)[1].rstrip(")")
    # The store holds the same fact line, searched by its words, and the whole exchange as its source.
    stored = services.store.search("server-side cursor memory", limit=5, timeout=1)
    assert [(p.id, p.text, p.exchange) for p in stored] == \
        [(pointer, lines[1], f"{INCIDENT.user}\n\n{INCIDENT.assistant}")]
    assert [step.stage for step in result.trace] == ["redact", "keep", "distill", "novel", "notes", "revise",
                                                     "sync"]


def test_retain_a_reaction_appends_nothing_and_stores_nothing(services):
    services.notebook.append([HTMX])
    before = services.notebook.path.read_bytes()

    result = retain(Exchange("thanks!", "You're welcome!"), services)

    assert not result.keep and result.lines == ()
    assert result.stopped_by == "keep: dropped as reaction"
    assert services.notebook.path.read_bytes() == before
    assert services.store.search("thanks welcome", limit=5, timeout=1) == []


def test_retain_a_secret_never_reaches_the_notes_or_the_store(services):
    exchange = evolve(INCIDENT, assistant=INCIDENT.assistant + f" The CI now uses {GITHUB_TOKEN}.")

    result = retain(exchange, services)

    assert result.keep
    assert GITHUB_TOKEN not in services.notebook.path.read_text(encoding="utf-8")
    found = services.store.search("nightly export memory", limit=5, timeout=1)
    assert found and all(GITHUB_TOKEN not in p.text for p in found)


# -- fail open -----------------------------------------------------------------------

def boom(services, state):
    raise RuntimeError("kaput")


def test_a_stage_that_raises_ends_the_path_with_nothing_and_the_error_in_the_trace(project):
    result = recall(Message("why did we pick Caddy?"), project, stages=[redact, classify, notes, boom, render])

    assert result.text == "" and result.items == ()
    assert result.stopped_by == "boom: failed: RuntimeError"
    assert result.trace[-1].stage == "boom" and result.trace[-1].verdict == "error"
    assert result.trace[-1].why == f"RuntimeError: kaput (test_pipeline.py:{boom.__code__.co_firstlineno + 1} in boom)"
    assert result.notice == "memory off for this call: the boom stage: RuntimeError: kaput"  # no session to tell


def test_a_notes_file_that_cannot_be_read_fails_open(project):
    project.notebook.path.unlink()
    project.notebook.path.mkdir()  # reading a folder raises, as a broken disk would

    result = recall(Message("why did we pick Caddy instead of nginx for the reverse proxy?"), project)

    assert result.text == ""
    assert result.stopped_by == "notes: failed: NotRegularFile"


def test_retain_fails_open_when_the_notes_cannot_be_written(services):
    services.notebook.path.mkdir()

    result = retain(INCIDENT, services)

    assert result.lines == ()
    assert result.stopped_by == "novel: failed: NotRegularFile"  # the first stage to read the notes


class BrokenStore:
    """A Store double that fails the way it is told to."""

    name = "broken store"

    def __init__(self, error: Exception) -> None:
        self.error = error

    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]:
        raise self.error

    def add(self, items: Sequence[Item], *, timeout: float) -> None:
        raise self.error


@pytest.mark.parametrize(("error", "stopped_by"), [
    (RuntimeError("bug"), "search: failed: RuntimeError"),
    (ServiceUnavailable("503"), "search: broken store unavailable"),
    (ServerError("broken store answered 500: Internal server error", 500),
     "search: broken store failing (answered 500)"),
    (ConfigurationError("bad key"), "search: broken store refused us: bad key"),
])
def test_a_store_that_fails_ends_recall_with_nothing(project, error, stopped_by):
    services = evolve(project, store=BrokenStore(error))

    result = recall(Message("the celery workers are stuck again after the broker connection reset"), services)

    assert result.text == "" and result.items == ()
    assert result.stopped_by == stopped_by


def test_a_decider_that_raises_fails_open(project):
    class Raising:
        name = "raising decider"

        def decide(self, state, questions):
            raise ValueError("no model")

    result = recall(Message("why Caddy?"), evolve(project, decider=Raising()))

    assert result.text == "" and result.stopped_by == "classify: failed: ValueError"


# -- deadlines -----------------------------------------------------------------------

class SlowDecider:
    """Answers as the wrapped decider does, after waiting ``delay`` seconds (or until released)."""

    def __init__(self, inner, delay: float, release: threading.Event | None = None) -> None:
        self.inner, self.delay, self.release = inner, delay, release or threading.Event()
        self.name = "slow decider"
        self.calls = 0

    def decide(self, state, questions):
        self.calls += 1
        self.release.wait(self.delay)
        return self.inner.decide(state, questions)


class SlowStore:
    """A Store double over a real SQLite store whose calls take ``delay`` seconds.

    An abandoned call may wake after the test closed the store: ``close`` takes
    the same lock, so the late call finds it closed instead of racing the close
    (SQLite crashes on a connection closed under a running query).
    """

    name = "slow store"

    def __init__(self, inner: SQLiteStore, delay: float, release: threading.Event | None = None) -> None:
        self.inner, self.delay, self.release = inner, delay, release or threading.Event()
        self.calls = 0
        self.lock = threading.Lock()
        self.closed = False

    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]:
        self.calls += 1
        self.release.wait(self.delay)
        with self.lock:
            return [] if self.closed else self.inner.search(query, limit=limit, timeout=timeout)

    def add(self, items: Sequence[Item], *, timeout: float) -> None:
        self.calls += 1
        self.release.wait(self.delay)
        with self.lock:
            if not self.closed:
                self.inner.add(items, timeout=timeout)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.inner.close()


def test_the_doubles_follow_the_protocols(services):
    assert isinstance(BrokenStore(RuntimeError()), Store)
    assert isinstance(SlowStore(services.store, 0), Store)
    assert isinstance(SlowDecider(services.decider, 0), Decider)
    assert isinstance(RecordingDecider(services.decider), Decider)
    assert isinstance(Stopwatch(services.decider, [0.0]), Decider)


@pytest.fixture
def slow_store(services, release):
    """Wraps the real store in a SlowStore, closed (under its lock) before the real one is."""
    made: list[SlowStore] = []

    def make(delay: float) -> SlowStore:
        made.append(SlowStore(services.store, delay, release))
        return made[-1]

    yield make
    release.set()
    for store in made:
        store.close()


def test_a_decider_past_its_deadline_adds_nothing_without_waiting(project, release):
    services = evolve(project, decider=SlowDecider(project.decider, 30, release),
                      config=evolve(project.config, decider_deadline=0.2))

    t0 = time.perf_counter()
    result = recall(Message("why did we pick Caddy instead of nginx for the reverse proxy?"), services)
    elapsed = time.perf_counter() - t0

    assert elapsed < 0.2 + 1.0
    assert result.text == "" and result.items == ()
    assert result.stopped_by == "classify: slow decider unavailable"
    assert result.trace[-1].verdict == "unavailable" and "deadline" in result.trace[-1].why


def test_a_store_past_its_deadline_adds_nothing_without_waiting(project, slow_store):
    slow = slow_store(30)
    services = evolve(project, store=slow, config=evolve(project.config, store_deadline=0.2))

    t0 = time.perf_counter()
    result = recall(Message("the celery workers are stuck again after the broker connection reset"), services)
    elapsed = time.perf_counter() - t0

    assert elapsed < 0.2 + 1.0
    assert result.text == ""
    assert result.stopped_by == "search: slow store unavailable"
    assert result.trace[-1].stage == "search" and "deadline" in result.trace[-1].why


def test_retain_with_a_decider_past_its_deadline_keeps_nothing(services, release):
    slow = evolve(services, decider=SlowDecider(services.decider, 30, release),
                  config=evolve(services.config, decider_deadline=0.2))

    t0 = time.perf_counter()
    result = retain(INCIDENT, slow)

    assert time.perf_counter() - t0 < 0.2 + 1.0
    assert not result.keep and result.lines == ()
    assert result.stopped_by == "keep: slow decider unavailable"
    assert services.notebook.lines() == []


def test_retain_with_a_store_past_its_deadline_returns_on_time(services, slow_store):
    store = slow_store(30)
    slow = evolve(services, store=store, config=evolve(services.config, store_deadline=0.2))

    t0 = time.perf_counter()
    result = retain(INCIDENT, slow)
    elapsed = time.perf_counter() - t0

    assert elapsed < 0.2 + 1.0
    assert result.lines and services.notebook.lines() == list(result.lines)  # written before the store
    assert result.stopped_by == "sync: slow store unavailable"
    assert "deadline" in result.trace[-1].why


# -- composing a pipeline ------------------------------------------------------------

def test_a_composed_pipeline_is_a_plain_list_of_stages(project):
    result = recall(Message("why did we pick Caddy instead of nginx for the reverse proxy?"), project,
                    stages=[redact, classify, notes, render])

    assert result.text == f"{HEADER}\n- {quoted(CADDY)} [notes.md:2]"
    assert stages_of(result) == ["redact", "classify", "notes", "render"]


def no_frontend(services, state):
    """A user's own stage: a plain function over the state."""
    return evolve(state, chosen=tuple(i for i in state.chosen if "Frontend" not in i.text))


def test_a_user_stage_takes_its_place_in_the_list(project, scripted):
    services = evolve(project, decider=scripted(answers=lambda item, origin: 0.9),
                      config=evolve(project.config, max_items=2))

    result = recall(Message("what do the notes say of the frontend and the reverse proxy?"), services,
                    stages=[redact, notes, no_frontend, render])

    assert [item.text for item in result.items] == [CADDY]
    assert "htmx" not in result.text
    assert stages_of(result) == ["redact", "notes", "render"]  # the user's stage logs nothing


def test_a_user_stage_can_end_the_path(project):
    def stop_here(services, state):
        return state.end("stop_here", "enough")

    result = recall(Message("why did we pick Caddy instead of nginx for the reverse proxy?"), project,
                    stages=[redact, stop_here, classify, notes, render])

    assert result.text == "" and result.kind is None
    assert result.stopped_by == "stop_here: enough"
    assert stages_of(result) == ["redact"]


def test_a_callable_object_that_fails_is_named_in_the_trace(project):
    class Broken:
        def __call__(self, services, state):
            raise KeyError("missing")

    result = recall(Message("why Caddy?"), project, stages=[redact, Broken(), render])

    assert result.stopped_by == "Broken: failed: KeyError"


def test_a_pipeline_that_runs_out_of_stages_says_so(project):
    result = recall(Message("why Caddy?"), project, stages=[redact])

    assert result.stopped_by == "pipeline: ran out of stages" and result.text == ""


# -- properties ----------------------------------------------------------------------

WORDS = ["celery", "broker", "caddy", "proxy", "invoice", "export", "memory", "deploy", "VPS", "heap"]
sentences = st.lists(st.sampled_from(WORDS), min_size=2, max_size=6).map(" ".join)
variants = st.tuples(sentences, st.sampled_from([str, str.upper, lambda s: f"  {s} ", lambda s: s.replace(" ", "  ")]))
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def scratch() -> tempfile.TemporaryDirectory:
    """A fresh folder per generated example; in memory when the machine has /dev/shm (no fsync wait)."""
    shm = Path("/dev/shm")
    return tempfile.TemporaryDirectory(dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None)


def embedded(folder: Path, decider, **config) -> Services:
    base = load_config({"MEMSIFT_HOME": str(folder)})
    return Services(decider=decider, notebook=NotesFile(folder / "notes.md"), redactor=PatternRedactor(),
                    reviser=DuplicateReviser(), config=evolve(base, **config),
                    store=SQLiteStore(folder / "store.sqlite"), session_log=SessionLog(folder / "sessions"))


@PROPERTY
@given(
    note_lines=st.lists(variants, max_size=6),
    passages=st.lists(st.tuples(st.sampled_from(["p1", "p2", "p3", "p4"]), variants), max_size=8),
    message=sentences,
    said=st.lists(sentences, max_size=2),
    seed=st.integers(0, 2),
    max_items=st.integers(1, 6),
)
def test_a_recall_never_adds_an_item_twice(scripted, note_lines, passages, message, said, seed, max_items):
    def answers(item: str, origin: str) -> float:
        return (0.0, 0.6, 0.95)[(zlib.crc32(item.encode()) + seed) % 3]

    with scratch() as tmp:
        services = embedded(Path(tmp), scripted(kind=Kind.PAST_CHOICE, worth=1.0, answers=answers),
                            max_items=max_items)
        services.notebook.append([form(text) for text, form in note_lines])
        services.store.add([Item(i, form(t), "passage", "archive") for i, (t, form) in passages], timeout=1)
        conversation = tuple(Turn("assistant", s) for s in said)

        result = recall(Message(message, conversation, "s"), services)
        services.store.close()

    ids = [item.id for item in result.items]
    texts = [" ".join(item.text.split()).lower() for item in result.items]
    assert len(ids) == len(set(ids))
    assert len(texts) == len(set(texts))
    assert len(result.items) <= max_items
    assert (result.text == "") == (result.items == ())
    if result.text:
        assert len(result.text.splitlines()) == 1 + len(result.items)


delays = st.one_of(st.floats(0.0, 0.01), st.floats(0.15, 0.3))  # well clear of the deadlines


class Stopwatch:
    """A Decider double with a delay per call, drawn by the test; answers as scripted."""

    name = "stopwatch decider"

    def __init__(self, inner, delays: list[float]) -> None:
        self.inner, self.delays, self.calls = inner, delays, 0

    def decide(self, state, questions):
        delay = self.delays[self.calls % len(self.delays)]
        self.calls += 1
        time.sleep(delay)
        return self.inner.decide(state, questions)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(decider_delays=st.lists(delays, min_size=1, max_size=4), store_delay=delays,
       note_answers=st.booleans())
def test_a_recall_never_takes_longer_than_the_deadlines_of_the_calls_it_made(
        scripted, decider_delays, store_delay, note_answers):
    decider_deadline, store_deadline, margin = 0.05, 0.08, 0.5
    with scratch() as tmp:
        inner = scripted(kind=Kind.RECURRING_PROBLEM, worth=1.0,
                         answers=lambda item, origin: 0.99 if note_answers or origin == "passage" else 0.0)
        decider = Stopwatch(inner, decider_delays)
        services = embedded(Path(tmp), decider, decider_deadline=decider_deadline,
                            store_deadline=store_deadline)
        services.notebook.append(["celery broker heartbeat set to 30 seconds"])
        services.store.add([Item("a1", "celery workers hung after a broker reset", "passage", "archive")],
                           timeout=1)
        store = SlowStore(services.store, store_delay)

        t0 = time.perf_counter()
        result = recall(Message("celery workers hung again after a broker reset"), evolve(services, store=store))
        elapsed = time.perf_counter() - t0
        store.close()

    assert elapsed <= decider.calls * decider_deadline + store.calls * store_deadline + margin
    late = any("deadline" in step.why for step in result.trace)
    assert late == (result.stopped_by.endswith("unavailable"))
    if late:
        assert result.text == ""
    else:
        assert result.text  # every call answered in time: the passage or the note is added


printable = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\x85"),
                    max_size=40)


@PROPERTY
@given(old=st.lists(printable, max_size=8), user=printable, assistant=printable, kept=st.booleans(),
       restated_at=st.one_of(st.none(), st.integers(0, 8)))
def test_retain_appends_one_line_when_kept_none_when_dropped_or_restated_and_keeps_every_line_it_does_not_name(
        scripted, old, user, assistant, kept, restated_at):
    category = Category.DECISION if kept else Category.ONE_OFF
    # The scripted judge of novelty: a note equal to the new line's fact restates it.
    restates = lambda note, new: "restates" if note.strip() and note.strip() == fact_of(new) else "differs"  # noqa: E731
    fact = fact_of(distilled(scripted(keep=category), user, assistant, category))
    if restated_at is not None and kept:  # an older note holding the fact to come
        old.insert(min(restated_at, len(old)), fact)
    with scratch() as tmp:
        services = embedded(Path(tmp), scripted(keep=category, novel=restates))
        path = services.notebook.path
        if old:  # no lines: no file, as on a fresh machine (an empty file: see test_notes.py)
            path.write_text("".join(line + "\n" for line in old), encoding="utf-8")
        before = path.read_bytes() if old else b""

        result = retain(Exchange(user, assistant), services)
        after = path.read_bytes() if path.exists() else b""
        services.store.close()

    restated = kept and restated_at is not None and fact.strip() != ""
    if not kept or restated or not result.lines:
        assert after == before and result.edits == ()
        assert not result.keep or not result.lines  # nothing kept, or nothing to state
        return
    (line,) = result.lines
    assert len(line) <= 400 and "\n" not in line
    named = {edit.line for edit in result.edits}
    expected = [text for number, text in enumerate([*old, line], start=1) if number not in named]
    assert after == "".join(text + "\n" for text in expected).encode()
    assert after.decode().splitlines()[-1] == line


def distilled(decider: Decider, user: str, assistant: str, category: Category) -> str:
    """The line retain writes for an exchange, as this decider judges its clauses ('' for none)."""
    with scratch() as tmp:
        services = embedded(Path(tmp), decider)
        state = distill(services, redact_exchange(services, Keep(exchange=Exchange(user, assistant),
                                                                category=category, keep=True)))
        services.store.close()
    return state.lines[0] if state.lines else ""


def fact_of(line: str) -> str:
    """A note line without the tail retain gives it: (category day pointer)."""
    return re.sub(r"\s\([a-z_]+ \d{4}-\d{2}-\d{2} ex-[0-9a-f]+\)$", "", line)
