"""What memsift's hooks cost an agent: the installed console command, whole processes.

Each case runs the command `memsift install` writes (this interpreter, the
`memsift` console script beside it, `hook AGENT EVENT`) with a payload shaped
like the agent's on stdin, under a fresh HOME, and is timed beside
`python -c pass` on the same interpreter, measured in the same run:

- UserPromptSubmit on a quiet message (Claude Code and Codex payloads);
- UserPromptSubmit on a searching message, the project holding 100 notes, one of which answers it;
- SessionStart with memory working, the session brief given: made anew (in the project the
  searching message is recalled in, so what recall gave changed since the last start), and
  remembered (a project of its own, as the detached Stop leaves it after each exchange);
- Stop, as the agent waits for it (the hook forks the retain off and returns).

``--notes 20000`` adds the two UserPromptSubmit cases and SessionStart again for a second
project whose notes hold that many generated notes (``notes_corpus.py``: the
kind retain writes) around the one that answers: what a long-lived
project's notes cost a message.

By default the hooks run from an installed wheel: the checkout is built into
a wheel and installed, with its dependencies, into a venv under
``.cache/bench-hook/`` (created once, the wheel reinstalled each run).
``--python PATH`` times the install that interpreter has instead.

    $ .venv/bin/python benchmarks/bench_hook.py --runs 60

Every run is a call of its own, as the agent makes it: a prompt with its own
``prompt_id`` (Codex: ``turn_id``), a SessionStart of a new session, a Stop
whose transcript has changed. A hook run twice for the same call does
nothing the second time (two routes may run it, `_hooks/once.py`), so a repeated
payload would time only that check. The cases take turns,
so a busy moment hits them alike; the bytecode cache is on (the warm-up runs
write it). Prints the median and p95 wall time, the
median CPU time (user + system, which load from other processes moves less)
and the ratio of each median to `python -c pass`'s. docs/agents.md quotes a run.
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
from collections.abc import Callable
from pathlib import Path

from notes_corpus import generated_notes

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".cache" / "bench-hook"
NOTE = ("decision: why Stripe over Mollie for payments? -> Mollie's webhooks dropped events under load; "
        "Stripe has an official v2 provider.")
QUIET = "thanks, that works!"
SEARCHING = "why did we pick Stripe over Mollie for payments?"
FLOOR = "python -c pass"

Case = Callable[[int], tuple[list[str], bytes, dict[str, str]]]  # run number -> command, stdin, environment


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60, help="runs of each case (default 60)")
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured runs of each case first")
    parser.add_argument("--python", type=Path, help="an interpreter with memsift installed (default: a wheel venv)")
    parser.add_argument("--notes", type=int, default=0,
                        help="also time UserPromptSubmit on a project with this many notes (e.g. 20000)")
    args = parser.parse_args(argv)

    python = args.python or installed_wheel()
    script = [str(python), str(python.parent / "memsift")]
    with tempfile.TemporaryDirectory(prefix="memsift-bench-hook-") as tmp:
        project, env = fresh_user(tmp)
        seed(python, project, env, hundred_notes())
        transcript = claude_transcript(Path(tmp, "session.jsonl"), project)

        def hook(agent: str, event: str, payload: Callable[[int], bytes]) -> Case:
            command = [*script, "hook", agent, event]
            return lambda n: (command, payload(n), env)

        def starting(notes: list[str], name: str) -> Case:
            """SessionStart in a project of its own: nothing changes what its brief follows from."""
            folder = Path(tmp, name)
            (folder / ".git").mkdir(parents=True)
            seed(python, folder, env, notes)
            return hook("claude-code", "SessionStart", lambda n: session_start(folder, transcript, run=n))

        floor: Case = lambda n: ([str(python), "-c", "pass"], b"", env)  # noqa: E731
        cases: dict[str, Case] = {
            FLOOR: floor,
            "quiet message, claude-code": hook("claude-code", "UserPromptSubmit",
                                               lambda n: prompt(project, QUIET, transcript, run=n)),
            "quiet message, codex": hook("codex", "UserPromptSubmit",
                                         lambda n: prompt(project, QUIET, None, codex=True, run=n)),
            "searching, 100 notes": hook("claude-code", "UserPromptSubmit",
                                         lambda n: prompt(project, SEARCHING, transcript, run=n)),
            "SessionStart, brief made anew": hook("claude-code", "SessionStart",
                                                  lambda n: session_start(project, transcript, run=n)),
            "SessionStart, brief remembered": starting(hundred_notes(), "start"),
        }
        if args.notes:
            big = Path(tmp, "big")
            (big / ".git").mkdir(parents=True)
            notes = generated_notes(args.notes)
            seed(python, big, env, [*notes[: args.notes // 2], NOTE, *notes[args.notes // 2:]])
            for name, text in (("quiet message", QUIET), ("searching", SEARCHING)):
                cases[f"{name}, {args.notes} notes"] = hook(
                    "claude-code", "UserPromptSubmit", lambda n, text=text: prompt(big, text, transcript, run=n))
            cases[f"SessionStart, brief made anew, {args.notes} notes"] = hook(
                "claude-code", "SessionStart", lambda n: session_start(big, transcript, run=n))
            cases[f"SessionStart, brief remembered, {args.notes} notes"] = starting(
                [*notes[: args.notes // 2], NOTE, *notes[args.notes // 2:]], "big-start")
        # A Stop's call is told by its transcript (it has no prompt id): a new one for every run.
        stopping = lambda n: stop_payload(project, claude_transcript(Path(tmp, f"stop-{n}.jsonl"), project))  # noqa: E731
        stop = {"Stop (until the fork)": hook("claude-code", "Stop", stopping)}
        check(cases, project)
        times = measure(cases, project, args.runs, args.warmup)
        # Apart, and paced: each run leaves a retain working in the background for a while.
        paced = measure({FLOOR: floor, **stop}, project, max(10, args.runs // 3), 2,
                        after=lambda name: time.sleep(0.5))
    print(f"{python} ({'--python' if args.python else 'installed from a wheel of this checkout'})")
    print(table(times))
    print("\nStop, timed apart (half a second between runs, for the detached retains to finish):")
    print(table(paced))
    return 0


def installed_wheel(venv: Path = VENV, extras: str = "") -> Path:
    """The interpreter of a venv holding this checkout, installed from a freshly built wheel (with
    ``extras``, e.g. ``"semantic"``)."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    with tempfile.TemporaryDirectory(prefix="memsift-wheel-") as out:
        subprocess.run([str(python), "-m", "pip", "wheel", "-q", "--no-deps", "-w", out, str(ROOT)], check=True)
        [wheel] = Path(out).glob("memsift-*.whl")
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", str(wheel)],
                       check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"{wheel}[{extras}]" if extras else str(wheel)],
                       check=True)  # its dependencies
    return python


def fresh_user(tmp: str) -> tuple[Path, dict[str, str]]:
    """A project (a git checkout) in ``tmp``, and the environment of a user with a fresh HOME: memsift's
    home where a user's is by default (no MEMSIFT_HOME)."""
    project, user = Path(tmp, "shop"), Path(tmp, "user")
    project.mkdir()
    (project / ".git").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSIFT_")
           and k not in ("PYTHONDONTWRITEBYTECODE", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_DATA_HOME")}
    env["HOME"] = str(user)
    return project, env


def seed(python: Path, project: Path, env: dict[str, str], notes: list[str]) -> None:
    """The notes, where the hooks will look for them (in a child of that install)."""
    code = ("import sys, json; from memsift.config import load_config; from memsift.notes import NotesFile;"
            "NotesFile(load_config().project_dir(sys.argv[1]) / 'notes.md').append(json.load(sys.stdin))")
    subprocess.run([str(python), "-c", code, str(project)], input=json.dumps(notes).encode(), env=env, check=True)


def hundred_notes() -> list[str]:
    """100 notes, the one that answers the searching message among them."""
    topics = ["worker", "queue", "cache", "deploy", "auth", "search", "billing", "mobile", "ci", "logs"]
    fixes = ["capped the heap at 1.5 GB", "moved it to a nightly cron", "pinned the client to v3",
             "added retries with jitter", "split it per tenant", "turned on gzip", "raised the timeout to 30 s",
             "dropped the legacy endpoint", "switched to structured logs", "added an index on created_at"]
    notes = [f"incident: the {topic} broke again ({i}) -> {fix}." for i, (topic, fix) in
             enumerate((t, f) for t in topics for f in fixes)][:99]
    notes.insert(42, NOTE)
    return notes


def claude_transcript(path: Path, project: Path) -> Path:
    turns = [("user", "the webhook tests are flaky"), ("assistant", "They race the queue; I added a wait."),
             ("user", "and the retry policy?"), ("assistant", "Three retries with jitter, as in the worker.")]
    lines = [{"type": role, "cwd": str(project), "sessionId": "s1",
              "message": {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]}}
             for role, text in turns]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


SESSION = "9d60ef8a-7c59-46cb-b91c-9b34eb35ed3d"


def call_id(run: int, prefix: str) -> str:
    """A uuid-shaped id of one run's call: the agent's ids are new for every prompt and session."""
    return f"{prefix}-{run:012d}"


def prompt(project: Path, text: str, transcript: Path | None, codex: bool = False, run: int = 0) -> bytes:
    payload = {"session_id": SESSION, "cwd": str(project),
               "transcript_path": str(transcript) if transcript else None,
               "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": text}
    extra = ({"turn_id": call_id(run, "01a22af5-270f-71f3-b6d0"), "model": "gpt-5.5"} if codex
             else {"prompt_id": call_id(run, "1407ffdb-9438-41e7-85e4")})
    return json.dumps(payload | extra).encode()


def session_start(project: Path, transcript: Path, run: int = 0) -> bytes:
    return json.dumps({"session_id": call_id(run, "5e55a0e0-0000-4000-8000"), "transcript_path": str(transcript),
                       "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}).encode()


def stop_payload(project: Path, transcript: Path) -> bytes:
    return json.dumps({"session_id": SESSION, "transcript_path": str(transcript),
                       "cwd": str(project), "permission_mode": "default", "hook_event_name": "Stop",
                       "stop_hook_active": False, "last_assistant_message": "Three retries with jitter.",
                       "background_tasks": [], "session_crons": []}).encode()


def check(cases: dict[str, Case], cwd: Path) -> None:
    """Quiet adds nothing, searching adds the note and SessionStart gives the brief, on two runs of
    each case: a second call that did nothing (a payload repeated, the work cached) would time
    nothing, and the figures would mean nothing. ``measure`` numbers its runs after these two."""
    for name, case in cases.items():
        for run in CHECKED_RUNS:
            command, stdin, environ = case(run)
            out = subprocess.run(command, input=stdin, capture_output=True, env=environ, cwd=cwd)
            if (name.startswith("quiet") and (out.stdout or out.stderr)) or (
                    name.startswith("SessionStart") and b"Project memory" not in out.stdout) or (
                    name.startswith("searching") and b"Stripe" not in out.stdout):
                sys.exit(f"{Path(sys.argv[0]).name}: {name} (run {run}) did not behave as expected: {out}")


CHECKED_RUNS = (0, 1)


def measure(cases: dict[str, Case], cwd: Path, runs: int, warmup: int,
            after: Callable[[str], object] = lambda name: None) -> dict[str, tuple[list[float], list[float]]]:
    """Wall and CPU (user + system) seconds of each run, the cases taking turns; ``after`` each run
    of a case, with its name (a pause, a server stopped)."""
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in cases}
    for number in range(warmup + runs):
        for name, case in cases.items():
            command, stdin, environ = case(len(CHECKED_RUNS) + number)
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


def table(times: dict[str, tuple[list[float], list[float]]]) -> str:
    floor = statistics.median(times[FLOOR][0])
    width = max(len(name) for name in times)  # the case column as wide as its longest name
    rows = [f"{'case':<{width}} {'runs':>5} {'median':>9} {'p95':>9} {'cpu median':>11} {'x pass':>7} "
            f"{'over pass':>10}"]
    for name, (wall, cpu) in times.items():
        median = statistics.median(wall)
        rows.append(f"{name:<{width}} {len(wall):>5} {ms(median):>9} {ms(percentile(wall, 0.95)):>9} "
                    f"{ms(statistics.median(cpu)):>11} {median / floor:>6.1f}x {ms(median - floor):>10}")
    return "\n".join(rows)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


if __name__ == "__main__":
    sys.exit(main())
