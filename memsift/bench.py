"""``memsift bench``: replay scenarios and print the article's table.

Each scenario (format: docs/scenarios.md) is loaded into a fresh notes file
and store (notes -> notes, archive -> store); every user message is replayed
with the conversation before it; every ``retain`` exchange goes through the
retain path. Every pipeline is measured in the same run: ``memsift`` (with the semantic judge when
``judge`` turns it on, and ``memsift-lexical`` beside it), and ``every-message``.

>>> rows = bench_pipeline("memsift", [load_scenario(Path("benchmarks/scenarios/example_bookshop.json"))])
>>> rows["total"]["reminders_found"], rows["total"]["reminders_expected"]
"""

from __future__ import annotations

import json
import math
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import evolve, frozen

from .config import Config, load_config
from .costs import metered
from .notes import NotesFile, exchange_id
from .pipeline import brief, recall, retain
from .services import Services, SessionLog
from .stages import EVERY_MESSAGE_STAGES, RECALL_STAGES
from .types import Answer, Decider, Edit, Embedder, Exchange, Item, Kind, Message, Question, Store, Turn, Usage

PIPELINES = {"memsift": RECALL_STAGES, "memsift-lexical": RECALL_STAGES, "every-message": EVERY_MESSAGE_STAGES}
BRIEFED = frozenset({"memsift", "memsift-lexical"})  # a session starts with a brief (Cognee's plugin gives none)
LEGEND = {
    "memsift": "memsift's recall and retain paths on the embedded decider{judge}",
    "memsift-lexical": "the same paths judged lexically, as by default (MEMSIFT_JUDGE=lexical) or without the extra",
    "every-message": "the store's closest passages added to every message, every exchange stored whole "
                     "(Cognee's plugin)",
}
COUNTS = ("messages", "added", "added_chars", "added_for_nothing", "no_need", "reminders_found",
          "reminders_expected", "items_added", "items_needed_added", "secrets_leaked",
          "questions", "tokens_in", "tokens_out", "usd")  # the last four: what the decider was asked
# What the session brief gave: the messages whose needs it met alone and together with the message's
# recall, its characters over the sessions briefed; for a loop, the same of the yardstick (the notes
# newest first, cut at the same budget) and of what is ranked first (memsift's, and plain BM25's top 1).
BRIEF_COUNTS = ("found_brief", "found_together", "briefs", "brief_chars")
# A loop scenario's reminders, direct and needing a step of inference apart, and its notes at the end.
LOOP_COUNTS = ("found_direct", "expected_direct", "found_inference", "expected_inference", "notes_lines",
               "notes_chars", "found_newest", "found_newest_together", "ranked_first", "ranked_first_bm25")


@frozen
class UserTurn:
    text: str
    kind: str
    needs: tuple[str, ...]
    secrets: tuple[str, ...]
    before: tuple[Turn, ...]  # the conversation before this message


@frozen
class Scenario:
    id: str
    notes: tuple[Item, ...]
    archive: tuple[Item, ...]
    messages: tuple[UserTurn, ...]
    retain: tuple[tuple[Exchange, bool], ...]

    @property
    def secrets(self) -> set[str]:
        return {s for m in self.messages for s in m.secrets}


def load_scenario(path: Path) -> Scenario | LoopScenario:
    """A scenario of either format: memory handed over (format 1) or memory kept by memsift itself."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") == LOOP_FORMAT:
        return _loop_scenario(data)
    if data.get("format") != 1:
        raise ValueError(f"{path}: neither a format 1 nor a {LOOP_FORMAT} scenario")
    memory = data["memory"]
    notes = tuple(Item(n["id"], n["text"], "note", "notes") for n in memory.get("notes", []))
    archive = tuple(Item(a["id"], a["text"], "passage", "archive") for a in memory.get("archive", []))
    turns: list[Turn] = []
    messages: list[UserTurn] = []
    for turn in data["conversation"]:
        if turn["role"] == "user":
            messages.append(UserTurn(turn["text"], turn["kind"], tuple(turn.get("needs", [])),
                                     tuple(turn.get("secrets", [])), tuple(turns)))
        turns.append(Turn(turn["role"], turn["text"]))
    keep = tuple((Exchange(r["user"], r["assistant"]), bool(r["keep"])) for r in data.get("retain", []))
    return Scenario(data["id"], notes, archive, tuple(messages), keep)


LOOP_FORMAT = "memsift-loop/1"


@frozen
class LoopTurn:
    """A user message of a loop scenario, with the facts of earlier sessions it needs."""

    text: str
    needs: tuple[str, ...]
    need_kind: str  # "direct" | "inference"
    secrets: tuple[str, ...]


@frozen
class LoopSession:
    id: str
    exchanges: tuple[tuple[LoopTurn, str], ...]  # (user message, the assistant's answer)


@frozen
class LoopScenario:
    """Several sessions of one project: retain after every exchange, recall from the second session on."""

    id: str
    sessions: tuple[LoopSession, ...]
    evidence: Mapping[str, tuple[str, ...]]  # fact id -> phrases any text conveying it holds
    keep: frozenset[tuple[str, int]]  # (session id, exchange number) that deserve memory
    notes: tuple[str, ...] = ()  # the older memory the notes hold before the first session

    @property
    def secrets(self) -> set[str]:
        return {s for session in self.sessions for turn, _ in session.exchanges for s in turn.secrets}


def _loop_scenario(data: Mapping[str, Any]) -> LoopScenario:
    sessions = []
    for session in data["sessions"]:
        turns = session["turns"]
        exchanges = tuple(
            (LoopTurn(user["text"], tuple(user.get("needs", [])), user.get("need_kind", "direct"),
                      tuple(user.get("secrets", []))), answer["text"])
            for user, answer in zip(turns[::2], turns[1::2], strict=True)
        )
        sessions.append(LoopSession(session["id"], exchanges))
    evidence = {fid: tuple(fact["evidence"]) for fid, fact in data["facts"].items()}
    keep = frozenset((sid, n) for sid, numbers in data.get("keep", {}).items() for n in numbers)
    return LoopScenario(data["id"], tuple(sessions), evidence, keep, tuple(data.get("notes", ())))


# -- what reaches a backend, for secrets_leaked --------------------------------

class Witness:
    """Everything handed to a decider, a store or the notes, kept to look for secrets in."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def leaked(self, secrets: Iterable[str]) -> int:
        blob = "\n".join(self.seen)
        return sum(1 for s in secrets if s and s in blob)


class _WatchedDecider:
    def __init__(self, inner: Decider, witness: Witness) -> None:
        self.inner, self.witness, self.name = inner, witness, inner.name
        self.remote = getattr(inner, "remote", True)
        self.asked = Usage()  # every question, embedded or remote, and what the remote ones cost

    def decide(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Answer]:
        self.witness.seen.append(json.dumps(state, default=str))
        self.witness.seen.extend(json.dumps(q.instructions, default=str) for q in questions.values())
        with metered() as cost:  # what the inner decider charges goes to the path's meter too
            try:
                return self.inner.decide(state, questions)
            finally:
                self.asked += Usage(len(questions), cost.total.tokens_in, cost.total.tokens_out, cost.total.usd)

    def counts(self) -> dict[str, Any]:
        """The row's cost counts: questions, tokens sent and received, US dollars."""
        a = self.asked
        return {"questions": a.questions, "tokens_in": a.tokens_in, "tokens_out": a.tokens_out, "usd": a.usd}


class _WatchedStore:
    def __init__(self, inner: Store, witness: Witness) -> None:
        self.inner, self.witness, self.name = inner, witness, inner.name

    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]:
        self.witness.seen.append(query)
        return self.inner.search(query, limit=limit, timeout=timeout)

    def add(self, items: Sequence[Item], *, timeout: float) -> None:
        self.witness.seen.extend(item.text for item in items)
        self.inner.add(items, timeout=timeout)


class _WatchedNotes(NotesFile):
    def __init__(self, path: Path, witness: Witness) -> None:
        super().__init__(path)
        self.witness = witness

    def append(self, lines: Sequence[str]) -> None:
        self.witness.seen.extend(lines)
        super().append(lines)

    def apply(self, edits: Sequence[Edit]) -> list[Edit]:
        self.witness.seen.extend(e.text for e in edits)
        return super().apply(edits)


# -- running -------------------------------------------------------------------

StoreFactory = Callable[[Scenario | LoopScenario, Path], Store]


def embedded_store(scenario: Scenario | LoopScenario, folder: Path) -> Store:
    from .stores.sqlite import SQLiteStore

    return SQLiteStore(folder / "store.sqlite")


def _watched(base: Services, store: Store, folder: Path, witness: Witness) -> Services:
    """The services a replay runs on: every backend watched for secrets, a notes file of its own."""
    return evolve(base, decider=_WatchedDecider(base.decider, witness),
                  notebook=_WatchedNotes(folder / "notes.md", witness),
                  store=_WatchedStore(store, witness), session_log=SessionLog(folder / "sessions"))


def _settled(store: Store) -> None:
    settle = getattr(store, "settle", None)
    if settle is not None:
        settle(600)


def _closed(store: Store) -> None:
    close = getattr(store, "close", None)
    if close is not None:
        close()


def bench_scenario(scenario: Scenario | LoopScenario, pipeline: str, base: Services,
                   make_store: StoreFactory, folder: Path) -> dict[str, Any]:
    """One row of the table for one scenario and one pipeline."""
    if isinstance(scenario, LoopScenario):
        return bench_loop(scenario, pipeline, base, make_store, folder)
    witness = Witness()
    store = make_store(scenario, folder)
    NotesFile(folder / "notes.md").append([n.text for n in scenario.notes])  # the fixture, not watched
    store.add(scenario.archive, timeout=600)
    _settled(store)
    services = _watched(base, store, folder, witness)
    ids_by_text = {" ".join(i.text.split()): i.id for i in (*scenario.notes, *scenario.archive)}
    texts = {i.id: " ".join(i.text.split()) for i in (*scenario.notes, *scenario.archive)}
    row: dict[str, Any] = dict.fromkeys((*COUNTS, *BRIEF_COUNTS), 0)
    waits: list[float] = []
    right_kinds = 0
    session = f"bench-{scenario.id}-{pipeline}"
    given = _session_brief(row, pipeline, services, session)
    briefed = {ids_by_text.get(" ".join(line.split()), "") for line in _quoted_facts(given)}
    for turn in scenario.messages:
        t0 = time.perf_counter()
        result = recall(Message(turn.text, turn.before, session), services, PIPELINES[pipeline])
        waits.append(time.perf_counter() - t0)
        right_kinds += result.kind is not None and result.kind == Kind(turn.kind)
        found = {ids_by_text.get(" ".join(i.text.split()), i.id) for i in result.items}
        row["messages"] += 1
        row["no_need"] += not turn.needs
        row["reminders_expected"] += bool(turn.needs)
        met = False
        if result.text:
            row["added"] += 1
            row["added_chars"] += len(result.text)
            row["added_for_nothing"] += not turn.needs
            flat = " ".join(result.text.split())
            met = any(n in found or texts.get(n, "\0") in flat for n in turn.needs)
            row["reminders_found"] += met
            row["items_added"] += len(result.items)
            row["items_needed_added"] += len(found & set(turn.needs))
        by_brief = bool(briefed & set(turn.needs))
        row["found_brief"] += by_brief
        row["found_together"] += by_brief or met
    kept = _retain_verdicts(scenario, pipeline, evolve(services, notebook=_WatchedNotes(
        folder / "retained.md", witness)))
    row.update(services.decider.counts())  # type: ignore[attr-defined]
    row.update(
        id=scenario.id,
        kind_accuracy=right_kinds / max(row["messages"], 1),
        wait_mean_s=statistics.fmean(waits) if waits else 0.0,
        wait_p95_s=_p95(waits),
        secrets_leaked=witness.leaked(scenario.secrets),
        _waits=waits,
        _retain=kept,
    )
    row.update(_retain_scores(kept))
    _closed(store)
    return row


def bench_loop(scenario: LoopScenario, pipeline: str, base: Services, make_store: StoreFactory,
               folder: Path) -> dict[str, Any]:
    """One row for a loop scenario: memory starts empty and holds only what was kept since.

    Every exchange goes through retain as it ends (``every-message`` stores
    every exchange whole, as Cognee's plugin does); each session starts with
    the session brief (memsift's pipelines); from the second session on (from
    the first when the scenario gives older notes), every user message is
    recalled first, with its session's conversation so far.
    """
    witness = Witness()
    store = make_store(scenario, folder)
    NotesFile(folder / "notes.md").append(list(scenario.notes))  # the older memory, not watched
    if pipeline == "every-message" and scenario.notes:  # Cognee's plugin holds the older memory in its store
        store.add([Item(f"older-{n}", line, "passage", "memsift:older") for n, line in enumerate(scenario.notes)],
                  timeout=600)
    services = _watched(base, store, folder, witness)
    row: dict[str, Any] = dict.fromkeys((*COUNTS, *BRIEF_COUNTS, *LOOP_COUNTS), 0)
    waits: list[float] = []
    kept: list[tuple[bool, bool]] = []
    for index, session in enumerate(scenario.sessions):
        session_id = f"bench-{scenario.id}-{pipeline}-{session.id}"
        recalled = bool(index or scenario.notes)  # with no older memory, the first session has none to recall
        given = _session_brief(row, pipeline, services, session_id) if recalled else ""
        newest = newest_first(services.notebook.lines(), services.config.brief_chars) if recalled else ""
        turns: list[Turn] = []
        for number, (user, answer) in enumerate(session.exchanges):
            if recalled:
                ranked = _ranked_first(services, Message(user.text, tuple(turns), session_id))
                t0 = time.perf_counter()
                result = recall(Message(user.text, tuple(turns), session_id), services, PIPELINES[pipeline])
                waits.append(time.perf_counter() - t0)
                _score_loop_message(row, scenario, user, result.text, result.items)
                _score_loop_memory(row, scenario, user, given, newest, result.text, ranked)
            exchange = Exchange(user.text, answer, session_id)
            kept.append((_kept(exchange, pipeline, services), (session.id, number) in scenario.keep))
            turns += [Turn("user", user.text), Turn("assistant", answer)]
    _settled(store)
    lines = [line for line in services.notebook.lines() if line.strip()]
    row.update(services.decider.counts())  # type: ignore[attr-defined]
    row.update(
        id=scenario.id, loop=True, kind_accuracy=None,
        wait_mean_s=statistics.fmean(waits) if waits else 0.0, wait_p95_s=_p95(waits),
        secrets_leaked=witness.leaked(scenario.secrets),
        notes_lines=len(lines), notes_chars=sum(len(line) for line in lines),
        _waits=waits, _retain=kept, _line_lengths=[len(line) for line in lines],
    )
    row.update(_retain_scores(kept))
    _closed(store)
    return row


def _session_brief(row: dict[str, Any], pipeline: str, services: Services, session: str) -> str:
    """The brief a session of this pipeline starts with ('' for one that gives none), counted."""
    if pipeline not in BRIEFED or services.config.brief_chars <= 0:
        return ""
    text = brief(services, session=session).text
    row["briefs"] += 1
    row["brief_chars"] += len(text)
    return text


def _quoted_facts(brief_text: str) -> list[str]:
    """The facts a rendered brief quotes, as written in the notes (its header and tails left out)."""
    facts = []
    for line in brief_text.split("\n")[1:]:
        quoted_part = line[2:line.rfind('" ') + 1] if line.startswith('- "') else ""
        if quoted_part:
            facts.append(json.loads(quoted_part))
    return facts


def newest_first(lines: Sequence[str], budget: int) -> str:
    """The yardstick of a brief: the notes' lines, the newest first, as many as ``budget`` holds."""
    taken: list[str] = []
    room = budget
    for line in reversed([line for line in lines if line.strip()]):
        if len(line) + 1 > room:
            break
        taken.append(line)
        room -= len(line) + 1
    return "\n".join(taken)


def _ranked_first(services: Services, message: Message) -> tuple[str, str]:
    """The fact lines ranked first for a message by memsift's retrieval and by plain BM25 ('' for none)."""
    from .stages.recall import ranked_notes

    facts = [item.text for item in services.notebook.items()]
    ours = ranked_notes(services, message, limit=1)
    return (ours[0].text if ours else "", _bm25_first(message.text, facts))


def _bm25_first(query: str, texts: Sequence[str]) -> str:
    """Plain Okapi BM25 (k1 1.2, b 0.75) over the texts' lower-cased words, stopwords out, no stemming."""
    from ._words.text import content_words
    from .stages._rank import inverse_frequency, term_weight

    docs = [content_words(text) for text in texts]
    if not docs:
        return ""
    average = sum(map(len, docs)) / len(docs) or 1.0
    df: dict[str, int] = {}
    for doc in docs:
        for word in set(doc):
            df[word] = df.get(word, 0) + 1
    terms = set(content_words(query))
    best, best_score = "", 0.0
    for text, doc in zip(texts, docs, strict=True):
        counts: dict[str, int] = {}
        for word in doc:
            counts[word] = counts.get(word, 0) + 1
        score = 0.0
        for term in terms & counts.keys():
            score += term_weight(inverse_frequency(len(docs), df[term]), counts[term], len(doc), average)
        if score > best_score:
            best, best_score = text, score
    return best


def _kept(exchange: Exchange, pipeline: str, services: Services) -> bool:
    """Retain one exchange; ``every-message`` keeps it whole in the store, undecided."""
    if pipeline != "every-message":
        return retain(exchange, services).keep
    assert services.store is not None
    text = services.redactor.redact(f"{exchange.user}\n\n{exchange.assistant}")
    services.store.add([Item(exchange_id(exchange), text, "passage", "memsift:exchange")], timeout=600)
    return True


def _conveys(scenario: LoopScenario, fact: str, added: str) -> bool:
    """Does the text hold one of the fact's evidence phrases (case-insensitive)?"""
    low = added.lower()
    return any(phrase.lower() in low for phrase in scenario.evidence.get(fact, ()))


def _meets(scenario: LoopScenario, turn: LoopTurn, text: str) -> bool:
    """A need is met when, for every needed fact, one of its evidence phrases is in the text."""
    return bool(turn.needs and text) and all(_conveys(scenario, fact, text) for fact in turn.needs)


def _score_loop_message(row: dict[str, Any], scenario: LoopScenario, turn: LoopTurn, text: str,
                        items: Sequence[Item]) -> None:
    """What recall added to this message, scored."""
    row["messages"] += 1
    row["no_need"] += not turn.needs
    row["reminders_expected"] += bool(turn.needs)
    if turn.needs:
        row[f"expected_{turn.need_kind}"] += 1
    if not text:
        return
    row["added"] += 1
    row["added_chars"] += len(text)
    row["added_for_nothing"] += not turn.needs
    if _meets(scenario, turn, text):
        row["reminders_found"] += 1
        row[f"found_{turn.need_kind}"] += 1
    row["items_added"] += len(items)
    row["items_needed_added"] += sum(any(_conveys(scenario, f, item.text) for f in turn.needs) for item in items)


def _score_loop_memory(row: dict[str, Any], scenario: LoopScenario, turn: LoopTurn, brief_text: str,
                       newest: str, added: str, ranked: tuple[str, str]) -> None:
    """What the session's brief met, alone and with this message's recall; the same of the yardstick
    (the notes newest first); and whether the fact is ranked first by memsift and by plain BM25."""
    if not turn.needs:
        return
    row["found_brief"] += _meets(scenario, turn, brief_text)
    row["found_together"] += _meets(scenario, turn, f"{brief_text}\n{added}")
    row["found_newest"] += _meets(scenario, turn, newest)
    row["found_newest_together"] += _meets(scenario, turn, f"{newest}\n{added}")
    row["ranked_first"] += _meets(scenario, turn, ranked[0])
    row["ranked_first_bm25"] += _meets(scenario, turn, ranked[1])


def _retain_verdicts(scenario: Scenario, pipeline: str, services: Services) -> list[tuple[bool, bool]]:
    """(predicted, expected) keep for each retain item; every-message keeps everything, as the plugin does.

    The retain path runs whole, into notes of its own so the recall replay is untouched.
    """
    if pipeline == "every-message":
        return [(True, expected) for _, expected in scenario.retain]
    return [(retain(exchange, services).keep, expected) for exchange, expected in scenario.retain]


def _retain_scores(kept: Sequence[tuple[bool, bool]]) -> dict[str, float]:
    tp = sum(p and e for p, e in kept)
    predicted = sum(p for p, _ in kept)
    expected = sum(e for _, e in kept)
    return {"retain_precision": tp / predicted if predicted else 0.0,
            "retain_recall": tp / expected if expected else 0.0}


def _p95(values: Sequence[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def _total(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {"id": "total", **{k: sum(r[k] for r in rows) for k in COUNTS}}
    if all("briefs" in r for r in rows):
        total.update({k: sum(r[k] for r in rows) for k in BRIEF_COUNTS})
    waits = [w for r in rows for w in r["_waits"]]
    classified = [r for r in rows if r["kind_accuracy"] is not None]  # loop messages carry no kind
    kinds = sum(r["kind_accuracy"] * r["messages"] for r in classified)
    total.update(kind_accuracy=kinds / max(sum(r["messages"] for r in classified), 1) if classified else None,
                 wait_mean_s=statistics.fmean(waits) if waits else 0.0, wait_p95_s=_p95(waits))
    total.update(_retain_scores([k for r in rows for k in r["_retain"]]))
    loops = [r for r in rows if r.get("loop")]
    if loops:
        total.update({k: sum(r[k] for r in loops) for k in LOOP_COUNTS},
                     loop=len(loops) == len(rows),
                     _line_lengths=[n for r in loops for n in r["_line_lengths"]])
    return total


ROW_KEYS = ("id", "messages", "added", "added_chars", "added_for_nothing", "no_need", "reminders_found",
            "reminders_expected", "items_added", "items_needed_added", "kind_accuracy", "wait_mean_s",
            "wait_p95_s", "secrets_leaked", "retain_precision", "retain_recall")
COST_KEYS = ("messages", "questions", "tokens_in", "tokens_out", "usd")  # beside the rows: FORMAT.md fixes those


def bench_pipeline(pipeline: str, scenarios: Sequence[Scenario | LoopScenario], config: Config | None = None,
                   make_store: StoreFactory = embedded_store, decider: Decider | None = None,
                   label: str | None = None, with_cost: bool = False) -> dict[str, Any]:
    """The object ``memsift bench --json`` prints for one pipeline (on the embedded decider unless
    ``decider`` is given; ``label`` names its column). ``with_cost`` adds ``"cost"``: questions,
    tokens and US dollars per scenario and in total, beside the rows FORMAT.md fixes."""
    from .redact import PatternRedactor
    from .revise import DuplicateReviser

    rows = []
    with tempfile.TemporaryDirectory(prefix="memsift-bench-") as tmp:
        config = config or load_config({"MEMSIFT_HOME": tmp})
        config = evolve(config, home=Path(tmp))
        decider = decider or bench_decider(pipeline, config)
        base = Services(decider=decider, notebook=NotesFile(Path(tmp) / "unused.md"),
                        redactor=PatternRedactor(), reviser=DuplicateReviser(), config=config,
                        embedder=getattr(decider, "embedder", None))  # the semantic judge's: recall ranks with it
        for n, scenario in enumerate(scenarios):
            folder = Path(tmp) / f"{n}-{pipeline}"
            folder.mkdir()
            rows.append(bench_scenario(scenario, pipeline, base, make_store, folder))
    total = _total(rows)
    result = {"pipeline": label or pipeline, "scenarios": [_public(r) for r in rows], "total": _public(total)}
    if with_cost:
        result["cost"] = {r["id"]: {k: r[k] for k in COST_KEYS} for r in (*rows, total)}
    return result


def semantic_on(config: Config) -> bool:
    """Whether ``memsift`` is benched with the semantic judge: ``judge`` and the extra say so."""
    from .services import embedder_for

    return embedder_for(config) is not None


def bench_decider(pipeline: str, config: Config) -> Decider:
    """The embedded decider a pipeline runs on; ``memsift``'s with the semantic judge when it is on,
    its model loaded in this process (a warm server could still be starting: the figures would vary)."""
    from .decider.embedded import EmbeddedDecider

    lexical = EmbeddedDecider.load()
    if pipeline != "memsift" or not semantic_on(config):
        return lexical
    from .semantic.embedder import InProcessEmbedder
    from .semantic.judge import SemanticDecider

    return SemanticDecider(lexical, _Remembered(InProcessEmbedder(config.embedding_model)))


class _Remembered:
    """An embedder that embeds each text once per run: a replay judges the same notes on every message,
    as a warm server's vector cache would spare it."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.name = inner, inner.name
        self.vectors: dict[str, Any] = {}

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy

        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing:
            rows = self.inner.embed(missing)
            if rows is None:
                return None
            self.vectors.update(zip(missing, rows, strict=True))
        return numpy.array([self.vectors[t] for t in texts])


def legend(names: Sequence[str], semantic: bool) -> str:
    """What each column of the table is, for the lines under it."""
    judge = " with the semantic judge (lexical judge + embedding cosines)" if semantic else ", judged lexically"
    lines = []
    for name in names:
        base, _, backend = name.partition("/")
        what = LEGEND.get(base, "").format(judge=judge)
        lines.append(f"  {name}: " + (f"memsift's paths on the {backend} decider" if backend else what))
    return "\n".join(lines)


def _public(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as ``--json`` prints it: FORMAT.md's keys, and for a loop row the loop's own."""
    public = {k: row[k] for k in ROW_KEYS}
    if "briefs" in row:
        public.update({k: row[k] for k in BRIEF_COUNTS})
    if "_line_lengths" in row:
        lengths = row["_line_lengths"]
        public.update({k: row[k] for k in ("loop", *LOOP_COUNTS)},
                      notes_line_median=statistics.median(lengths) if lengths else 0,
                      notes_line_max=max(lengths, default=0))
    return public


# -- the table -----------------------------------------------------------------

def format_table(results: Sequence[Mapping[str, Any]]) -> str:
    """The article's table, one column per pipeline, per scenario and in total.

    Loop rows (memory kept by memsift itself) add their own lines: reminders
    found direct and by inference apart, and the notes file at the end.
    """
    blocks = []
    names = [r["pipeline"] for r in results]
    sections = [(row["id"], [r["scenarios"][i] for r in results]) for i, row in enumerate(results[0]["scenarios"])]
    sections.append(("total", [r["total"] for r in results]))
    spending = any(r.get("cost", {}).get("total", {}).get("tokens_in") for r in results)  # a remote decider ran
    width = max(16, *(len(name) + 2 for name in names))
    for title, rows in sections:
        lines = [f"{title}", f"  {'':<22}" + "".join(f"{n:>{width}}" for n in names)]
        shown = (_LINES + (_BRIEF_LINES if any("briefs" in row for row in rows) else ())
                 + (_LOOP_LINES if "loop" in rows[0] else ()))
        for label, cell in shown:
            lines.append(f"  {label:<22}" + "".join(f"{cell(r):>{width}}" for r in rows))
        costs = [r.get("cost", {}).get(title) for r in results]
        for label, cell in _COST_LINES if spending else ():
            lines.append(f"  {label:<22}" + "".join(f"{cell(c) if c else '':>{width}}" for c in costs))
        blocks.append("\n".join(lines))
    loop = any("loop" in row for _, rows in sections for row in rows)
    briefed = any("briefs" in row for _, rows in sections for row in rows)
    labels = [label for label, _ in _LINES + (_BRIEF_LINES if briefed else ()) + (_LOOP_LINES if loop else ())
              + (_COST_LINES if spending else ())]
    width = max(map(len, labels), default=0) + 2
    blocks.append("\n".join(["what the lines count (docs/bench.md)"]
                            + [f"  {label:<{width}}{_LEGEND[label]}" for label in labels]))
    return "\n\n".join(blocks)


_LEGEND = {
    "added": "messages memory added text to / messages",
    "characters": "characters of memory text added, summed",
    "wait mean / p95": "from the message to the decision, in process (no interpreter start)",
    "added for nothing": "messages that needed nothing but got text / such messages",
    "reminders found": "messages that needed an item and got one / such messages",
    "item precision": "items added that were needed / items added",
    "kind accuracy": "messages whose kind was classified right, as a share (n/a on a loop)",
    "secrets leaked": "secrets of the scenario seen by a decider or a store, or in the notes",
    "retain prec / recall": "keep verdicts: right over kept / right over the exchanges to keep",
    "found by the brief": "later messages whose needs the session's brief met (given once, as the session started)",
    "found together": "later messages whose needs the brief and the message's recall met together",
    "brief chars / session": "characters of the brief, per session briefed (its header included)",
    "newest-first, + message": "the yardstick: the notes newest first at the same budget, alone / with recall",
    "ranked first / BM25": "needs whose fact memsift's retrieval ranks first / plain BM25 ranks first",
    "found direct": "later messages that got every fact they need, the need in the fact's words",
    "found inference": "the same, for needs that take a step of reasoning",
    "notes lines / chars": "the notes file at the end",
    "note median / max": "characters in a notes line",
    "questions / message": "questions asked of the remote decider",
    "tokens sent / message": "tokens sent to it",
    "tokens back / message": "tokens it returned",
    "USD / 1,000 messages": "at the configured decider_price_in and decider_price_out",
}


def _ratio(a: int, b: int) -> str:
    return f"{a} / {b}"


_LINES: tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...] = (
    ("added", lambda r: _ratio(r["added"], r["messages"])),
    ("characters", lambda r: f"{r['added_chars']:,}"),
    ("wait mean / p95", lambda r: f"{r['wait_mean_s'] * 1000:.1f}/{r['wait_p95_s'] * 1000:.1f} ms"),
    ("added for nothing", lambda r: _ratio(r["added_for_nothing"], r["no_need"])),
    ("reminders found", lambda r: _ratio(r["reminders_found"], r["reminders_expected"])),
    ("item precision", lambda r: _percent(r["items_needed_added"], r["items_added"])),
    ("kind accuracy", lambda r: "n/a" if r["kind_accuracy"] is None else f"{r['kind_accuracy']:.2f}"),
    ("secrets leaked", lambda r: str(r["secrets_leaked"])),
    ("retain prec / recall", lambda r: f"{r['retain_precision']:.2f} / {r['retain_recall']:.2f}"),
)


_BRIEF_LINES: tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...] = (
    ("found by the brief", lambda r: _ratio(r["found_brief"], r["reminders_expected"]) if r["briefs"] else "n/a"),
    ("found together", lambda r: _ratio(r["found_together"], r["reminders_expected"]) if r["briefs"] else "n/a"),
    ("brief chars / session", lambda r: f"{r['brief_chars'] / r['briefs']:,.0f}" if r["briefs"] else "n/a"),
)


_LOOP_LINES: tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...] = (
    ("newest-first, + message", lambda r: f"{r['found_newest']} / {r['found_newest_together']}"),
    ("ranked first / BM25", lambda r: f"{r['ranked_first']} / {r['ranked_first_bm25']}"),
    ("found direct", lambda r: _ratio(r["found_direct"], r["expected_direct"])),
    ("found inference", lambda r: _ratio(r["found_inference"], r["expected_inference"])),
    ("notes lines / chars", lambda r: f"{r['notes_lines']} / {r['notes_chars']:,}"),
    ("note median / max", lambda r: f"{r['notes_line_median']:.0f} / {r['notes_line_max']}"),
)


def _per_message(key: str, scale: float = 1.0) -> Callable[[Mapping[str, Any]], str]:
    return lambda r: f"{r[key] * scale / max(r['messages'], 1):,.{2 if scale == 1 else 4}f}"


# Per message recalled; the questions and tokens of retain are counted in with them.
_COST_LINES: tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...] = (
    ("questions / message", _per_message("questions")),
    ("tokens sent / message", _per_message("tokens_in")),
    ("tokens back / message", _per_message("tokens_out")),
    ("USD / 1,000 messages", _per_message("usd", 1000.0)),
)


def _percent(a: int, b: int) -> str:
    return f"{a}/{b} {100 * a / b:.0f}%" if b else "n/a"
