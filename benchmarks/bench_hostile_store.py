"""What a hostile store costs the prompt hook: its peak memory and its time, against a real HTTP store on
127.0.0.1 that answers a search with 100 MB, never stops answering, or trickles a byte every 50 ms.

    $ .venv/bin/python benchmarks/bench_hostile_store.py [--runs 3] [--source DIR] [--deadline S]

Each run is the installed hook command (``memsift hook claude-code UserPromptSubmit``) as a fresh process
with a fresh home, a searching prompt and ``MEMSIFT_STORE=cognee`` pointed at the store
(``tests/hostile.py``). Its peak resident memory is the kernel's (``wait4``'s ``ru_maxrss``, as
``/usr/bin/time -v`` reads it), its time the wall clock's. ``--source DIR`` runs the memsift of another
source tree instead (``PYTHONPATH=DIR``: a checkout of an earlier commit, for the figures before);
``--deadline`` sets ``store_deadline`` (default: memsift's own, 12 s). Prints, per case, the median and
largest peak memory and the median time, and whether the hook said memory was paused.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]

from hostile import HostileStore, run_measured  # noqa: E402

PROMPT = "why did we pick Stripe over Mollie for payments?"
MEMSIFT = Path(sys.executable).parent / "memsift"
MB = 1024 * 1024


def run(mode: str, source: Path | None, deadline: float | None) -> tuple[float, float, bool]:
    """One hook against a fresh store of *mode*: (peak MB, seconds, whether it said memory was paused)."""
    with tempfile.TemporaryDirectory() as folder, HostileStore(mode) as store:
        home, project = Path(folder) / "home", Path(folder) / "shop"
        project.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSIFT_")}
        env.update(HOME=str(Path(folder) / "user"), MEMSIFT_HOME=str(home), MEMSIFT_STORE="cognee",
                   MEMSIFT_COGNEE_URL=store.url)
        if deadline is not None:
            env["MEMSIFT_STORE_DEADLINE"] = str(deadline)
        if source is not None:
            env["PYTHONPATH"] = str(source)
        payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                   "prompt": PROMPT, "prompt_id": f"p-{time.monotonic_ns()}"}
        started = time.monotonic()
        done = run_measured([sys.executable, str(MEMSIFT), "hook", "claude-code", "UserPromptSubmit"],
                            json.dumps(payload).encode(), env, project, timeout=600)
        took = time.monotonic() - started
    return done.peak_rss / MB, took, b"memory paused" in done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each case (default 3)")
    parser.add_argument("--source", type=Path, help="a memsift source tree to run instead (PYTHONPATH)")
    parser.add_argument("--deadline", type=float, help="store_deadline in seconds (default: memsift's, 12)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    report = {}
    for mode in ("huge", "endless", "trickle"):
        runs = [run(mode, args.source, args.deadline) for _ in range(args.runs)]
        report[mode] = {"peak_mb_median": statistics.median(r[0] for r in runs), "peak_mb_max": max(r[0] for r in runs),
                        "seconds_median": statistics.median(r[1] for r in runs),
                        "paused": sum(r[2] for r in runs), "runs": len(runs)}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{'store answer':<14} {'runs':>4} {'peak RSS median':>16} {'max':>8} {'time median':>12} {'paused':>7}")
    for mode, row in report.items():
        print(f"{mode:<14} {row['runs']:>4} {row['peak_mb_median']:>13.1f} MB {row['peak_mb_max']:>5.1f} MB "
              f"{row['seconds_median']:>10.2f} s {row['paused']:>4} of {row['runs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
