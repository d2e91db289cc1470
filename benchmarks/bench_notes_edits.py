"""Issue 17's rows on the notes, through the installed command: what an editor's stale buffer
drops and whether anything says so, a byte that is not UTF-8 in a long notes file, and control
bytes printed by ``memsift notes``.

- an editor stand-in reads the notes (one line of the user's), memsift appends
  64 lines one at a time (as 64 retains' append stage does, in a child of that
  install), the editor saves its buffer plus a line by rename; then
  ``memsift doctor --json`` and ``memsift notes --restore``;
- ``memsift retain`` on an exchange, the notes holding 320 lines and one with
  the byte 0xE9: the trace's novel stage;
- ``memsift notes`` on a note holding ESC, BEL and U+202E: raw bytes printed;
- ``memsift recall`` in a project of 401 notes (indexed), after an edit in
  place that keeps the file's size and sets its mtime back: is the edit seen?

    $ .venv/bin/python benchmarks/bench_notes_edits.py --python .venv/bin/python
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

from bench_hook import fresh_user, installed_wheel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from editor import MEMSIFTS, Editor  # noqa: E402  the editor stand-in the tests use

APPEND = ("import sys, json; from memsift.config import load_config; from memsift.notes import NotesFile\n"
          "notes = NotesFile(load_config().project_dir(sys.argv[1]) / 'notes.md')\n"
          "for line in json.load(sys.stdin): notes.append([line])")
Run = Callable[..., "subprocess.CompletedProcess[str]"]
WHERE = "import sys; from memsift.config import load_config; print(load_config().project_dir(sys.argv[1]))"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", type=Path, help="an interpreter with memsift installed (default: a wheel venv)")
    args = parser.parse_args(argv)
    python = args.python or installed_wheel()
    cli = [str(python), str(python.parent / "memsift")]
    with tempfile.TemporaryDirectory(prefix="memsift-bench-notes-edits-") as tmp:
        project, env = fresh_user(tmp)
        env.update(MEMSIFT_SEARCH_THRESHOLD="0", MEMSIFT_WORTH_THRESHOLD="0")  # every recall goes to the notes
        run = lambda *command, stdin="": subprocess.run(  # noqa: E731
            command, input=stdin, capture_output=True, text=True, env=env, cwd=project)
        notes = Path(run(str(python), "-c", WHERE, str(project)).stdout.strip()) / "notes.md"
        notes.parent.mkdir(parents=True)
        print(stale_buffer(notes, run, python, cli, project))
        print(undecodable_byte(notes, run, cli, project))
        print(control_bytes(notes, run, cli))
        print(edit_in_place(notes, run, cli, project))
    return 0


def stale_buffer(notes: Path, run: Run, python: Path, cli: list[str], project: Path) -> str:
    notes.write_text("Stripe over Mollie: my own note.\n", encoding="utf-8")
    editor = Editor(notes, "A second note of my own.")
    run(str(python), "-c", APPEND, str(project), stdin=json.dumps(MEMSIFTS))
    editor.save()
    kept = sum(line in MEMSIFTS for line in notes.read_text(encoding="utf-8").splitlines())
    doctor = json.loads(run(*cli, "doctor", "--json").stdout)
    said = [check["detail"][:60] for check in doctor["checks"] if check["name"] == "notes edits"]
    restore = run(*cli, "notes", "--restore")
    lines = notes.read_text(encoding="utf-8").splitlines()
    return (f"stale buffer saved by rename: {len(MEMSIFTS) - kept} of {len(MEMSIFTS)} memsift lines gone; "
            f"doctor: {said[0] + '...' if said else 'nothing'}; notes --restore: exit {restore.returncode}, "
            f"then {sum(line in MEMSIFTS for line in lines)} of {len(MEMSIFTS)} there, "
            f"the editor's line {'kept' if 'A second note of my own.' in lines else 'LOST'}")


def undecodable_byte(notes: Path, run: Run, cli: list[str], project: Path) -> str:
    notes.write_bytes(b"".join(f"decision: icon set {n} is drawn in shade {n} of teal\n".encode() for n in range(320))
                      + b"decision: the caf\xe9 menu is set in Inter\n")
    exchange = {"user": "the export job ran out of memory again",
                "assistant": "It loaded every row at once; it now streams 5000 rows at a time through a "
                             "server-side cursor, and memory stays under 200 MB."}
    done = run(*cli, "retain", "--project", str(project), stdin=json.dumps(exchange))
    try:
        result = json.loads(done.stdout)
    except ValueError:
        return f"retain with a 0xE9 byte in 321 lines: exit {done.returncode}, {done.stderr.strip()[-200:]}"
    novel = [f"{step['verdict']}{': ' + step['why'] if step.get('why') else ''}" for step in result["trace"]
             if step["stage"] == "novel"]
    return f"retain with a 0xE9 byte in 321 lines: novel {novel}, stopped by {result['stopped_by']!r}"


def control_bytes(notes: Path, run: Run, cli: list[str]) -> str:
    notes.write_bytes(b"decision: \x1b[2Jclear\x07 and \xe2\x80\xae reversed\n")
    out = run(*cli, "notes")
    raw = [name for name, char in (("ESC", "\x1b"), ("BEL", "\x07"), ("U+202E", "\u202e")) if char in out.stdout]
    return f"memsift notes on ESC, BEL, U+202E: exit {out.returncode}, raw in its output: {raw or 'none'}"


def edit_in_place(notes: Path, run: Run, cli: list[str], project: Path) -> str:
    lines = [f"decision: icon set {n} is drawn in shade {n} of teal" for n in range(400)]
    lines.insert(200, "decision: payments go through Mollie because its webhooks never dropped an event")
    notes.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    time.sleep(2.1)  # indexed well after the write, as a file of some age is
    recall = lambda question: run(*cli, "recall", "--project", str(project), stdin=question).stdout  # noqa: E731
    first = "Mollie" in recall("why do payments go through Mollie?")
    before = os.stat(notes)
    with open(notes, "r+", encoding="utf-8") as file:  # in place: the same inode and size
        file.write(notes.read_text(encoding="utf-8").replace("Mollie", "Paddle"))
    os.utime(notes, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `touch -r` does
    seen = "Paddle" in recall("why do payments go through Paddle?")
    return (f"an edit in place, size and mtime kept, 401 notes: the note found before it {first}, "
            f"the edit seen by the next message {seen}")


if __name__ == "__main__":
    sys.exit(main())
