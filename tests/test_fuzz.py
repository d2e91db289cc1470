"""Arbitrary bytes and JSON, to the hooks and to every file memsift reads (issue 11).

Whatever comes in: the hook exits 0, prints no traceback, its stdout is empty
or valid hook output, and the next well-formed message works. Example counts
are kept small: each hook example is a process, and the suite runs on 2 cores.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from guarded import guarded_recall, guarded_retain
from test_adapters import run_hook

from memsift.config import load_config
from memsift.notes import NotesFile
from memsift.types import Exchange, Message

NOTE = ("decision: Payments: Stripe over Mollie because Mollie's webhooks dropped events under load; "
        "Stripe has an official v2 provider.")
QUESTION = "why did we pick Stripe over Mollie for payments?"
EXCHANGE = Exchange("Why did the worker run out of memory at night?",
                    "The heap was unbounded; capped it at 1.5 GB with --max-old-space-size because the "
                    "container limit is 2 GB.", "s1")
HOOK_EXAMPLES = settings(max_examples=10, deadline=None,
                         suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
FILE_EXAMPLES = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


def payloads(project: Path) -> st.SearchStrategy[bytes]:
    """Bytes, any JSON, and objects shaped like a payload whose fields hold anything."""
    shaped = st.fixed_dictionaries({}, optional={
        "session_id": json_values, "prompt": json_values | st.text(), "transcript_path": json_values,
        "cwd": st.just(str(project)) | json_values, "last_assistant_message": json_values,
        "stop_hook_active": json_values,
    })
    return st.binary(max_size=200) | json_values.map(_dumped) | shaped.map(_dumped)


def _dumped(value: object) -> bytes:
    return json.dumps(value).encode()


@pytest.fixture(scope="module")
def hook_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One home and project for every hook example: state left by one must not break the next."""
    home, project = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("shop")
    NotesFile(load_config({"MEMSIFT_HOME": str(home)}).project_dir(project) / "notes.md").append([NOTE])
    return home, project


def assert_fails_open(result) -> None:
    assert result.returncode == 0
    assert b"Traceback" not in result.stderr and len(result.stderr.splitlines()) <= 1, result.stderr
    if result.stdout:
        assert json.loads(result.stdout)["hookSpecificOutput"]["hookEventName"] in ("UserPromptSubmit", "SessionStart")


def well_formed(project: Path) -> dict:
    return {"session_id": "fuzz", "cwd": str(project), "prompt": QUESTION, "hook_event_name": "UserPromptSubmit"}


@pytest.mark.parametrize("agent", ["claude", "codex"])
@pytest.mark.parametrize("event", ["prompt", "stop", "start", "end"])
@HOOK_EXAMPLES
@given(data=st.data())
def test_a_hook_fails_open_on_anything_and_the_next_message_works(agent, event, hook_home, data):
    home, project = hook_home
    stdin = data.draw(payloads(project))

    assert_fails_open(run_hook(agent, event, stdin, home, project))

    after = run_hook(agent, "prompt", well_formed(project), home, project)
    assert_fails_open(after)
    assert b"Stripe over Mollie" in after.stdout or b"memory" in after.stdout, after


# -- files memsift reads ---------------------------------------------------------------------

def _health(home: Path, folder: Path) -> Path:
    return home / "health.json"


def _session_log(home: Path, folder: Path) -> Path:
    return home / "sessions" / "s1.json"


def _outbox(home: Path, folder: Path) -> Path:
    return folder / "outbox.sqlite"


def _store(home: Path, folder: Path) -> Path:
    return folder / "store.sqlite"


# Files memsift sets aside when they hold junk: afterwards memory works as if they were new.
HEALED = {"health": _health, "session log": _session_log, "outbox": _outbox, "store": _store}
junk = st.binary(max_size=300) | json_values.map(_dumped)


@pytest.mark.parametrize("name", HEALED)
@FILE_EXAMPLES
@given(content=junk)
def test_junk_in_a_file_memsift_owns_is_healed_and_memory_works(name, content):
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp, "home"), Path(tmp, "shop")
        project.mkdir()
        env = {**os.environ, "MEMSIFT_HOME": str(home)}
        folder = load_config(env).project_dir(project)
        NotesFile(folder / "notes.md").append([NOTE])
        path = HEALED[name](home, folder)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)

        kept = guarded_retain(EXCHANGE, project, env)
        asked = guarded_recall(Message(QUESTION, session="s1"), project, env)

        assert kept.stopped_by == "done", kept.trace
        assert "Stripe over Mollie" in asked.text, asked.trace
        assert asked.notice is None or "\n" not in asked.notice


@FILE_EXAMPLES
@given(content=st.binary(max_size=300))
def test_junk_appended_to_the_notes_is_read_and_kept_as_it_is(content):
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp, "home"), Path(tmp, "shop")
        project.mkdir()
        env = {**os.environ, "MEMSIFT_HOME": str(home)}
        notes = load_config(env).project_dir(project) / "notes.md"
        NotesFile(notes).append([NOTE])
        with open(notes, "ab") as out:
            out.write(content + b"\n")

        asked = guarded_recall(Message(QUESTION, session="s1"), project, env)
        kept = guarded_retain(EXCHANGE, project, env)

        assert [step for step in asked.trace + kept.trace if step.verdict == "error"] == []
        assert notes.read_bytes().startswith(NOTE.encode() + b"\n" + content + b"\n")  # byte for byte


@FILE_EXAMPLES
@given(content=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_junk_in_the_settings_turns_memory_off_in_one_line_never_a_traceback(content):
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp, "home"), Path(tmp, "shop")
        project.mkdir()
        home.mkdir()
        (home / "config.toml").write_bytes(content)
        env = {**os.environ, "MEMSIFT_HOME": str(home)}

        asked = guarded_recall(Message(QUESTION, session="s1"), project, env)
        kept = guarded_retain(EXCHANGE, project, env)

        if asked.stopped_by.startswith("settings: "):  # junk that is no valid settings file
            assert asked.notice and asked.notice.startswith("memory off: memsift's settings: ")
            assert "\n" not in asked.notice and kept.stopped_by.startswith("settings: ")
        else:  # an empty file, a comment, a blank line: valid settings, memory works
            assert kept.stopped_by == "done" and asked.notice is None
