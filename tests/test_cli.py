"""The ``memsift`` command, run as a real process reading stdin: memsift/cli.py."""

from __future__ import annotations

import contextlib
import io
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


def test_what_the_readme_says_retain_keeps_it_keeps(memsift_home, project):
    """README's example exchange, read from README.md itself: kept, as the README promises."""
    [line] = [line for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
              if line.startswith("echo '{") and "memsift retain" in line]
    exchange = line.removeprefix("echo '").split("' |", 1)[0]

    done = memsift("retain", "--project", str(project), stdin=exchange, home=memsift_home, cwd=project)

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["keep"] is True and "1.5 GB" in result["lines"][0]


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


# -- a command line that explains itself ------------------------------------------------

def test_memsift_alone_lists_every_command_in_one_line_each(memsift_home, project):
    from memsift._cli import COMMANDS, _parser

    done = memsift(stdin="", home=memsift_home, cwd=project)

    assert done.returncode == 0 and done.stderr == ""
    listed = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith("  ")}
    assert list(listed) == list(COMMANDS) and all(len(line.split()) > 2 for line in listed.values())  # name, does
    parser = _parser()
    for name in listed:  # each is a command the parser takes
        with pytest.raises(SystemExit) as ended, contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args([name, "--help"])
        assert ended.value.code == 0, name
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        parser.parse_args(["nosuchcommand"])


MISSING_PROJECT = [("recall",), ("retain",), ("notes",), ("search", "stripe"), ("show", "ex-0a1b2c3d"), ("doctor",),
                   ("install", "claude-code"), ("uninstall", "codex")]


@pytest.mark.parametrize("command", MISSING_PROJECT, ids=[c[0] for c in MISSING_PROJECT])
def test_a_project_folder_that_does_not_exist_is_an_error_naming_it_and_nothing_is_made(
        command, memsift_home, tmp_path):
    missing = tmp_path / "no" / "such-project"
    home = tmp_path / "user"
    env = {**os.environ, "MEMSIFT_HOME": str(memsift_home), "HOME": str(home), "PYTHONPATH": str(REPO)}

    done = subprocess.run([sys.executable, "-m", "memsift", *command, "--project", str(missing)], input="why?",
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)

    assert done.returncode == 2 and done.stdout == ""
    assert f"argument --project: {missing} is not a folder" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "no").exists() and not any(memsift_home.iterdir()) and not home.exists()


@pytest.mark.parametrize(("command", "what"), [("recall", "message"), ("retain", "exchange")])
@pytest.mark.parametrize("stdin", ["", "\n \n"])
def test_a_command_given_nothing_on_stdin_says_so_in_one_line_and_does_nothing(command, what, stdin,
                                                                              memsift_home, project):
    done = memsift(command, stdin=stdin, home=memsift_home, cwd=project)

    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.startswith(f"memsift {command}: standard input is empty: no {what}")
    assert done.stderr.count("\n") == 1 and not any(memsift_home.iterdir())  # nothing recalled, kept, or logged


@pytest.mark.parametrize(("args", "says"), [(("recall",), "memsift recall: reading the message on standard input"),
                                            (("retain",), "memsift retain: reading the exchange as JSON"),
                                            (("redact",), "memsift redact: reading the text to redact"),
                                            (("hook", "codex", "Stop"), "memsift hook codex Stop: reading the "
                                                                        "agent's JSON payload")])
def test_a_command_reading_stdin_from_a_terminal_says_so(args, says, memsift_home, project):
    """A terminal for stdin: the command says what it waits for, then ends on Ctrl-D (end of file)."""
    import pty

    leader, follower = pty.openpty()
    try:
        child = subprocess.Popen([sys.executable, "-m", "memsift", *args], stdin=follower, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, cwd=project, text=True,
                                 env={**os.environ, "MEMSIFT_HOME": str(memsift_home), "PYTHONPATH": str(REPO)})
        os.write(leader, b"\x04")  # Ctrl-D on an empty line: end of input
        out, err = child.communicate(timeout=60)
    finally:
        os.close(leader)
        os.close(follower)

    assert child.returncode == 0 and out == ""
    assert err.startswith(says) and "(end it with Ctrl-D)" in err.splitlines()[0] and "Traceback" not in err


def test_recall_with_settings_that_load_tells_no_hooks_stale_memory_off(memsift_home, project):
    """A hook run with a bad value recorded "memory off"; recall with settings that load works and
    says so, instead of repeating that line (as a hook would, it closes the entry)."""
    NotesFile(load_config().project_dir(project) / "notes.md").append([CADDY])
    hook = subprocess.run([sys.executable, "-m", "memsift", "hook", "codex", "UserPromptSubmit"], timeout=60,
                          input=json.dumps({"session_id": "s1", "cwd": str(project), "prompt": "why Caddy?"}),
                          env={**os.environ, "MEMSIFT_HOME": str(memsift_home), "MEMSIFT_JUDGE": "fast"},
                          capture_output=True, text=True)
    assert "memory off" in hook.stdout

    done = memsift("recall", stdin="why did we pick Caddy over nginx?", home=memsift_home, cwd=project)

    assert done.returncode == 0 and "memory off" not in done.stdout and "Caddy over nginx" in done.stdout
