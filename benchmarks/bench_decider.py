"""What one decision of the embedded decider costs, in process.

Times, over the messages and memory items of the example scenarios: loading
the weights, classifying one message (the kind), judging one item against one
message, and one keep decision. Prints the median and p95 of each, in
microseconds.

    $ .venv/bin/python benchmarks/bench_decider.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from memsift.decider.embedded import WEIGHTS, EmbeddedDecider
from memsift.stages import KEEP_OPTIONS, KIND_OPTIONS
from memsift.types import Choice, Noul

ROOT = Path(__file__).resolve().parents[1]


def timed(call: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        samples.append((time.perf_counter() - t0) * 1e6)
    return samples


def row(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return f"{name:<34}{statistics.median(samples):>10.1f}{p95:>10.1f}{len(samples):>8}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", nargs="*", type=Path,
                        default=sorted((ROOT / "benchmarks" / "scenarios").glob("*.json")))
    ns = parser.parse_args()
    messages, items, exchanges = [], [], []
    for path in ns.scenarios:
        data = json.loads(path.read_text(encoding="utf-8"))
        if "conversation" not in data:
            continue  # a loop of sessions (docs/scenarios.md): its messages are the other scenarios' kind
        messages += [t["text"] for t in data["conversation"] if t["role"] == "user"]
        items += [m["text"] for part in ("notes", "archive") for m in data["memory"][part]]
        exchanges += [(r["user"], r["assistant"]) for r in data["retain"]]

    decider = EmbeddedDecider.load()
    kind = {"k": Choice("kind", "", KIND_OPTIONS)}
    keep = {"k": Choice("keep", "", KEEP_OPTIONS)}
    load = timed(lambda: EmbeddedDecider.load(WEIGHTS), 50)
    classify = [s for m in messages for s in timed(lambda m=m: decider.decide({"message": m}, kind), 5)]
    judge = []
    for message in messages:
        state = {"message": message, "conversation": [], "kind": "past_choice"}
        for item in items[:20]:
            question = {"j": Noul("answers", {"item": item, "origin": "note"})}
            judge += timed(lambda s=state, q=question: decider.decide(s, q), 1)
    retain = [s for u, a in exchanges for s in timed(
        lambda u=u, a=a: decider.decide({"user": u, "assistant": a}, keep), 5)]

    print(f"{'decision':<34}{'median':>10}{'p95':>10}{'runs':>8}   (microseconds)")
    print(row("load the weights", load))
    print(row("classify one message", classify))
    print(row("judge one item", judge))
    print(row("keep one exchange", retain))


if __name__ == "__main__":
    main()
