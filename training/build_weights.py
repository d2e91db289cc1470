"""Rebuild the embedded decider's weights from the corpus in training/corpus/.

    python training/build_weights.py                 # writes memsift/decider/model.bin
    python training/build_weights.py --out /tmp/m.bin

Deterministic: the same corpus gives the same bytes (full-batch training from
zero, fixed step counts, no randomness). Needs numpy (``pip install -e
'.[train]'``); memsift itself does not.

The corpus (written by us, never the evaluation scenarios):
- ``scenario-*.json``: whole sessions in the scenario format (docs/scenarios.md):
  every user message is a kind example, every (message, memory item) pair a
  judge example, every searching message a gate example, every ``retain``
  exchange a keep example;
- ``messages-*.jsonl``: more kind examples ``{"text", "kind", "previous"}``;
- ``retain-*.jsonl``: more keep examples ``{"user", "assistant", "keep", "category"}``;
- ``loop-*.json``: several sessions of one project (docs/training.md): every
  user message is a kind example and every exchange a keep example; replayed
  through the real retain path (``loop_memory.py``), every later message
  against every fact line memsift wrote before it is a judge example: the
  judge learns on the memory memsift writes, judged by its fact, as recall
  judges it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calibrate import (  # noqa: E402
    DEFAULTS, PairFeatures, judged, loop_rows, pick_thresholds, query_of,
)
from loop_memory import exchanges as loop_exchanges  # noqa: E402

from memsift._notes.lines import fact_of  # noqa: E402
from memsift.decider import _weights as weights  # noqa: E402
from memsift.decider.embedded import EmbeddedDecider, exchange_features  # noqa: E402
from memsift.decider._features import (  # noqa: E402
    BUCKETS, DF_BUCKETS, FACT_FEATURES, JUDGE_FEATURES, MessageView, df_bucket, fact_features, judge_features,
    make_idf, text_features,
)
from memsift.redact import PatternRedactor  # noqa: E402
from memsift.stages._excerpt import excerpt  # noqa: E402
from memsift.stages import RECENT_TURNS  # noqa: E402
from memsift._words.text import stems  # noqa: E402
from memsift.stages.retain import candidate_clauses  # noqa: E402
from memsift.types import Category, Exchange, Item, Kind  # noqa: E402

CORPUS = ROOT / "training" / "corpus"
KINDS = [k.value for k in Kind]
CATEGORIES = [c.value for c in Category]


TEXT_FIELDS = frozenset({"text", "user", "assistant"})  # what the build reads of a row


def redacted(value: Any, redact: Callable[[str], str]) -> Any:
    """The corpus as the model meets text at run time: secrets already replaced by placeholders."""
    if isinstance(value, dict):
        return {k: redact(v) if k in TEXT_FIELDS and isinstance(v, str) else redacted(v, redact)
                for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v, redact) for v in value]
    return value


def load_corpus(folder: Path) -> dict[str, list]:
    redact = PatternRedactor().redact
    kinds, worth, pairs, keeps, texts, scenarios = [], [], [], [], [], []

    def read(text: str) -> Any:
        return redacted(json.loads(text), redact)

    for path in sorted(folder.glob("scenario-*.json")):
        data = read(path.read_text(encoding="utf-8"))
        scenarios.append((path.name, data))
        memory = [(m["id"], m["text"], True) for m in data["memory"]["notes"]]
        memory += [(m["id"], m["text"], False) for m in data["memory"]["archive"]]
        texts += [text for _, text, _ in memory]
        turns: list[str] = []
        for turn in data["conversation"]:
            texts.append(turn["text"])
            if turn["role"] == "user":
                kinds.append((turn["text"], turn["kind"]))
                needs = set(turn.get("needs", []))
                if Kind(turn["kind"]).searches:
                    worth.append((turn["text"], bool(needs)))
                view = MessageView(turn["text"], turns[-RECENT_TURNS:])
                for item_id, text, is_note in memory:
                    pairs.append((path.name, view, judged_text(text, turn["text"]), turn["kind"], is_note,
                                  item_id in needs))
            turns.append(turn["text"])
        keeps += [(r["user"], r["assistant"], r["category"]) for r in data.get("retain", [])]
    for path in sorted(folder.glob("messages-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = read(line)
                kinds.append((row["text"], row["kind"]))
                texts.append(row["text"])
    for path in sorted(folder.glob("retain-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = read(line)
                keeps.append((row["user"], row["assistant"], row["category"]))
                texts += [row["user"], row["assistant"]]
    loops = [(path.name, read(path.read_text(encoding="utf-8"))) for path in sorted(folder.glob("loop-*.json"))]
    for _, loop in loops:
        # Their texts stay out of the document frequencies: the judge's rarity is the hand-written
        # corpus's it learnt on (with them, 3 fewer reminders found on the development scenarios).
        # An exchange answering what an earlier session said, and not kept, is left out too: what made it
        # not worth keeping may be that the notes already hold it, which only retain's novel stage sees.
        keeps += [(user["text"], answer["text"], answer["category"]) for _, _, user, answer in loop_exchanges(loop)
                  if not user.get("needs") or Category(answer["category"]).kept]
    return {"kinds": kinds, "worth": worth, "pairs": pairs, "keeps": keeps, "texts": texts, "loops": loops,
            "scenarios": scenarios}


def fact_clauses(loops: list[dict], idf: Callable[[str], float]) -> tuple[np.ndarray, np.ndarray]:
    """The fact question's examples: every candidate clause of every exchange a loop names a fact of,
    labelled by whether it holds one of the fact's evidence phrases (what any line conveying the
    fact must say)."""
    x, y = [], []
    for _, loop in loops:
        for fact in loop["facts"].values():
            session = next(s for s in loop["sessions"] if s["id"] == fact["session"])
            user, answer = session["turns"][2 * fact["exchange"]: 2 * fact["exchange"] + 2]
            evidence = [phrase.lower() for phrase in fact["evidence"]]
            for origin, position, clause in candidate_clauses(Exchange(user["text"], answer["text"])):
                x.append(fact_features(clause, user["text"], from_user=origin == "user", position=position, idf=idf))
                y.append(float(any(phrase in clause.lower() for phrase in evidence)))
    return np.array(x), np.array(y)


def lexical_features(idf: Callable[[str], float]) -> PairFeatures:
    """The judge's vector of each item against one message, as recall asks it (its fact, the kind
    classify gave)."""
    def features(state: Mapping[str, Any], items: Sequence[Item]) -> list[list[float]]:
        view = MessageView(state["message"], [t["text"] for t in state["conversation"]])
        return [judge_features(view, judged_text(item.text, query_of(state)), kind=KINDS.index(state["kind"]),
                               is_note=item.origin == "note", idf=idf) for item in items]

    return features


def scored(weights: np.ndarray, rows: Iterable[dict]) -> None:
    for row in rows:
        for pair in (*row["notes"], *row["passages"]):
            pair["z"] = float(np.dot(weights, pair["x"]))


def judged_text(item: str, message: str) -> str:
    """An item as recall judges it: a note line without its tail, a long passage by its best sentences."""
    return fact_of(excerpt(item, message))


def document_frequencies(texts: list[str]) -> array:
    df = [0] * DF_BUCKETS
    for text in texts:
        for s in stems(text):
            df[df_bucket(s)] = min(df[df_bucket(s)] + 1, 65535)
    return array("H", df)


def train_softmax(rows: list[dict[int, float]], labels: list[int], classes: int,
                  l2: float = 1e-4, steps: int = 400, rate: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial (or, with classes == 1, binary) logistic regression on hashed features.

    Full-batch Adam from zero: no randomness, so the same rows give the same weights.
    """
    indptr = np.cumsum([0] + [len(r) for r in rows])
    hashed = np.fromiter((i for r in rows for i in sorted(r)), dtype=np.int64)
    used, indices = np.unique(hashed, return_inverse=True)  # train only the buckets in use
    data = np.fromiter((r[i] for r in rows for i in sorted(r)), dtype=np.float64)
    row_of = np.repeat(np.arange(len(rows)), np.diff(indptr))
    # The gradient sums over examples per bucket: sort the entries by bucket once.
    order = np.argsort(indices, kind="stable")
    buckets, starts = np.unique(indices[order], return_index=True)
    n, k = len(rows), max(classes, 1)
    target = np.zeros((n, k))
    if classes == 1:
        target[:, 0] = labels
    else:
        target[np.arange(n), labels] = 1.0
    w = np.zeros((len(used), k))
    b = np.zeros(k)
    m_w, v_w, m_b, v_b = (np.zeros_like(w), np.zeros_like(w), np.zeros_like(b), np.zeros_like(b))
    for t in range(1, steps + 1):
        logits = np.add.reduceat(data[:, None] * w[indices], indptr[:-1]) + b
        if classes == 1:
            prob = 1.0 / (1.0 + np.exp(-logits))
        else:
            prob = np.exp(logits - logits.max(axis=1, keepdims=True))
            prob /= prob.sum(axis=1, keepdims=True)
        grad = (prob - target) / n
        g_w = l2 * w
        g_w[buckets] += np.add.reduceat((data[:, None] * grad[row_of])[order], starts)
        g_b = grad.sum(axis=0)
        for param, g, m, v in ((w, g_w, m_w, v_w), (b, g_b, m_b, v_b)):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            param -= rate * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    full = np.zeros((BUCKETS, k))
    full[used] = w
    return full, b


def train_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 30) -> np.ndarray:
    """Binary logistic regression by Newton's method (dense, small): deterministic and exact."""
    w = np.zeros(x.shape[1])
    reg = l2 * np.eye(x.shape[1])
    reg[0, 0] = 0.0  # the bias is not shrunk
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + reg @ w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + reg
        w -= np.linalg.solve(hessian, gradient)
    return w


# Every float the file stores is rounded to 6 decimals. The trained values
# differ between CPUs (numpy sums in a different order with or without AVX-512)
# by up to about 1e-10 relative: 6 decimals are far above that noise, and far
# below what matters (an int8 step is 1/127 of a head's largest weight).
DECIMALS = 6


def stored(value: float) -> float:
    """A float as the weights file keeps it: ``stored(0.04567312378189757) == 0.045673``."""
    return round(float(value), DECIMALS)


def quantize(w: np.ndarray) -> tuple[array, float]:
    scale = stored(float(np.abs(w).max()) / 127.0) or 1.0  # the scale the file stores is the one used
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return array("b", q.reshape(-1).tobytes()), scale


def head(rows, labels, classes: list[str], binary: bool = False, **kw) -> tuple[dict, array]:
    w, b = train_softmax(rows, labels, 1 if binary else len(classes), **kw)
    table, scale = quantize(w)
    return {"classes": classes, "bias": [stored(x) for x in b], "scale": scale}, table


def build(folder: Path) -> tuple[dict, dict[str, array], dict]:
    digest = hashlib.sha256()  # before reading the corpus: the hash names what was trained on
    for path in sorted(folder.iterdir()):
        digest.update(path.name.encode() + path.read_bytes())
    corpus = load_corpus(folder)
    df = document_frequencies(corpus["texts"])
    documents = len(corpus["texts"])
    idf = make_idf(df, documents)

    kind_head, kind_table = head([text_features(t) for t, _ in corpus["kinds"]],
                                 [KINDS.index(k) for _, k in corpus["kinds"]], KINDS)
    worth_head, worth_table = head([text_features(t) for t, _ in corpus["worth"]],
                                   [int(y) for _, y in corpus["worth"]], ["yes"], binary=True)
    keep_head, keep_table = head([exchange_features(u, a) for u, a, _ in corpus["keeps"]],
                                 [CATEGORIES.index(c) for _, _, c in corpus["keeps"]], CATEGORIES)

    # Strongly shrunk: a few hundred facts, and what makes a clause the fact must hold in any project.
    fact_x, fact_y = fact_clauses(corpus["loops"], idf)
    fact = train_logistic(fact_x, fact_y, l2=30.0)
    header = {
        "heads": {"kind": kind_head, "worth": worth_head, "keep": keep_head},
        "judge": {"features": list(JUDGE_FEATURES), "weights": [0.0] * len(JUDGE_FEATURES), "bar": 0.5,
                  "thresholds": dict.fromkeys(("fact", "note", "passage"), 0.5)},
        "fact": {"features": list(FACT_FEATURES), "weights": [stored(v) for v in fact]},
        "idf": {"documents": documents},
    }
    tables = {"kind": kind_table, "worth": worth_table, "keep": keep_table, "df": df}
    # The judge learns on the hand-written scenarios, whose notes and passages keep the bar they were
    # measured at on the development scenarios (``answers_threshold``). The facts memsift writes get
    # theirs by replaying recall on the loops, written with the heads just trained: memory the judge
    # never learnt on.
    pairs = corpus["pairs"]
    x = np.array([judge_features(view, item, kind=KINDS.index(kind), is_note=is_note, idf=idf)
                  for _, view, item, kind, is_note, _ in pairs])
    y = np.array([float(label) for *_, label in pairs])
    judge = train_logistic(x, y)
    decider = EmbeddedDecider(header, tables)
    features = lexical_features(idf)
    written = [judged(row, decider, features) for _, loop in corpus["loops"] for row in loop_rows(loop, decider)]
    scored(judge, written)
    picked = pick_thresholds(written, ("fact",))

    sizes = {"kind_examples": len(corpus["kinds"]), "worth_examples": len(corpus["worth"]),
             "judge_pairs": len(pairs), "judge_positives": int(y.sum()), "loops": len(corpus["loops"]),
             "loop_messages": len(written),
             "fact_clauses": len(fact_y), "fact_positives": int(fact_y.sum()),
             "keep_examples": len(corpus["keeps"]), "documents": documents}
    bar = DEFAULTS.answers_threshold
    header["judge"].update(weights=[stored(v) for v in judge], bar=bar,
                           thresholds={"fact": picked["fact"], "note": bar, "passage": bar},
                           on_the_loops=picked["on_the_corpus"])
    header["corpus"] = {"sha256": digest.hexdigest(), **sizes}
    return header, tables, sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--out", type=Path, default=ROOT / "memsift" / "decider" / "model.bin")
    ns = parser.parse_args()
    header, tables, sizes = build(ns.corpus)
    weights.save(ns.out, header, tables)
    print(f"wrote {ns.out} ({ns.out.stat().st_size:,} bytes) from {json.dumps(sizes)}; thresholds "
          f"{json.dumps(header['judge']['thresholds'])}, on the loops {json.dumps(header['judge']['on_the_loops'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
