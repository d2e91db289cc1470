"""Does narrowing the notes lose the note that answers? The bench, with and without it.

Replays the scenarios with their notes mixed among ``--filler`` generated notes
(``notes_corpus.py``: the kind retain writes, a vocabulary that meets the
scenarios' words now and then), once judging every note and once narrowed to
each ``--narrowed`` count, all in the same run, and prints the bench's figures
for each: what narrowing changes, and what judging thousands of notes costs.

    $ .venv/bin/python benchmarks/bench_narrowing.py ../shared/eval/dev_*.json --filler 1000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attrs import evolve
from notes_corpus import generated_notes

from memsift.bench import bench_pipeline, load_scenario
from memsift.config import load_config
from memsift.types import Item


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="+", type=Path, metavar="SCENARIO")
    parser.add_argument("--filler", type=int, default=1000, help="generated notes mixed into each scenario's")
    parser.add_argument("--narrowed", type=int, nargs="+", default=[50, 20], help="notes judged once narrowed")
    parser.add_argument("--whole", action=argparse.BooleanOptionalAction, default=True,
                        help="also judge every note (slow past a few thousand notes)")
    args = parser.parse_args(argv)

    filler = generated_notes(args.filler)
    scenarios = []
    for path in args.scenarios:
        scenario = load_scenario(path)
        mixed = [Item(f"filler-{n}", text, "note", "notes") for n, text in enumerate(filler)]
        for n, note in enumerate(scenario.notes):  # spread through the file, not all at one end
            mixed.insert(n * len(mixed) // max(len(scenario.notes), 1), note)
        scenarios.append(evolve(scenario, notes=tuple(mixed)))
    # The deadline is the decider's own; judging every note of a big file may run past it.
    base = load_config({})
    settings = {"every note judged": evolve(base, narrow_notes_above=10**9)} if args.whole else {}
    settings.update({f"narrowed to {k}": evolve(base, narrow_notes_above=0, narrowed_notes=k) for k in args.narrowed})
    print(f"{len(args.scenarios)} scenarios, each with {args.filler} generated notes among its own")
    print(f"{'':<20} {'reminders found':>16} {'added for nothing':>18} {'items right':>12} {'wait mean':>10}")
    for name, config in settings.items():
        total = bench_pipeline("memsift", scenarios, config)["total"]
        print(f"{name:<20} {total['reminders_found']:>8} / {total['reminders_expected']:<5} "
              f"{total['added_for_nothing']:>9} / {total['no_need']:<6} "
              f"{total['items_needed_added']:>5} / {total['items_added']:<4} {total['wait_mean_s'] * 1000:>7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
