"""What the semantic judge's warm server costs a hook: whole processes, 20,000 notes, beside `python -c pass`.

Each case is a whole `UserPromptSubmit` hook process, with a Claude Code payload on stdin, under
a fresh HOME, on a project whose notes hold ``--notes`` generated notes (``notes_corpus.py``)
around the one that answers, timed beside `python -c pass` in the same run:

- a quiet message (the installed console script, as `memsift install` writes it);
- a searching message judged lexically (``MEMSIFT_JUDGE=lexical``): the searching path as it is without the extra;
- a searching message with the model server warm: the message and the narrowed notes embedded
  through it, the notes' vectors read from the cache (computed first, as retain writes them);
- a searching message with no server running (the hook starts one, and does not wait for it),
  timed apart: after each run the server it started is stopped, once it answers, before the
  next case runs, so its loading does not weigh on the others.

Until the semantic judge lands, the searching cases run the hook with a stand-in for it (a
decider that makes the judge's one ``embed`` call, the message and every note it judges, then
answers lexically), so the server's cost is paid as it will be. Each searching run sends a new
message (a number at its end), as a user does: a message's own vector is never cached already.
Prints the median, p95 and CPU median of each case, and the server's resident memory.

    $ .venv/bin/python benchmarks/bench_serve.py --runs 30

By default the hooks run from a wheel of this checkout installed with the ``[semantic]`` extra
into a venv under ``.cache/bench-serve/``; ``--python PATH`` times that interpreter's install.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_hook import (FLOOR, NOTE, QUIET, ROOT, SEARCHING, claude_transcript, fresh_user, installed_wheel, prompt,
                        seed, table)
from notes_corpus import generated_notes

VENV = ROOT / ".cache" / "bench-serve"
# The hook, with a decider that makes the semantic judge's embed call before answering lexically.
JUDGE_STAND_IN = '''
import sys
from attrs import evolve
import memsift.services as services

opened = services.open_services

class Embedding:
    def __init__(self, inner, embedder):
        self.inner, self.embedder, self.name = inner, embedder, inner.name
        self.remote = getattr(inner, "remote", True)

    def decide(self, state, questions):
        items = [q.instructions["item"] for q in questions.values() if q.task == "answers"]
        if items and self.embedder is not None:
            self.embedder.embed([state.get("message", ""), *items])
        return self.inner.decide(state, questions)

def open_services(*args, **kwargs):
    opened_services = opened(*args, **kwargs)
    return evolve(opened_services, decider=Embedding(opened_services.decider, opened_services.embedder))

services.open_services = open_services
from memsift_adapters.hook import main
sys.exit(main(sys.argv[1:]))
'''

# The vectors retain would have written of the notes the searching messages meet (seeded notes have none).
PREFILL = '''
import json, sys
from memsift.config import load_config
from memsift.notes import NotesFile
from memsift.semantic._vectors import VectorCache
from memsift.semantic.embedder import CachedEmbedder, InProcessEmbedder

config = load_config()
folder = config.project_dir(sys.argv[1])
notes = NotesFile(folder / "notes.md")
texts = {item.text for message in json.load(sys.stdin)
         for item in notes.candidates(message, limit=config.narrowed_notes, above=config.narrow_notes_above)}
CachedEmbedder(InProcessEmbedder(), VectorCache(folder / "vectors.sqlite")).embed(sorted(texts))
'''

Case = Callable[[int], tuple[list[str], bytes, dict[str, str]]]  # run number -> command, stdin, environment


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs of each case (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured runs of each case first")
    parser.add_argument("--notes", type=int, default=20_000, help="notes in the project (default 20000)")
    parser.add_argument("--python", type=Path, help="an interpreter with memsift[semantic] installed")
    args = parser.parse_args(argv)

    python = args.python or installed_wheel(VENV, extras="semantic")
    with tempfile.TemporaryDirectory(prefix="memsift-bench-serve-") as tmp:
        project, env = fresh_user(tmp)
        notes = generated_notes(args.notes)
        seed(python, project, env, [*notes[: args.notes // 2], NOTE, *notes[args.notes // 2:]])
        transcript = claude_transcript(Path(tmp, "session.jsonl"), project)
        home = Path(env["HOME"], ".local", "share", "memsift")
        lexical = {**env, "MEMSIFT_JUDGE": "lexical"}

        # A message of its own for every run of every case: a hook sent the same prompt twice in a
        # session answers it once (the second is the agent's retry), and would time nothing.
        runs = args.warmup + args.runs + 1
        cases_searching = ("lexical", "warm", "cold", "cold lexical")
        messages = {case: [f"{SEARCHING} ({case} {n})" for n in range(runs)] for case in cases_searching}
        subprocess.run([str(python), "-c", PREFILL, str(project)],
                       input=json.dumps([m for ms in messages.values() for m in ms]).encode(), env=env, check=True)

        def searching(environ: dict[str, str], case: str) -> Case:
            command = [str(python), "-c", JUDGE_STAND_IN, "claude-code", "UserPromptSubmit"]
            return lambda n: (command, prompt(project, messages[case][n % runs], transcript), environ)

        quiet_command = [str(python), str(python.parent / "memsift"), "hook", "claude-code", "UserPromptSubmit"]
        floor: Case = lambda n: ([str(python), "-c", "pass"], b"", env)  # noqa: E731
        cases: dict[str, Case] = {
            FLOOR: floor,
            "quiet message": lambda n: (quiet_command, prompt(project, QUIET, transcript), env),
            "searching, lexical": searching(lexical, "lexical"),
            "searching, server warm": searching(env, "warm"),
        }
        try:
            server(python, env, home, "start")
            check(cases, project)
            times = measure(cases, project, args.runs, args.warmup)
            rss = server(python, env, home, "status")["rss_bytes"]
            server(python, env, home, "stop")
            cold = {FLOOR: floor, "searching, no server": searching(env, "cold"),
                    "searching, lexical": searching(lexical, "cold lexical")}
            paced = measure(cold, project, max(5, args.runs // 3), 1,
                            after=lambda name: server(python, env, home, "stop") if "no server" in name else None)
        finally:  # no server outlives its temporary home
            server(python, env, home, "stop")
    print(f"{python} ({'--python' if args.python else 'installed from a wheel of this checkout, [semantic]'}); "
          f"{args.notes} notes")
    print(table(times))
    print(f"\nthe model server's resident memory: {rss / 2**20:.0f} MB")
    print("\nNo server running, timed apart (the server each run starts is stopped before the next case):")
    print(table(paced))
    return 0


SERVER = '''
import json, sys, time
from pathlib import Path
from memsift.semantic import _serve

home, action = Path(sys.argv[1]), sys.argv[2]
if action == "start":
    _serve.start_detached(home)
told, deadline = _serve.status(home, timeout=10), time.monotonic() + 120
# One on its way (its starter's marker made, or its lock taken): wait until it answers.
while told is None and action != "status" and time.monotonic() < deadline and (
        _serve.lock_held(home) or (_serve.serve_dir(home) / _serve.STARTING).exists()):
    time.sleep(0.05)
    told = _serve.status(home, timeout=10)
if action == "stop" and told is not None:
    _serve.stop(home)
print(json.dumps(told))
'''


def server(python: Path, env: dict[str, str], home: Path, action: str) -> dict[str, object]:
    """``start`` the server and wait until it answers; its ``status``; or ``stop`` the one running or
    starting, once it answers. What it said of itself (empty: none was there)."""
    done = subprocess.run([str(python), "-c", SERVER, str(home), action], env=env, capture_output=True, check=True)
    told = json.loads(done.stdout)
    if action != "stop" and not told:
        log = home / "serve" / "serve.log"
        sys.exit(f"bench_serve: the model server did not answer ({action}): {done.stderr.decode()}"
                 f"{log.read_text()[-2000:] if log.exists() else '(no serve.log)'}")
    return told or {}


def check(cases: dict[str, Case], cwd: Path) -> None:
    """Quiet adds nothing, searching adds the note, the server answers: or the figures mean nothing."""
    for name, case in cases.items():
        command, stdin, environ = case(0)
        out = subprocess.run(command, input=stdin, capture_output=True, env=environ, cwd=cwd)
        if (name.startswith("quiet") and (out.stdout or out.stderr)) or (
                name.startswith("searching") and b"Stripe" not in out.stdout):
            sys.exit(f"bench_serve: {name} did not behave as expected: {out}")


def measure(cases: dict[str, Case], cwd: Path, runs: int, warmup: int,
            after: Callable[[str], object] = lambda name: None) -> dict[str, tuple[list[float], list[float]]]:
    """Wall and CPU (user + system) seconds of each run, the cases taking turns."""
    import resource

    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in cases}
    for number in range(warmup + runs):
        for name, case in cases.items():
            command, stdin, environ = case(number + 1)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(command, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=environ, cwd=cwd)
            wall = time.perf_counter() - t0
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            if number >= warmup:
                times[name][0].append(wall)
                times[name][1].append(used.ru_utime - before.ru_utime + used.ru_stime - before.ru_stime)
            after(name)
    return times


if __name__ == "__main__":
    os.environ.pop("MEMSIFT_HOME", None)
    sys.exit(main())
