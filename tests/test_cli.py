"""The ``memsift`` command, run as a real process reading stdin: memsift/cli.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from examples import INCIDENT as EXAMPLE_INCIDENT
from memsift.config import load_config
from memsift.notes import NotesFile
from memsift.stages.recall import quoted

REPO = Path(__file__).resolve().parent.parent
CADDY = "Reverse proxy: Caddy over nginx because it renews TLS certificates on its own and the config is ten lines."
INCIDENT = {"user": EXAMPLE_INCIDENT.user, "assistant": EXAMPLE_INCIDENT.assistant}


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "shop"
    root.mkdir()
    return root


def memsift(*args: str, stdin: str, home: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMSIFT_HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "memsift", *args], input=stdin, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def test_recall_a_reaction_prints_nothing_and_the_trace_on_stderr(memsift_home, project):
    done = memsift("recall", stdin="thanks!", home=memsift_home, cwd=project)

    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "# stopped by classify: reaction needs no memory" in done.stderr
    assert "classify  reaction" in done.stderr and " ms" in done.stderr


def test_recall_json_prints_the_result(memsift_home, project):
    done = memsift("recall", "--json", stdin="thanks!", home=memsift_home, cwd=project)

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) == {"text", "items", "kind", "trace", "stopped_by", "notice"}
    assert result["text"] == "" and result["items"] == [] and result["kind"] == "reaction"
    assert [step["stage"] for step in result["trace"]] == ["redact", "classify"]
    assert result["stopped_by"] == "classify: reaction needs no memory"


def test_recall_prints_what_the_projects_notes_answer(memsift_home, project, tmp_path):
    folder = load_config({"MEMSIFT_HOME": str(memsift_home)}).project_dir(project)
    NotesFile(folder / "notes.md").append([CADDY])

    done = memsift("recall", "--project", str(project), stdin="why did we pick Caddy instead of nginx "
                   "for the reverse proxy?", home=memsift_home, cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == [f"- {quoted(CADDY)} [notes.md:1]"]
    assert "# stopped by render: added 1 items" in done.stderr


def test_recall_reads_the_conversation_from_a_file(memsift_home, project, tmp_path):
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps([{"role": "user", "text": "fix the export"},
                                        {"role": "assistant", "text": "Done: it streams rows now."}]),
                            encoding="utf-8")

    done = memsift("recall", "--json", "--conversation", str(conversation), stdin="great, thanks!",
                   home=memsift_home, cwd=project)

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kind"] == "reaction"


@pytest.mark.parametrize("content", ["[{\"role\": \"user\", \"text\": ", "[{\"role\": \"user\"}]"])
def test_recall_with_a_bad_conversation_file_says_so_and_exits_2(memsift_home, project, tmp_path, content):
    conversation = tmp_path / "conversation.json"
    conversation.write_text(content, encoding="utf-8")

    done = memsift("recall", "--conversation", str(conversation), stdin="why Caddy?",
                   home=memsift_home, cwd=project)

    assert done.returncode == 2
    assert done.stdout == ""
    assert f"memsift: cannot read the conversation from {conversation}" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "too large"])
def test_recall_refuses_a_conversation_that_is_no_regular_file_or_too_large(memsift_home, project, tmp_path, kind):
    """A FIFO with no writer would hang it, /dev/zero would fill the memory: neither is read."""
    conversation = tmp_path / "conversation.json"
    if kind == "fifo":
        os.mkfifo(conversation)
    elif kind == "device":
        conversation = Path("/dev/zero")
    elif kind == "folder":
        conversation.mkdir()
    else:
        turn = json.dumps({"role": "user", "text": "x" * 1000})
        conversation.write_text("[" + ", ".join([turn] * 4200) + "]")  # a valid list past 4 MiB

    done = memsift("recall", "--conversation", str(conversation), stdin="why Caddy?",
                   home=memsift_home, cwd=project)

    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert f"memsift: cannot read the conversation from {conversation}: " in done.stderr
    assert ("larger than 4 MiB" if kind == "too large" else "is not a regular file") in done.stderr


def test_retain_prints_the_result_and_writes_the_note(memsift_home, project):
    done = memsift("retain", "--project", str(project), stdin=json.dumps(INCIDENT), home=memsift_home,
                   cwd=project)

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["keep"] is True and result["category"] in {"decision", "constraint", "incident"}
    assert result["stopped_by"] == "done"
    folder = load_config({"MEMSIFT_HOME": str(memsift_home)}).project_dir(project)
    assert NotesFile(folder / "notes.md").lines() == result["lines"]
    assert list(project.iterdir()) == []  # everything it writes is under its home


def test_retain_a_reaction_prints_a_drop_and_writes_nothing(memsift_home, project):
    done = memsift("retain", stdin=json.dumps({"user": "thanks!", "assistant": "You're welcome!"}),
                   home=memsift_home, cwd=project)

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["keep"] is False and result["lines"] == []
    folder = load_config({"MEMSIFT_HOME": str(memsift_home)}).project_dir(project)
    assert not (folder / "notes.md").exists()


@pytest.mark.parametrize("stdin", ["not json", "{\"user\": \"only one side\"}"])
def test_retain_with_bad_json_says_what_it_expects_and_exits_2(memsift_home, project, stdin):
    done = memsift("retain", stdin=stdin, home=memsift_home, cwd=project)

    assert done.returncode == 2 and done.stdout == ""
    assert 'expected JSON {"user": ..., "assistant": ...} on stdin' in done.stderr


def test_a_bad_setting_is_reported_in_one_line_with_exit_2(memsift_home, project):
    (memsift_home / "config.toml").write_text('store = "redis"\n', encoding="utf-8")

    done = memsift("recall", stdin="why Caddy?", home=memsift_home, cwd=project)

    assert done.returncode == 2
    assert done.stderr.startswith("memsift: ") and "Traceback" not in done.stderr


def test_version_prints_the_packages_version():
    from memsift import __version__

    done = subprocess.run([sys.executable, "-m", "memsift", "--version"], capture_output=True, text=True, timeout=60)

    assert done.returncode == 0 and done.stdout == f"memsift {__version__}\n"


def test_a_closed_pipe_ends_the_command_cleanly(memsift_home, project):
    """`memsift doctor | head -1`: the reader left before the output was written, which is no error."""
    read, write = os.pipe()
    os.close(read)  # every write now fails with EPIPE, as after `head` exits
    try:
        done = subprocess.run([sys.executable, "-m", "memsift", "doctor", "--project", str(project)], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=60,
                              env={**os.environ, "MEMSIFT_HOME": str(memsift_home)})
    finally:
        os.close(write)

    assert done.stderr == "" and done.returncode == 0
