"""What a path's deadline and the runner's threads cost, in process: the library's side of issue 29.

Two measures, each over ``--runs`` calls on one ``Services`` (the embedded
stack, lexical judge, in a fresh home, a project of 100 notes):

- the runner: the median wall time of a quiet message, a searching one and a
  retain, and how many threads each call started. Run it on the code before
  and after, in one command, to compare (``PYTHONPATH`` pointing at a copy of
  the older tree);
- the margin: ``recall`` and ``arecall`` with ``deadline=D`` against a decider
  that never answers (a new one each call, so that none is refused for the
  calls already stuck in it): how long past D each call returned (median,
  p95, max), and how many threads they started (each call's stays stuck in
  its decider until released); then the same number of calls to one such
  decider (past ``Workers.STUCK`` stuck in it, a call fails at once and starts
  none). Skipped on code whose ``recall`` takes no
  deadline.

    $ .venv/bin/python benchmarks/bench_deadline.py --runs 200
    $ PYTHONPATH=/tmp/before .venv/bin/python benchmarks/bench_deadline.py --runs 200   # the code before
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

from bench_hook import hundred_notes  # noqa: E402

QUIET = "thanks, that works"
SEARCHING = "why did we pick Stripe over Mollie for payments?"

_started = 0
_real_start = threading.Thread.start


def _counted_start(self: threading.Thread) -> None:
    global _started
    _started += 1
    _real_start(self)


threading.Thread.start = _counted_start  # type: ignore[method-assign]


def timed(call: Callable[[], object], runs: int) -> tuple[float, float]:
    """(median seconds, threads started per call) over ``runs`` calls, after two to warm up."""
    for _ in range(2):
        call()
    before, times = _started, []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), (_started - before) / runs


class Hanging:
    remote = False

    def __init__(self, release: threading.Event, name: str = "hanging decider") -> None:
        self.release, self.name = release, name

    def decide(self, state: object, questions: object) -> dict[str, object]:
        self.release.wait(120)
        raise RuntimeError("too late")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp())
    os.environ["MEMSIFT_HOME"] = str(home)
    os.environ["MEMSIFT_JUDGE"] = "lexical"
    import memsift
    from attrs import evolve

    from memsift import Exchange, Message, load_config, open_services, recall, retain

    project = home / "shop"
    project.mkdir()
    services = open_services(load_config(), project)
    services.notebook.append(hundred_notes())
    print(f"memsift from {Path(memsift.__file__).parent}")
    print(f"{'case':<28}{'median':>12}{'threads/call':>14}")
    counter = iter(range(10**9))
    for case, call in [
        ("recall, quiet message", lambda: recall(Message(QUIET, session="q"), services)),
        ("recall, searching message", lambda: recall(Message(SEARCHING, session=f"s{next(counter)}"), services)),
        ("retain", lambda: retain(Exchange(f"which queue? ({next(counter)})", "RabbitMQ over Kafka: ops run it."),
                                  services)),
    ]:
        median, threads = timed(call, args.runs)
        print(f"{case:<28}{median * 1000:>9.2f} ms{threads:>14.1f}")

    if "deadline" not in inspect.signature(recall).parameters:
        print("(this recall takes no deadline: no margin to measure)")
        return 0
    release = threading.Event()
    print(f"\n{'deadline':<28}{'median over':>12}{'p95 over':>12}{'max over':>12}{'threads started':>17}")
    for label, deadline, asynchronous, one in [("recall 0.1 s", 0.1, False, False), ("recall 0.3 s", 0.3, False, False),
                                               ("arecall 0.3 s", 0.3, True, False),
                                               ("recall 0.1 s, one decider", 0.1, False, True)]:
        over, started = [], _started
        for i in range(args.runs // 4):
            hung = evolve(services, decider=Hanging(release, "hanging decider" if one else f"hanging decider {i}"))
            message = Message(f"{SEARCHING} ({i})")
            t0 = time.perf_counter()
            if asynchronous:
                asyncio.run(memsift.arecall(message, hung, deadline=deadline))
            else:
                recall(message, hung, deadline=deadline)
            over.append(time.perf_counter() - t0 - deadline)
        over.sort()
        print(f"{label:<28}{statistics.median(over) * 1000:>9.2f} ms{over[int(len(over) * 0.95)] * 1000:>9.2f} ms"
              f"{over[-1] * 1000:>9.2f} ms{_started - started:>17}")
        release.set()  # the stuck calls return: their threads go back to work, or end
        time.sleep(0.5)
        release.clear()
    release.set()
    services.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
