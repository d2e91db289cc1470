"""Hand edits survive: an editor saving the notes by rename from a stale buffer, against memsift's
writes (memsift/notes.py, memsift/_notes/journal.py), its report in ``memsift doctor`` and
``memsift notes --restore``; the notes printed safely. Real files, real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from editor import MEMSIFTS, Editor
from examples import INCIDENT
from memsift._notes import journal as notes_journal
from memsift.config import load_config
from memsift.notes import NotesFile
from memsift._notes.journal import NotesJournal
from memsift.types import Edit

REPO = Path(__file__).resolve().parent.parent
USERS = ["# Payments", "Stripe over Mollie: my own note, written by hand."]
def memsift(*args: str, home: Path, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMSIFT_HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "memsift", *args], input=stdin, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    return root


def notes_of(project: Path, home: Path) -> NotesFile:
    return NotesFile(load_config({"MEMSIFT_HOME": str(home)}).project_dir(project) / "notes.md")


def missing_check(report: dict[str, object]) -> list[dict[str, str]]:
    return [check for check in report["checks"] if check["name"] == "notes edits"]  # type: ignore[union-attr,index]


def test_a_stale_buffer_saved_by_rename_is_reported_by_doctor_and_restored(memsift_home, project):
    notes = notes_of(project, memsift_home)
    notes.append(USERS[1:])
    editor = Editor(notes.path, "A second note of my own.")  # opened before memsift's 64 lines
    for line in MEMSIFTS:
        notes.append([line])
    editor.save()
    assert notes.lines() == [USERS[1], "A second note of my own."]  # what the editor did: 64 lines gone

    doctor = memsift("doctor", "--json", home=memsift_home, cwd=project)
    [check] = missing_check(json.loads(doctor.stdout))
    assert check["status"] == "warn" and check["detail"].startswith("64 of memsift's lines are gone")
    assert "memsift notes --restore" in check["detail"]

    restored = memsift("notes", "--restore", home=memsift_home, cwd=project)

    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.startswith("64 of memsift's lines restored\n")
    assert notes.lines() == [USERS[1], "A second note of my own.", *MEMSIFTS]  # the user's lines, and memsift's
    assert missing_check(json.loads(memsift("doctor", "--json", home=memsift_home, cwd=project).stdout)) == []


def test_lines_the_user_meant_to_remove_are_forgotten_on_request(memsift_home, project):
    notes = notes_of(project, memsift_home)
    notes.append(MEMSIFTS[:3])
    notes.path.write_text(MEMSIFTS[0] + "\n", encoding="utf-8")  # two removed by hand, on purpose

    done = memsift("notes", "--forget-missing", home=memsift_home, cwd=project)

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("2 of memsift's lines forgotten")
    assert notes.missing() == [] and notes.lines() == [MEMSIFTS[0]]
    assert missing_check(json.loads(memsift("doctor", "--json", home=memsift_home, cwd=project).stdout)) == []


def test_an_editor_saving_while_memsift_writes_loses_neither_side(memsift_home, project, monkeypatch):
    """The editor's rename lands after memsift read the file and before its own rename: memsift
    sees the file changed, reads it again and writes both the editor's lines and its own."""
    notes = notes_of(project, memsift_home)
    notes.append(MEMSIFTS[:2])
    editor = Editor(notes.path, "Written by hand meanwhile.")
    read = NotesFile.lines

    def read_then_the_editor_saves(self: NotesFile) -> list[str]:
        lines = read(self)
        if editor.process.returncode is None:
            editor.save()
        return lines

    monkeypatch.setattr(NotesFile, "lines", read_then_the_editor_saves)
    notes.append([MEMSIFTS[2]])
    monkeypatch.undo()

    assert notes.lines() == [*MEMSIFTS[:2], "Written by hand meanwhile.", MEMSIFTS[2]]
    assert notes.missing() == []


def test_what_memsift_removes_itself_is_not_missing(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(MEMSIFTS[:3])

    notes.apply([Edit(1, "remove", old=MEMSIFTS[0]),
                 Edit(2, "replace", "decision: the worker batches 500", old=MEMSIFTS[1])])

    assert notes.lines() == ["decision: the worker batches 500", MEMSIFTS[2]]
    assert notes.missing() == []
    assert NotesJournal(notes.path).lines() == [MEMSIFTS[2], "decision: the worker batches 500"]


def test_the_journal_keeps_only_the_newest_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(notes_journal, "JOURNAL_LINES", 10)
    notes = NotesFile(tmp_path / "notes.md")
    for line in MEMSIFTS[:15]:
        notes.append([line])

    assert NotesJournal(notes.path).lines() == MEMSIFTS[5:15]


def test_a_journal_that_cannot_be_read_is_started_anew(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(MEMSIFTS[:1])
    NotesJournal(notes.path).path.write_bytes(b"\x00{not json")

    notes.append(MEMSIFTS[1:2])

    assert NotesJournal(notes.path).lines() == MEMSIFTS[1:2] and notes.lines() == MEMSIFTS[:2]


def test_memsift_notes_prints_control_bytes_and_bytes_that_are_not_utf8_escaped(memsift_home, project):
    notes = notes_of(project, memsift_home)
    notes.path.parent.mkdir(parents=True)
    notes.path.write_bytes(b"decision: \x1b[2Jclear\x07 and caf\xe9 \xe2\x80\xae reversed\n")

    done = subprocess.run([sys.executable, "-m", "memsift", "notes"], cwd=project, capture_output=True,
                          env={**os.environ, "MEMSIFT_HOME": str(memsift_home), "PYTHONPATH": str(REPO)})

    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stdout and b"\x07" not in done.stdout and b"\xe2\x80\xae" not in done.stdout
    assert b"    1  decision: \\x1b[2Jclear\\x07 and caf\\xe9 \\u202e reversed\n" in done.stdout


def test_retain_goes_on_with_a_byte_that_is_not_utf8_in_notes_past_300_lines(memsift_home, project):
    """Issue 17: every retain ended "novel: failed: UnicodeEncodeError" and the exchange was dropped."""
    notes = notes_of(project, memsift_home)
    notes.path.parent.mkdir(parents=True)
    filler = "".join(f"decision: icon set {n} is drawn in shade {n} of teal\n" for n in range(320))
    notes.path.write_bytes(filler.encode() + b"decision: the caf\xe9 menu is set in Inter\n")

    done = memsift("retain", "--project", str(project), home=memsift_home, cwd=project,
                   stdin=json.dumps({"user": INCIDENT.user, "assistant": INCIDENT.assistant}))

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert not [step for step in result["trace"] if step["verdict"] == "failed"], result["trace"]
    assert result["lines"] and notes.lines()[-1] == result["lines"][0]
    assert notes.path.read_bytes().startswith(filler.encode() + b"decision: the caf\xe9 menu is set in Inter\n")
