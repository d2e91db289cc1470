"""What oversized input costs the prompt hook: whole processes, against ``python -c pass``.

Issue 11's targets, on this machine: a 5 MB prompt under 300 ms, a 1 MB
pasted log with a question under 300 ms, and the p95 of a searching message
in a project of 100 notes under 150 ms. Runs, interleaved and in the same
run, N times each, the installed hook command as ``bench_hook`` runs it
(``memsift hook claude-code UserPromptSubmit``, a fresh HOME, a Claude Code
transcript), beside the bare interpreter:

- a 5 MB prompt: the redaction corpus (credentials and look-alikes) repeated,
  then the searching question below;
- a 1 MB log of distinct lines, then the same question;
- the searching question alone ("why did the worker fail again with the
  webhook timeout? we had this problem before").

``--big-notes`` adds issue 17's two (a searching prompt under 150 ms with
notes a user can have), in projects of their own, on "why did we pick Stripe
over Mollie for payments?": ``bench_hook``'s 100 notes and one line of
``--line-mb`` MB (the question's words repeated: the worst line to meet), and
``--lines`` generated notes (``notes_corpus.py``) with the one that answers
in the middle. Seeding them and building their notes index (as
retain leaves it after it wrote) takes minutes. Then it says whether the answering note was added,
and whether any of the long line was.

The project holds ``bench_hook``'s 100 notes and 2,000 stored passages. Every
case goes the whole path, the worst case: ``search_threshold`` and
``worth_threshold`` are 0, so the notes are judged and the store searched
even for a paste the model files as a complete instruction (as it files both
big inputs here).

    $ .venv/bin/python benchmarks/bench_bounds.py --runs 30 [--python PATH]
    $ .venv/bin/python benchmarks/bench_bounds.py --runs 20 --big-notes --python .venv/bin/python

Prints ``bench_hook``'s table: median and p95 wall time, median CPU time, and
each median over and against ``python -c pass``'s.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tests")]

from bench_hook import (  # noqa: E402
    FLOOR,
    NOTE,
    Case,
    claude_transcript,
    fresh_user,
    hundred_notes,
    installed_wheel,
    measure,
    prompt,
    seed,
    table,
)
from bench_hook import SEARCHING as STRIPE  # noqa: E402
from notes_corpus import generated_notes  # noqa: E402

SEARCHING = "why did the worker fail again with the webhook timeout? we had this problem before"
WORDS = "worker stripe mollie deploy cache heap docker postgres redis webhook queue retry timeout nginx celery".split()
MB = 1_000_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs of each case (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured runs of each case first")
    parser.add_argument("--python", type=Path, help="an interpreter with memsift installed (default: a wheel venv)")
    parser.add_argument("--big-notes", action="store_true", help="also a million notes, and one line of 50 MB")
    parser.add_argument("--lines", type=int, default=1_000_000, help="notes of the long file (default 1,000,000)")
    parser.add_argument("--line-mb", type=int, default=50, help="MB of the one long line (default 50)")
    args = parser.parse_args(argv)

    from bench_redact import mixed_text

    python = args.python or installed_wheel()
    hook = [str(python), str(python.parent / "memsift"), "hook", "claude-code", "UserPromptSubmit"]
    with tempfile.TemporaryDirectory(prefix="memsift-bench-bounds-") as tmp:
        project, env = fresh_user(tmp)
        env.update(MEMSIFT_SEARCH_THRESHOLD="0", MEMSIFT_WORTH_THRESHOLD="0")  # every case goes all the way
        seed(python, project, env, hundred_notes())
        store_passages(python, project, env)
        transcript = claude_transcript(Path(tmp, "session.jsonl"), project)
        big_prompt, pasted_log = mixed_text(5 * MB), log(MB)

        def asking(before: str, question: str = SEARCHING, where: Path = project) -> Case:
            """A case whose every run is a prompt of its own (its ``prompt_id``): a call repeated does nothing."""
            return lambda n: (hook, prompt(where, before + question, transcript, run=n), env)

        cases: dict[str, Case] = {
            FLOOR: lambda n: ([str(python), "-c", "pass"], b"", env),
            "5 MB prompt": asking(big_prompt + "\n\n"),
            "1 MB log + question": asking(pasted_log + "\n\n"),
            "searching, 100 notes": asking(""),
        }
        big = big_notes(python, Path(tmp), env, args.lines, args.line_mb) if args.big_notes else {}
        cases |= {name: asking("", STRIPE, where) for name, where in big.items()}
        added = {}  # before the timed runs, which are given the note in this session
        for name in big:
            command, stdin, environ = cases[name](0)
            added[name] = subprocess.run(command, input=stdin, capture_output=True, env=environ, cwd=project).stdout
        times = measure(cases, project, args.runs, args.warmup)
    print(f"{python} ({'--python' if args.python else 'installed from a wheel of this checkout'})")
    print(table(times))
    for name, out in added.items():
        print(f"{name}: the answering note {'added' if b'Mollie' in out else 'NOT added'}, "
              f"{'a piece of the long line ADDED' if LONG_WORDS.strip().encode() in out else 'none of the long line'}")
    return 0


LONG_WORDS = "stripe mollie payments webhook pick why "  # what the long line repeats: it meets every query


def big_notes(python: Path, tmp: Path, env: dict[str, str], lines: int, line_mb: int) -> dict[str, Path]:
    """Two projects: 100 notes and one long line; ``lines`` notes. Their cases' names and folders."""
    long_line, many = tmp / "long-line", tmp / "many"
    for project in (long_line, many):
        (project / ".git").mkdir(parents=True)
    size = line_mb * MB
    seed(python, long_line, env, [*hundred_notes(), (LONG_WORDS * (size // len(LONG_WORDS) + 1))[:size]])
    notes = generated_notes(lines)
    seed(python, many, env, [*notes[: lines // 2], NOTE, *notes[lines // 2:]])
    code = ("import sys; from memsift.config import load_config; from memsift._notes.index import NotesIndex\n"
            "for project in sys.argv[1:]:\n"
            "    with NotesIndex(load_config().project_dir(project) / 'notes.md') as index: index.sync()")
    time.sleep(2.1)  # indexed 2 s after the write: not "racy", or the first message has it read again
    subprocess.run([str(python), "-c", code, str(long_line), str(many)], env=env, check=True)  # as retain leaves it
    return {f"one {line_mb} MB line": long_line, f"{lines:,} notes": many}


def store_passages(python: Path, project: Path, env: dict[str, str]) -> None:
    """2,000 passages in the project's embedded store, in a child of that install."""
    code = f"""
import random, sys
from memsift.config import load_config
from memsift.stores.sqlite import SQLiteStore
from memsift.types import Item
rng, words = random.Random(2), {WORDS!r}
store = SQLiteStore(load_config().project_dir(sys.argv[1]) / "store.sqlite")
store.add([Item(f"p{{i}}", f"incident: {{' '.join(rng.sample(words, 5))}} code {{rng.randrange(600)}}", "passage", "x")
           for i in range(2000)], timeout=5)
store.close()
"""
    subprocess.run([str(python), "-c", code, str(project)], env=env, check=True)


def log(size: int) -> str:
    """Log lines, each with its own ids: every line adds distinct words."""
    rng = random.Random(1)
    lines, length = [], 0
    while length < size:
        line = (f"2026-11-30T10:{rng.randrange(60):02d}:{rng.randrange(60):02d} ERROR worker-{rng.randrange(1000)}"
                f" req={rng.getrandbits(64):x} user_{rng.randrange(10**6)} path=/api/items/{rng.randrange(10**7)}")
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines)[:size]


if __name__ == "__main__":
    sys.exit(main())
