"""A judge's thresholds, picked by replaying recall on the corpus, for the builds.

Every message of the corpus as recall meets it: the hand-written
scenarios' notes and the store's closest of their archive; the loops'
memory as memsift wrote it before each message (``loop_memory``). A row
holds what recall weighs: the classified kind and the gate, and for each
candidate (a note, a passage) its features, whether it answers, whether the
conversation already says it. A build puts each candidate's logit in ``z``;
``pick_thresholds`` then finds, per source (notes, store), the pair of
thresholds that finds the most needed items while at most ``NOISE`` of the
messages needing nothing get something, replaying the stages' decisions
(notes ranked first and judged, settled, gate, the best item only, dedupe's
"already said").

Shared by ``build_weights.py`` (the lexical judge) and ``build_semantic.py``.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from loop_memory import replay

from memsift._notes.lines import tail_of
from memsift._words.text import stems
from memsift.config import Config
from memsift.decider._heads import logit
from memsift.semantic.judge import sigmoid
from memsift.stages._rank import ranked
from memsift.stages.path import RECENT_TURNS, _side
from memsift.stages.recall import KIND_OPTIONS, already_said, search_query, source_of
from memsift.stores.sqlite import SQLiteStore
from memsift.types import Choice, Decider, Item, Kind, Message, Noul, NoulAnswer, Turn

NOISE = 0.05  # at most this share of the messages needing nothing get something
GRID = [round(0.05 + 0.02 * i, 2) for i in range(48)]  # candidate thresholds, 0.05 to 0.99
DEFAULTS = Config(home=Path("/nonexistent"))  # the stages' default thresholds, as shipped
# An item's features, for each item of one message: (state with its kind, items) -> vectors.
PairFeatures = Callable[[Mapping[str, Any], Sequence[Item]], list[list[float]]]


def messages(scenario: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each user message of a hand-written scenario with the state a decider reads, its needs and turns."""
    out, turns = [], []
    for turn in scenario["conversation"]:
        if turn["role"] == "user":
            recent = [{"role": t["role"], "text": t["text"]} for t in turns[-RECENT_TURNS:]]
            out.append({"state": {"message": turn["text"], "conversation": recent},
                        "needs": set(turn.get("needs", [])), "turns": [t["text"] for t in turns]})
        turns.append(turn)
    return out


def scenario_rows(scenario: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A hand-written scenario's messages: its notes, the store's closest of its archive; an item
    answers when the message names it in its needs."""
    memory = scenario["memory"]
    notes = [Item(m["id"], m["text"], "note", "notes") for m in memory["notes"]]
    archive = [Item(m["id"], m["text"], "passage", "archive") for m in memory["archive"]]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "store.sqlite")
        store.add(archive, timeout=60)
        for message in messages(scenario):
            found = store.search(query_of(message["state"]), limit=DEFAULTS.search_limit, timeout=60)
            rows.append({**message, "notes": notes, "passages": found, "unclear": set(),
                         "answers": {item.text for item in (*notes, *found) if item.id in message["needs"]}})
        store.close()
    return rows


def loop_rows(loop: Mapping[str, Any], decider: Decider) -> list[dict[str, Any]]:
    """A loop's later messages against the memory memsift wrote before each."""
    return as_recalled(replay(loop, decider))


def as_recalled(replayed: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Replayed loop rows as recall meets them: the labelled kind left out (recall classifies)."""
    return [{**row, "state": {k: v for k, v in row["state"].items() if k != "kind"}, "answers": row["conveys"]}
            for row in replayed]


def query_of(state: Mapping[str, Any]) -> str:
    turns = tuple(Turn(t["role"], t["text"]) for t in state["conversation"])
    return search_query(Message(state["message"], turns))


def judged(row: Mapping[str, Any], decider: Decider, features: PairFeatures) -> dict[str, Any]:
    """What recall would weigh of one message: its kind, the gate, and each candidate's features,
    whether it answers and whether the conversation already says it. A line of a needed fact's
    exchange that lost the fact's evidence is left out: neither an answer nor a stranger."""
    state = row["state"]
    kind_answer = decider.decide(state, {"k": Choice("kind", "", KIND_OPTIONS)})["k"]
    _, searches, kind = _side(kind_answer, Kind, lambda k: k.searches, DEFAULTS.search_threshold)
    state = {**state, "kind": kind.value}
    worth = decider.decide(state, {"w": Noul("worth", "")})["w"]
    assert isinstance(worth, NoulAnswer)
    said = [stems(t) for t in row["turns"]]

    def pairs(items: Sequence[Item]) -> list[dict[str, Any]]:
        items = [item for item in items if item.text not in row["unclear"]]
        return [{"x": x, "y": item.text in row["answers"], "source": source_of(item),
                 "said": already_said(item.text, said, DEFAULTS.said_share)}
                for item, x in zip(items, features(state, items), strict=True)]

    # The notes recall judges: those ranked first for the message (BM25 over each fact and its keys);
    # and the store's passages but the copies of facts the notes hold, which were ranked with them.
    notes = ranked(query_of(row["state"]), row["notes"], row.get("keys", {}))[: DEFAULTS.judged_notes]
    noted = {tail[2] for item in row["notes"] if (tail := tail_of(item.text))}
    passages = [item for item in row["passages"] if item.id not in noted]
    return {"needs": bool(row["needs"]), "searches": searches, "asks": kind.asks_memory,
            "worth": worth.noul >= DEFAULTS.worth_threshold, "notes": pairs(notes),
            "passages": pairs(passages)}


def placed(z: float, threshold: float, bar: float) -> float:
    """A logit z as the stages read it: its source's threshold placed at ``bar``."""
    return sigmoid(z - logit(threshold) + logit(bar))


def tops(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What of each searching message the thresholds decide on: its two best notes and its best
    passage by logit ``z`` (recall ranks by score; of equals, the later item)."""
    out = []
    for row in rows:
        if not row["searches"]:
            continue
        ranked = {source: sorted(((p["z"], i, p) for i, p in enumerate(row[key])),
                                 key=lambda t: (t[0], t[1]), reverse=True)
                  for source, key in (("note", "notes"), ("passage", "passages"))}
        out.append({"needs": row["needs"], "asks": row["asks"], "worth": row["worth"],
                    "note": ranked["note"][:2], "passage": ranked["passage"][:1]})
    return out


def outcome(rows: Sequence[Mapping[str, Any]], thresholds: Mapping[str, float]) -> tuple[int, int]:
    """(found, added for nothing) over the searching messages, as recall's stages would decide."""
    found = noise = 0
    for row in rows:
        added = _added(row, thresholds)
        if added is not None:
            found += row["needs"] and added["y"]
            noise += not row["needs"]
    return found, noise


def _added(row: Mapping[str, Any], thresholds: Mapping[str, float]) -> Mapping[str, Any] | None:
    """The one item recall would add to this message, or None; each item at its source's threshold."""
    bar = DEFAULTS.answers_threshold
    need = DEFAULTS.asked_threshold if row["asks"] else DEFAULTS.answers_threshold
    notes = [(placed(z, thresholds[p["source"]], bar), p) for z, _, p in row["note"]]
    notes.sort(key=lambda t: t[0], reverse=True)
    chosen = notes[:1] if notes and notes[0][0] >= need else []
    settled = bool(chosen) and chosen[0][0] >= DEFAULTS.settled_threshold and \
        chosen[0][0] - (notes[1][0] if len(notes) > 1 else 0.0) >= DEFAULTS.settled_margin
    if not settled and row["worth"]:
        passages = ((placed(z, thresholds[p["source"]], bar), p) for z, _, p in row["passage"])
        chosen += [(s, p) for s, p in passages if s >= need]
    if not chosen:
        return None
    best = max(chosen, key=lambda t: t[0])[1]  # max_items is 1: the best item only; of equals, the note
    return None if best["said"] else best


def pick_thresholds(rows: Sequence[Mapping[str, Any]], sources: Sequence[str],
                    fixed: Mapping[str, float] | None = None, noise_share: float = NOISE) -> dict[str, Any]:
    """The thresholds of ``sources`` that find the most while at most ``noise_share`` of the messages
    needing nothing get something, any other source the rows hold at its ``fixed`` threshold; of
    equals, the least noise, then the higher thresholds."""
    quiet = sum(not row["needs"] for row in rows)  # every message needing nothing, searching or not
    needing = len(rows) - quiet
    searching = tops(rows)
    best: tuple[Any, ...] | None = None
    for values in itertools.product(GRID, repeat=len(sources)):
        found, noise = outcome(searching, {**(fixed or {}), **dict(zip(sources, values, strict=True))})
        key = (found, -noise, *values)
        if noise <= noise_share * quiet and (best is None or key > best):
            best = key
    assert best is not None
    return {**dict(zip(sources, best[2:], strict=True)),
            "on_the_corpus": {"found": best[0], "needing": needing, "noise": -best[1], "quiet": quiet}}
