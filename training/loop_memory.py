"""The memory memsift writes itself, replayed from a loop file of the corpus, for the builds.

A loop file (``loop-*.json``, the format of docs/scenarios.md's loop
scenarios, each user turn with its ``kind`` and each answer with the
``category`` of its exchange) is several sessions of one project. Replayed
here as the bench replays it: every exchange goes through the real retain
path as it ends, its keep answered by the file's label (the memory holds what
deserves keeping: the judge learns to find facts, not to forgive a keep head's
slips), everything else (distill, novel, revise) by the decider given. Before
each user message of the second session on, a row holds what recall would
weigh: the message and its recent turns, the notes as they are then, the
store's closest fact lines, and which of them convey what the message needs
(a fact's evidence phrase, as the bench counts a reminder found).

Shared by ``build_weights.py`` (the judge's pairs, kind and keep examples)
and ``build_semantic.py`` (its head's pairs and thresholds).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from memsift.config import Config
from memsift.notes import NotesFile
from memsift.pipeline import retain
from memsift.redact import PatternRedactor
from memsift.revise import DuplicateReviser
from memsift.services import Services
from memsift.stages import RECENT_TURNS
from memsift.stages.recall import search_query
from memsift.stores.sqlite import SQLiteStore
from memsift.types import Answer, ChoiceAnswer, Decider, Exchange, Item, Message, Question, Turn

SEARCH_LIMIT = Config(home=Path("/nonexistent")).search_limit  # the store's closest, as recall asks


class LabelledKeep:
    """A decider whose ``keep`` answer is the corpus's label for the exchange being retained."""

    name = "labelled keep"
    remote = False

    def __init__(self, inner: Decider) -> None:
        self.inner = inner
        self.category = ""

    def decide(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Answer]:
        asked = {qid: q for qid, q in questions.items() if q.task != "keep"}
        answers = self.inner.decide(state, asked) if asked else {}
        for qid in questions.keys() - asked.keys():
            answers[qid] = ChoiceAnswer(self.category, {self.category: 1.0}, 1.0)
        return answers


def exchanges(loop: Mapping[str, Any]) -> Iterator[tuple[int, str, Mapping[str, Any], Mapping[str, Any]]]:
    """(session index, session id, user turn, answer turn) of every exchange, oldest first."""
    for index, session in enumerate(loop["sessions"]):
        turns = session["turns"]
        for user, answer in zip(turns[::2], turns[1::2], strict=True):
            yield index, session["id"], user, answer


def replay(loop: Mapping[str, Any], decider: Decider) -> list[dict[str, Any]]:
    """One row per user message of the second session on: ``state`` (message, recent turns, the
    labelled kind), ``needs``, ``notes`` and ``passages`` (Items, as recall finds them),
    ``keys`` (each fact's keys, by its pointer), ``conveys`` (the texts among them that convey
    every fact the message needs, or one of
    several), ``unclear`` (lines of a needed fact's exchange that lost its evidence: neither)
    and ``turns`` (the session so far)."""
    evidence = {fid: [e.lower() for e in fact["evidence"]] for fid, fact in loop["facts"].items()}
    source = {fid: (fact["session"], fact["exchange"]) for fid, fact in loop["facts"].items()}
    keeper = LabelledKeep(decider)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="memsift-build-") as tmp:
        config = Config(home=Path(tmp))
        notebook = NotesFile(Path(tmp) / "notes.md")
        store = SQLiteStore(Path(tmp) / "store.sqlite")
        services = Services(decider=keeper, notebook=notebook, redactor=PatternRedactor(),
                            reviser=DuplicateReviser(), config=config)
        written: dict[str, tuple[str, int]] = {}  # a line's pointer -> (session, exchange) it came from
        turns: list[Turn] = []
        last_session = ""
        number = 0
        for index, session, user, answer in exchanges(loop):
            if session != last_session:
                turns, last_session, number = [], session, 0
            if index:
                message = Message(user["text"], tuple(turns), session)
                notes = notebook.items()
                passages = store.search(search_query(message), limit=SEARCH_LIMIT, timeout=60)
                needs = list(user.get("needs", []))
                rows.append({
                    "state": {"message": user["text"], "kind": user["kind"],
                              "conversation": [{"role": t.role, "text": t.text} for t in turns[-RECENT_TURNS:]]},
                    "needs": needs, "need_kind": user.get("need_kind"),
                    "notes": notes, "keys": notebook.keys(), "passages": passages,
                    "turns": [t.text for t in turns],
                    "conveys": {i.text for i in (*notes, *passages) if _conveys(i.text, needs, evidence)},
                    "unclear": {i.text for i in (*notes, *passages)
                                if any(written.get(_pointer(i.text)) == source[f] for f in needs)
                                and not _conveys(i.text, needs, evidence)},
                })
            keeper.category = answer["category"]
            exchange = Exchange(user["text"], answer["text"], session)
            result = retain(exchange, services)
            if result.keep and result.lines:
                pointer = _pointer(result.lines[0])
                written[pointer] = (session, number)
                store.add([Item(pointer, result.lines[0], "passage", f"memsift:{answer['category']}")], timeout=60)
            turns += [Turn("user", user["text"]), Turn("assistant", answer["text"])]
            number += 1
        store.close()
    return rows


def _conveys(text: str, needs: list[str], evidence: Mapping[str, list[str]]) -> bool:
    low = text.lower()
    return any(any(phrase in low for phrase in evidence[f]) for f in needs)


def _pointer(line: str) -> str:
    """``ex-…`` from a note line's tail; '' when it has none."""
    tail = line.rstrip().rsplit(" ", 1)[-1]
    return tail.rstrip(")") if tail.startswith("ex-") else ""
