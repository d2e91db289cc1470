"""Rebuild the semantic judge's head (memsift/semantic/head.json) from the corpus.

    python training/build_semantic.py                  # writes memsift/semantic/head.json
    python training/build_semantic.py --out /tmp/head.json

Reads the scenarios of training/corpus/ and training/corpus-semantic/ (fact
lines and whole exchanges written in other styles) and the ``novel`` pairs of
training/corpus-semantic/novel.jsonl: never the evaluation scenarios. Every
(message, item) pair is scored by the shipped lexical judge
(memsift/decider/model.bin) and by the packaged embedding model, then:
- a logistic head per source (notes, store) over the lexical logit, the
  cosine of message and item, and the cosine of the recent turns and item;
- a threshold per source: replaying each corpus message's recall as the stages
  do it (classify, notes, settled, gate, the store's five closest, the best
  item only, what the conversation already says), the pair of thresholds that
  finds the most needed items while at most 5 % of the messages needing
  nothing get something;
- the novel head: the lexical odds of "restates" and the two lines' cosine.

Deterministic: Newton's method from zero, cosines rounded to 4 decimals and
every stored float to 6, no randomness; the same corpus and model.bin give the
same bytes. Needs the [semantic] and [train] extras.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from build_weights import redacted, stored, train_logistic  # noqa: E402

from memsift._text import content_words, stem  # noqa: E402
from memsift.config import Config  # noqa: E402
from memsift.decider.embedded import WEIGHTS, EmbeddedDecider  # noqa: E402
from memsift.redact import PatternRedactor  # noqa: E402
from memsift.semantic import judge  # noqa: E402
from memsift.semantic.model import EmbeddingModel  # noqa: E402
from memsift.stages.path import RECENT_TURNS, _side  # noqa: E402
from memsift.stages.recall import ANSWERS, KIND_OPTIONS, already_said, search_query  # noqa: E402
from memsift.stages.retain import NOVEL_OPTIONS  # noqa: E402
from memsift.stores.sqlite import SQLiteStore  # noqa: E402
from memsift.types import Choice, ChoiceAnswer, Item, Kind, Noul, NoulAnswer  # noqa: E402

CORPORA = (ROOT / "training" / "corpus", ROOT / "training" / "corpus-semantic")
OUT = judge.HEAD
NOISE = 0.05  # at most this share of the messages needing nothing get something
GRID = [round(0.30 + 0.01 * i, 2) for i in range(70)]  # candidate thresholds, 0.30 to 0.99
DEFAULTS = Config(home=Path("/nonexistent"))  # the stages' default thresholds, as shipped


def scenarios(folders: Iterable[Path]) -> list[dict[str, Any]]:
    redact = PatternRedactor().redact
    return [redacted(json.loads(path.read_text(encoding="utf-8")), redact)
            for folder in folders for path in sorted(folder.glob("scenario-*.json"))]


def messages(scenario: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each user message with the state the decider reads (message, recent turns) and its needs."""
    out, turns = [], []
    for turn in scenario["conversation"]:
        if turn["role"] == "user":
            recent = [{"role": t["role"], "text": t["text"]} for t in turns[-RECENT_TURNS:]]
            out.append({"state": {"message": turn["text"], "conversation": recent},
                        "needs": set(turn.get("needs", [])), "turns": list(turns)})
        turns.append(turn)
    return out


class Scored:
    """Every message of one scenario with what recall would weigh: its kind, each candidate's
    lexical probability and cosines, whether the conversation already says it, the gate."""

    def __init__(self, scenario: Mapping[str, Any], decider: EmbeddedDecider, vectors: Mapping[str, Any]) -> None:
        memory = scenario["memory"]
        self.notes = [Item(m["id"], m["text"], "note", "notes") for m in memory["notes"]]
        archive = [Item(m["id"], m["text"], "passage", "archive") for m in memory["archive"]]
        self.rows: list[dict[str, Any]] = []
        with tempfile.TemporaryDirectory() as tmp:
            store = SQLiteStore(Path(tmp) / "store.sqlite")
            store.add(archive, timeout=60)
            for message in messages(scenario):
                self.rows.append(self._row(message, decider, vectors, store))
            store.close()

    def _row(self, message: dict[str, Any], decider: EmbeddedDecider, vectors: Mapping[str, Any],
             store: SQLiteStore) -> dict[str, Any]:
        state = message["state"]
        kind_answer = decider.decide(state, {"k": Choice("kind", "", KIND_OPTIONS)})["k"]
        _, searches, kind = _side(kind_answer, Kind, lambda k: k.searches, DEFAULTS.search_threshold)
        state = {**state, "kind": kind.value}
        worth = decider.decide(state, {"w": Noul("worth", "")})["w"]
        assert isinstance(worth, NoulAnswer)
        found = store.search(search_query_of(state), limit=DEFAULTS.search_limit, timeout=60)
        said = [{stem(w) for w in content_words(t["text"])} for t in message["turns"]]
        return {"needs": message["needs"], "searches": searches, "asks": kind.asks_memory,
                "worth": worth.noul >= DEFAULTS.worth_threshold,
                "notes": self._pairs(state, self.notes, decider, vectors, said, message["needs"]),
                "passages": self._pairs(state, found, decider, vectors, said, message["needs"])}

    @staticmethod
    def _pairs(state: Mapping[str, Any], items: Sequence[Item], decider: EmbeddedDecider,
               vectors: Mapping[str, Any], said: Sequence[set[str]], needs: set[str]) -> list[dict[str, Any]]:
        questions = {str(i): Noul("answers", {"question": ANSWERS, "item": item.text, "origin": item.origin})
                     for i, item in enumerate(items)}
        lexical = decider.decide(state, questions) if questions else {}
        message, recent = vectors[state["message"]], vectors[judge.recent_text(state)]
        pairs = []
        for i, item in enumerate(items):
            answer = lexical[str(i)]
            assert isinstance(answer, NoulAnswer)
            vector = vectors[judge.embedded_text(item.text)]
            pairs.append({"x": judge.answers_features(answer.noul, float(message @ vector), float(recent @ vector)),
                          "y": item.id in needs, "said": already_said(item.text, said, DEFAULTS.said_share)})
        return pairs


def search_query_of(state: Mapping[str, Any]) -> str:
    from memsift.types import Message, Turn

    turns = tuple(Turn(t["role"], t["text"]) for t in state["conversation"])
    return search_query(Message(state["message"], turns))


def texts_to_embed(data: Sequence[Mapping[str, Any]], novel: Sequence[Mapping[str, str]]) -> list[str]:
    texts: dict[str, None] = {}
    for scenario in data:
        for item in (*scenario["memory"]["notes"], *scenario["memory"]["archive"]):
            texts[judge.embedded_text(item["text"])] = None
        for message in messages(scenario):
            texts[message["state"]["message"]] = None
            texts[judge.recent_text(message["state"])] = None
    for pair in novel:
        texts.update(dict.fromkeys((judge.embedded_text(pair["note"]), judge.embedded_text(pair["new"]))))
    return list(texts)


def fit(pairs: Sequence[Mapping[str, Any]], l2: float) -> list[float]:
    x = np.array([p["x"] for p in pairs])
    y = np.array([float(p["y"]) for p in pairs])
    return [stored(w) for w in train_logistic(x, y, l2=l2)]


def placed(z: float, threshold: float, bar: float) -> float:
    """The head's logit z as the stages read it: its source's threshold placed at ``bar``."""
    return judge.sigmoid(z - judge.logit(threshold) + judge.logit(bar))


def tops(rows: Sequence[Mapping[str, Any]], weights: Mapping[str, list[float]]) -> list[dict[str, Any]]:
    """What of each searching message the thresholds decide on: its two best notes and its best
    passage by the head's logit (recall ranks by score; of equals, the later item)."""
    out = []
    for row in rows:
        if not row["searches"]:
            continue
        ranked = {source: sorted(((judge.linear(weights[source], p["x"]), i, p) for i, p in enumerate(row[key])),
                                 key=lambda t: (t[0], t[1]), reverse=True)
                  for source, key in (("note", "notes"), ("passage", "passages"))}
        out.append({"needs": bool(row["needs"]), "asks": row["asks"], "worth": row["worth"],
                    "note": ranked["note"][:2], "passage": ranked["passage"][:1]})
    return out


def replay(rows: Sequence[Mapping[str, Any]], thresholds: Mapping[str, float]) -> tuple[int, int]:
    """(found, added for nothing) over the searching messages, as recall's stages would decide."""
    found = noise = 0
    for row in rows:
        added = _added(row, thresholds)
        if added is not None:
            found += row["needs"] and added["y"]
            noise += not row["needs"]
    return found, noise


def _added(row: Mapping[str, Any], thresholds: Mapping[str, float]) -> Mapping[str, Any] | None:
    """The one item recall would add to this message, or None."""
    bar = DEFAULTS.answers_threshold
    need = DEFAULTS.asked_threshold if row["asks"] else DEFAULTS.answers_threshold
    notes = [(placed(z, thresholds["note"], bar), p) for z, _, p in row["note"]]
    chosen = notes[:1] if notes and notes[0][0] >= need else []
    settled = bool(chosen) and chosen[0][0] >= DEFAULTS.settled_threshold and \
        chosen[0][0] - (notes[1][0] if len(notes) > 1 else 0.0) >= DEFAULTS.settled_margin
    if not settled and row["worth"]:
        chosen += [(s, p) for s, p in ((placed(z, thresholds["passage"], bar), p) for z, _, p in row["passage"])
                   if s >= need]
    if not chosen:
        return None
    best = max(chosen, key=lambda t: t[0])[1]  # max_items is 1: the best item only; of equals, the note
    return None if best["said"] else best


def pick_thresholds(rows: Sequence[Mapping[str, Any]], weights: Mapping[str, list[float]]) -> dict[str, Any]:
    """The most found at most NOISE noise; of equals, the least noise, then the higher thresholds."""
    quiet = sum(not row["needs"] for row in rows)  # every message needing nothing, searching or not
    needing = len(rows) - quiet
    searching = tops(rows, weights)
    best: tuple[Any, ...] | None = None
    for note in GRID:
        for passage in GRID:
            found, noise = replay(searching, {"note": note, "passage": passage})
            key = (found, -noise, note, passage)
            if noise <= NOISE * quiet and (best is None or key > best):
                best = key
    assert best is not None
    return {"note": best[2], "passage": best[3], "found": best[0], "needing": needing, "noise": -best[1],
            "quiet": quiet}


def novel_pairs(path: Path, decider: EmbeddedDecider, vectors: Mapping[str, Any]) -> list[dict[str, Any]]:
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        question = Choice("novel", {"item": row["note"], "new": row["new"]}, NOVEL_OPTIONS)
        answer = decider.decide({}, {"q": question})["q"]
        assert isinstance(answer, ChoiceAnswer)
        cosine = float(vectors[judge.embedded_text(row["note"])] @ vectors[judge.embedded_text(row["new"])])
        pairs.append({"x": judge.novel_features(answer.probabilities["restates"], cosine),
                      "y": row["relation"] == "restates"})
    return pairs


def digest(paths: Iterable[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.name.encode() + path.read_bytes())
    return h.hexdigest()


def embedded(model: EmbeddingModel, texts: Sequence[str], cache: Path | None) -> dict[str, Any]:
    """text -> unit vector; with a cache file, only the texts it lacks are embedded (a rebuild after the
    lexical weights changed embeds nothing: the same vectors, in seconds)."""
    known: dict[str, Any] = {}
    if cache is not None and cache.is_file():
        with np.load(cache) as saved:
            if str(saved["model"]) == model.name:
                known = dict(zip(saved["texts"].tolist(), saved["vectors"], strict=True))
    # Sorted by length, a batch pads little; the same texts make the same batches, so the same vectors.
    missing = sorted((t for t in texts if t not in known), key=lambda t: (len(t), t))
    known.update(zip(missing, model.embed(missing), strict=True))
    log(f"{len(missing)} of {len(texts)} texts embedded")
    if cache is not None and missing:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, model=model.name, texts=np.array(list(known)), vectors=np.array(list(known.values())))
    return known


def build(corpora: Sequence[Path] = CORPORA, cache: Path | None = None) -> dict[str, Any]:
    files = sorted(p for folder in corpora for p in folder.iterdir() if p.is_file())
    data = scenarios(corpora)
    novel_file = corpora[-1] / "novel.jsonl"
    novel_rows = [json.loads(line) for line in novel_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    model = EmbeddingModel.load()
    texts = texts_to_embed(data, novel_rows)
    vectors = dict(zip(texts, model.embed(texts), strict=True))
    decider = EmbeddedDecider.load()
    log(f"{len(texts)} texts embedded")
    rows = [row for scenario in data for row in Scored(scenario, decider, vectors).rows]
    log(f"{len(rows)} messages scored")

    # The head learns from every pair of every message that searches, as recall meets them.
    by_source = {"note": [p for r in rows if r["searches"] for p in r["notes"]],
                 "passage": [p for r in rows if r["searches"] for p in r["passages"]]}
    weights = {source: fit(pairs, l2=1.0) for source, pairs in by_source.items()}
    picked = pick_thresholds(rows, weights)
    novel = novel_pairs(novel_file, decider, vectors)
    return {
        "model": model.name,
        "features": ["bias", *judge.FEATURES],
        "bar": DEFAULTS.answers_threshold,
        "answers": {source: {"weights": weights[source], "threshold": picked[source]} for source in weights},
        "novel": {"features": ["bias", "lexical_logit_restates", "cosine"], "weights": fit(novel, l2=1.0)},
        "corpus": {"sha256": digest(files), "lexical_weights_sha256": digest([WEIGHTS]),
                   "messages": len(rows), "note_pairs": len(by_source["note"]),
                   "passage_pairs": len(by_source["passage"]),
                   "positives": {s: sum(p["y"] for p in pairs) for s, pairs in by_source.items()},
                   "novel_pairs": len(novel)},
        "on_the_corpus": {k: picked[k] for k in ("found", "needing", "noise", "quiet")},
    }


def log(what: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {what}", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--cache", type=Path, help="a file keeping the corpus's vectors between builds")
    ns = parser.parse_args()
    head = build(cache=ns.cache)
    ns.out.write_text(json.dumps(head, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {ns.out}: thresholds note {head['answers']['note']['threshold']}, passage "
          f"{head['answers']['passage']['threshold']}; on the corpus {json.dumps(head['on_the_corpus'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
