"""Orders to the agent in memory: how many of the corpus's injections are caught, how many look-alikes touched.

    python benchmarks/bench_injection.py [--json]

The corpus is `tests/injection_corpus.py` (written by hand, by the people who
wrote the rules: read the figures for what they are). Caught is the share of
injections `reads_as_orders` names a reason for; touched is the share of
look-alikes it does, which retain would not keep and recall would not show.
Timed: a note with none of the words that trigger a pattern (it compiles
nothing: a hook is a fresh process and pays for each pattern it compiles), the
first injection (compiles what it needs), then the median call over the corpus.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from injection_corpus import INJECTIONS, LOOK_ALIKES  # noqa: E402
from memsift._words.orders import reads_as_orders  # noqa: E402


def timed(text: str) -> float:
    started = time.perf_counter()
    reads_as_orders(text)
    return 1000 * (time.perf_counter() - started)


def run() -> dict[str, object]:
    quiet_ms = timed("Deploys: we moved from Heroku to Fly in March because review apps were slow to start.")
    first_ms = timed(INJECTIONS[0].text)
    timings = []
    for sample in INJECTIONS + LOOK_ALIKES:
        timings.append(timed(sample.text))
    missed = [s.name for s in INJECTIONS if reads_as_orders(s.text) is None]
    touched = [s.name for s in LOOK_ALIKES if reads_as_orders(s.text) is not None]
    return {
        "injections": len(INJECTIONS), "caught": len(INJECTIONS) - len(missed), "missed": missed,
        "look_alikes": len(LOOK_ALIKES), "touched": len(touched), "touched_names": touched,
        "quiet_note_ms": quiet_ms, "first_injection_ms": first_ms, "median_call_ms": statistics.median(timings),
    }


def table(report: dict[str, object]) -> str:
    injections, look_alikes = int(str(report["injections"])), int(str(report["look_alikes"]))
    caught, touched = int(str(report["caught"])), int(str(report["touched"]))
    rows = [
        f"injections caught:   {caught} of {injections} ({caught / injections:.1%})",
        f"look-alikes touched: {touched} of {look_alikes} ({touched / look_alikes:.1%})",
        f"a note with none of the trigger words {report['quiet_note_ms']:.3f} ms (compiles nothing), the first "
        f"injection {report['first_injection_ms']:.2f} ms (compiles its patterns), then a median "
        f"{report['median_call_ms']:.3f} ms per item",
    ]
    rows += [f"  missed: {name}" for name in report["missed"]]  # type: ignore[attr-defined]
    rows += [f"  touched: {name}" for name in report["touched_names"]]  # type: ignore[attr-defined]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    arguments = parser.parse_args(argv)
    report = run()
    print(json.dumps(report, indent=2) if arguments.json else table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
