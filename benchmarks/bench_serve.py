"""What the semantic judge's warm server costs a hook: whole processes, 20,000 notes, beside `python -c pass`.

Each case is a whole `UserPromptSubmit` hook process, with a Claude Code payload on stdin, under
a fresh HOME, on a project whose notes hold ``--notes`` generated notes (``notes_corpus.py``)
around the one that answers, timed beside `python -c pass` in the same run:

- a quiet message (the installed console script, as `memsift install` writes it);
- a searching message judged lexically (``MEMSIFT_JUDGE=lexical``): the searching path as it is without the extra;
- a searching message with the model server warm: recalled in the server (``memsift/_hooks/served.py``),
  the notes' vectors read from the cache (computed first, as retain writes them);
- a searching message with no server running (the hook starts one, and does not wait for it),
  timed apart: after each run the server it started is stopped, once it answers, before the
  next case runs, so its loading does not weigh on the others.

The searching cases run the installed hook with ``MEMSIFT_JUDGE`` set (the
semantic judge is off by default); every run is a call of its own (its
``prompt_id``, as ``bench_hook`` sends) and a new message (a number at its
end), as a user's is: a message's own vector is never cached already.
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
from pathlib import Path

from bench_hook import (CHECKED_RUNS, FLOOR, NOTE, QUIET, ROOT, SEARCHING, Case, check, claude_transcript, fresh_user,
                        installed_wheel, measure, prompt, seed, table)
from notes_corpus import generated_notes

VENV = ROOT / ".cache" / "bench-serve"
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
        lexical, semantic = ({**env, "MEMSIFT_JUDGE": judge} for judge in ("lexical", "semantic"))

        # A message of its own for every run of every case, as a user's: its vector is not in the cache.
        runs = len(CHECKED_RUNS) + args.warmup + args.runs
        cases_searching = ("lexical", "warm", "cold", "cold lexical")
        messages = {case: [f"{SEARCHING} ({case} {n})" for n in range(runs)] for case in cases_searching}
        subprocess.run([str(python), "-c", PREFILL, str(project)],
                       input=json.dumps([m for ms in messages.values() for m in ms]).encode(), env=env, check=True)

        hook = [str(python), str(python.parent / "memsift"), "hook", "claude-code", "UserPromptSubmit"]

        def searching(environ: dict[str, str], case: str) -> Case:
            return lambda n: (hook, prompt(project, messages[case][n % runs], transcript, run=n), environ)

        floor: Case = lambda n: ([str(python), "-c", "pass"], b"", env)  # noqa: E731
        cases: dict[str, Case] = {
            FLOOR: floor,
            "quiet message": lambda n: (hook, prompt(project, QUIET, transcript, run=n), semantic),
            "searching, lexical": searching(lexical, "lexical"),
            "searching, server warm": searching(semantic, "warm"),
        }
        try:
            server(python, env, home, "start")
            check(cases, project)
            times = measure(cases, project, args.runs, args.warmup)
            rss = server(python, env, home, "status")["rss_bytes"]
            server(python, env, home, "stop")
            cold = {FLOOR: floor, "searching, no server": searching(semantic, "cold"),
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


if __name__ == "__main__":
    os.environ.pop("MEMSIFT_HOME", None)
    sys.exit(main())
