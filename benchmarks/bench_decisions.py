"""What the decision log costs a hook: one ``record`` against a bare append, in the same run.

    python benchmarks/bench_decisions.py [--runs 2000]

``record`` turns a recall's result (a real one: a searching message that
added a note, five stages in its trace) into its JSON line and appends it to
``decisions.jsonl`` in a temporary home. The baseline appends an already
made line of the same size with ``open``/``write``/``close``: what any log
costs at the least. Both run in turns, interleaved, so a busy machine slows
both alike; the log is large enough that rotations happen during the run.
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memsift.config import load_config  # noqa: E402
from memsift._hooks.decisions import DecisionLog, decision  # noqa: E402
from memsift.pipeline import recall, retain  # noqa: E402
from memsift.services import open_services  # noqa: E402
from memsift.types import Exchange, Message  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        services = open_services(load_config({"MEMSIFT_HOME": str(home)}), home / "shop")
        retain(Exchange("Should we use Stripe or Mollie?", "Stripe: Mollie webhooks dropped events under "
                        "load in the Black Friday test, so we chose Stripe over Mollie."), services)
        result = recall(Message("why did we pick Stripe over Mollie again?"), services)
        log = DecisionLog(home / "log")
        line = (json.dumps(decision("codex", "UserPromptSubmit", "/src/shop", result)) + "\n").encode()
        bare = home / "bare.jsonl"
        timings: dict[str, list[float]] = {"bare append": [], "DecisionLog.record": []}
        for _ in range(args.runs):
            t0 = time.perf_counter()
            with open(bare, "ab") as out:
                out.write(line)
            t1 = time.perf_counter()
            log.record("codex", "UserPromptSubmit", "/src/shop", result, session="s1")
            t2 = time.perf_counter()
            timings["bare append"].append(t1 - t0)
            timings["DecisionLog.record"].append(t2 - t1)
        print(f"{len(result.trace)} stages in the trace, a line of {len(line)} bytes, {args.runs} runs each")
        print(f"{'case':<20} {'median':>10} {'p95':>10}")
        base = statistics.median(timings["bare append"])
        for name, values in timings.items():
            values.sort()
            median, p95 = statistics.median(values), values[int(len(values) * 0.95)]
            print(f"{name:<20} {median * 1e6:>7.1f} µs {p95 * 1e6:>7.1f} µs   x{median / base:.1f}")


if __name__ == "__main__":
    main()
