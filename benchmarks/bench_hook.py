"""What the prompt hook costs an agent: whole processes, as the agent starts them.

Runs, interleaved and in the same run, N times each: ``python -c pass`` (the
floor: an interpreter that starts and stops), the UserPromptSubmit hook on a
quiet message, and the hook on a searching message that a seeded note
answers. Prints the median and p95 wall time of each.

    $ .venv/bin/python benchmarks/bench_hook.py --runs 200
    case                                    median      p95   added by memsift
    python -c pass                           12.3 ms  ...

The hook runs as adapters/claude-code/hooks.json has it: this interpreter,
adapters/hook.py by path, the payload on stdin, in a fresh memsift home. The
bytecode cache is on for the runs (PYTHONDONTWRITEBYTECODE is dropped), as in
any installed copy; the first runs, which write it, are the warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
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
        cases = {
            "python -c pass": ([sys.executable, "-c", "pass"], b""),
            "hook, quiet message": (hook, payload(project, QUIET)),
            "hook, searching message": (hook, payload(project, SEARCHING)),
        }
        check(cases, env, project)
        times = measure(cases, env, project, args.runs, args.warmup)
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


def check(cases: dict[str, tuple[list[str], bytes]], env: dict[str, str], cwd: Path) -> None:
    """The quiet message must add nothing and the searching one the note, or the figures mean nothing."""
    outputs = {name: subprocess.run(cmd, input=stdin, capture_output=True, env=env, cwd=cwd).stdout
               for name, (cmd, stdin) in cases.items()}
    if outputs["hook, quiet message"] or b"Stripe" not in outputs["hook, searching message"]:
        sys.exit(f"bench_hook: the hook did not behave as expected: {outputs}")


def measure(cases: dict[str, tuple[list[str], bytes]], env: dict[str, str], cwd: Path,
            runs: int, warmup: int) -> dict[str, list[float]]:
    """Wall seconds of each run; the cases take turns, so a busy moment hits them alike."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for number in range(warmup + runs):
        for name, (cmd, stdin) in cases.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=env, cwd=cwd)
            if number >= warmup:
                times[name].append(time.perf_counter() - t0)
    return times


def table(times: dict[str, list[float]], runs: int) -> str:
    floor = statistics.median(times["python -c pass"])
    rows = [f"{'case':<26} {'median':>9} {'p95':>9}  {'over python -c pass':>20}   ({runs} runs each)"]
    for name, samples in times.items():
        median, p95 = statistics.median(samples), percentile(samples, 0.95)
        over = "" if name == "python -c pass" else f"+{(median - floor) * 1000:.1f} ms"
        rows.append(f"{name:<26} {median * 1000:>6.1f} ms {p95 * 1000:>6.1f} ms  {over:>20}")
    return "\n".join(rows)


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


if __name__ == "__main__":
    sys.exit(main())
