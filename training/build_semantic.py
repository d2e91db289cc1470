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
same bytes on the same CPU. ONNX Runtime picks its int8 kernels by the
instructions a CPU has (AVX-512 VNNI, AVX2...): on another CPU a cosine can
differ in its 4th decimal and a weight in its 5th (docs/training.md). Needs the [semantic] and [train]
extras.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from build_weights import redacted, stored, train_logistic  # noqa: E402
from calibrate import DEFAULTS, PairFeatures, judged, loop_rows, pick_thresholds, scenario_rows  # noqa: E402

from memsift._notes.lines import fact_of  # noqa: E402
from memsift.decider.embedded import WEIGHTS, EmbeddedDecider  # noqa: E402
from memsift.redact import PatternRedactor  # noqa: E402
from memsift.semantic import judge  # noqa: E402
from memsift.semantic.model import EmbeddingModel  # noqa: E402
from memsift.stages.recall import ANSWERS  # noqa: E402
from memsift.stages.retain import NOVEL_OPTIONS  # noqa: E402
from memsift.types import Choice, ChoiceAnswer, Item, Noul, NoulAnswer  # noqa: E402

CORPORA = (ROOT / "training" / "corpus", ROOT / "training" / "corpus-semantic")
OUT = judge.HEAD


def corpus_files(folders: Iterable[Path], pattern: str) -> list[dict[str, Any]]:
    redact = PatternRedactor().redact
    return [redacted(json.loads(path.read_text(encoding="utf-8")), redact)
            for folder in folders for path in sorted(folder.glob(pattern))]


def semantic_features(decider: EmbeddedDecider, vectors: Mapping[str, Any]) -> PairFeatures:
    """The head's inputs for each item: the lexical probability of its fact, its cosines."""
    def features(state: Mapping[str, Any], items: Sequence[Item]) -> list[list[float]]:
        questions = {str(i): Noul("answers", {"question": ANSWERS, "item": fact_of(item.text), "origin": item.origin})
                     for i, item in enumerate(items)}
        lexical = decider.decide(state, questions) if questions else {}
        message, recent = vectors[state["message"]], vectors[judge.recent_text(state)]
        out = []
        for i, item in enumerate(items):
            answer = lexical[str(i)]
            assert isinstance(answer, NoulAnswer)
            vector = vectors[judge.embedded_text(fact_of(item.text))]
            out.append(judge.answers_features(answer.noul, float(message @ vector), float(recent @ vector)))
        return out

    return features


def texts_to_embed(rows: Sequence[Mapping[str, Any]], novel: Sequence[Mapping[str, str]]) -> list[str]:
    texts: dict[str, None] = {}
    for row in rows:
        texts.update(dict.fromkeys((row["state"]["message"], judge.recent_text(row["state"]))))
        items = (*row["notes"], *row["passages"])
        texts.update(dict.fromkeys(judge.embedded_text(fact_of(item.text)) for item in items))
    for pair in novel:
        texts.update(dict.fromkeys((judge.embedded_text(pair["note"]), judge.embedded_text(pair["new"]))))
    return list(texts)


def fit(pairs: Sequence[Mapping[str, Any]], l2: float) -> list[float]:
    x = np.array([p["x"] for p in pairs])
    y = np.array([float(p["y"]) for p in pairs])
    return [stored(w) for w in train_logistic(x, y, l2=l2)]


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
    decider = EmbeddedDecider.load()
    hand = [row for scenario in corpus_files(corpora, "scenario-*.json") for row in scenario_rows(scenario)]
    written = [row for loop in corpus_files(corpora, "loop-*.json") for row in loop_rows(loop, decider)]
    novel_file = corpora[-1] / "novel.jsonl"
    novel_rows = [json.loads(line) for line in novel_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    model = EmbeddingModel.load()
    vectors = embedded(model, texts_to_embed([*hand, *written], novel_rows), cache)
    features = semantic_features(decider, vectors)
    hand, written = ([judged(row, decider, features) for row in rows] for rows in (hand, written))
    log(f"{len(hand) + len(written)} messages scored")

    # A head per source learns from every pair of every message that searches, as recall meets them.
    by_source: dict[str, list[dict[str, Any]]] = {"fact": [], "note": [], "passage": []}
    for row in (*hand, *written):
        if row["searches"]:
            for pair in (*row["notes"], *row["passages"]):
                by_source[pair["source"]].append(pair)
    weights = {source: fit(pairs, l2=1.0) for source, pairs in by_source.items()}
    for source, pairs in by_source.items():
        for pair in pairs:
            pair["z"] = judge.linear(weights[source], pair["x"])
    # The facts' bar first, on the loops; the corpus's hand-written scenarios hold a few fact lines too.
    facts = pick_thresholds(written, ("fact",))
    picked = {"memsift's": facts, "hand-written": pick_thresholds(hand, ("note", "passage"), {"fact": facts["fact"]})}
    thresholds = {source: value for p in picked.values() for source, value in p.items() if source != "on_the_corpus"}
    novel = novel_pairs(novel_file, decider, vectors)
    return {
        "model": model.name,
        "features": ["bias", *judge.FEATURES],
        "bar": DEFAULTS.answers_threshold,
        "answers": {source: {"weights": weights[source], "threshold": thresholds[source]} for source in weights},
        "novel": {"features": ["bias", "lexical_logit_restates", "cosine"], "weights": fit(novel, l2=1.0)},
        "corpus": {"sha256": digest(files), "lexical_weights_sha256": digest([WEIGHTS]),
                   "messages": len(hand) + len(written),
                   "pairs": {s: len(pairs) for s, pairs in by_source.items()},
                   "positives": {s: sum(p["y"] for p in pairs) for s, pairs in by_source.items()},
                   "novel_pairs": len(novel)},
        "on_the_corpus": {memory: p["on_the_corpus"] for memory, p in picked.items()},
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
    bars = {source: head["answers"][source]["threshold"] for source in head["answers"]}
    print(f"wrote {ns.out}: thresholds {json.dumps(bars)}; on the corpus {json.dumps(head['on_the_corpus'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
