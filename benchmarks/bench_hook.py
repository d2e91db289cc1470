"""What the prompt hook costs an agent: whole processes, as the agent starts them.

Runs, interleaved and in the same run, N times each: ``python -c pass`` (the
floor: an interpreter that starts and stops), the same recall the hook runs
with no adapter around it, the UserPromptSubmit hook on a quiet message, and
the hook on a searching message that a seeded note answers. Prints the median
and p95 wall time and the median CPU time of each.

    $ .venv/bin/python benchmarks/bench_hook.py --runs 60

(docs/agents.md quotes a run and how to read it.)

The hook runs as adapters/claude-code/hooks.json has it: this interpreter,
adapters/hook.py by path, the payload on stdin, in a fresh memsift home. The
bytecode cache is on for the runs (PYTHONDONTWRITEBYTECODE is dropped), as in
any installed copy; the first runs, which write it, are the warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "adapters" / "hook.py"
NOTE = ("Payments: Stripe over Mollie because Mollie's webhooks dropped events under load; "
        "Stripe has an official v2 provider.")
QUIET = "thanks, that works!"
SEARCHING = "why did we pick Stripe over Mollie for payments?"
# The quiet message's recall with no adapter around it: what the library alone costs.
LIBRARY = ("import sys; from memsift.config import load_config; from memsift.pipeline import recall;"
           "from memsift.services import open_services; from memsift.types import Message;"
           f"recall(Message({QUIET!r}), open_services(load_config(), sys.argv[1]))")

Case = tuple[list[str], bytes, Path]  # command, stdin, working directory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="runs of each case (default 100)")
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured runs of each case first")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="memsift-bench-hook-") as tmp:
        home, project = Path(tmp, "home"), Path(tmp, "shop")
        project.mkdir()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("MEMSIFT_") and k != "PYTHONDONTWRITEBYTECODE"}
        env["MEMSIFT_HOME"] = str(home)
        seed(home, project, env)
        hook = [sys.executable, str(HOOK), "claude", "prompt"]
        cases: dict[str, Case] = {
            "python -c pass": ([sys.executable, "-c", "pass"], b"", project),
            "recall alone, quiet message": ([sys.executable, "-c", LIBRARY, str(project)], b"", ROOT),
            "hook, quiet message": (hook, payload(project, QUIET), project),
            "hook, searching message": (hook, payload(project, SEARCHING), project),
        }
        check(cases, env)
        times = measure(cases, env, args.runs, args.warmup)
    print(table(times, args.runs))
    return 0


def seed(home: Path, project: Path, env: dict[str, str]) -> None:
    """One note, where the hook will look for it (in a child: this process stays light)."""
    code = ("import sys; from memsift.config import load_config; from memsift.notes import NotesFile;"
            "NotesFile(load_config().project_dir(sys.argv[1]) / 'notes.md').append([sys.argv[2]])")
    subprocess.run([sys.executable, "-c", code, str(project), NOTE], env=env, cwd=ROOT, check=True)


def payload(project: Path, prompt: str) -> bytes:
    return json.dumps({"session_id": "", "transcript_path": None, "cwd": str(project),
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt}).encode()


def check(cases: dict[str, Case], env: dict[str, str]) -> None:
    """The quiet message must add nothing and the searching one the note, or the figures mean nothing."""
    outputs = {name: subprocess.run(cmd, input=stdin, capture_output=True, env=env, cwd=cwd).stdout
               for name, (cmd, stdin, cwd) in cases.items()}
    if outputs["hook, quiet message"] or b"Stripe" not in outputs["hook, searching message"]:
        sys.exit(f"bench_hook: the hook did not behave as expected: {outputs}")


def measure(cases: dict[str, Case], env: dict[str, str], runs: int,
            warmup: int) -> dict[str, tuple[list[float], list[float]]]:
    """Wall and CPU (user + system) seconds of each run.

    The cases take turns, so a busy moment hits them alike; the CPU time is
    what the process itself spent, which other work on the machine barely moves.
    """
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in cases}
    for number in range(warmup + runs):
        for name, (cmd, stdin, cwd) in cases.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=env, cwd=cwd)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if number >= warmup:
                times[name][0].append(wall)
                times[name][1].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times


def table(times: dict[str, tuple[list[float], list[float]]], runs: int) -> str:
    floor = statistics.median(times["python -c pass"][0])
    rows = [f"{'case':<28} {'median':>9} {'p95':>9} {'cpu median':>11}  {'median over python -c pass':>27}",
            f"{'':<28} {'(wall)':>9} {'(wall)':>9} {'(user+sys)':>11}  {f'({runs} runs each)':>27}"]
    for name, (wall, cpu) in times.items():
        median = statistics.median(wall)
        over = "" if name == "python -c pass" else f"+{(median - floor) * 1000:.1f} ms"
        rows.append(f"{name:<28} {ms(median):>9} {ms(percentile(wall, 0.95)):>9} "
                    f"{ms(statistics.median(cpu)):>11}  {over:>27}")
    return "\n".join(rows)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


if __name__ == "__main__":
    sys.exit(main())
