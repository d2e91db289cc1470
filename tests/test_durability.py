"""No exchange is lost, and losing the ability to keep one is never silent (memsift/_keeping/spool.py).

Through the real hook commands, on a real full or read-only file system (a
tmpfs: root only, skipped otherwise) and real permissions (root drops the
capability that overrides them, with ``setpriv``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memsift._runtime.health import Health
from memsift._keeping.spool import HOME, spool_folder, waiting
from memsift.notes import NotesFile
from test_adapters import (
    FIX, INCIDENT, STRIPE_NOTE, STRIPE_QUESTION, claude_transcript, notes_file, prompt_payload, run_hook, seed_notes,
    stop_payload, wait_for,
)

QUEUE = ("why did we move the job queue from Redis to Postgres?",
         "We chose Postgres SKIP LOCKED over Redis for the job queue because Redis lost jobs on failover; "
         "one database also means one backup.")
ROOT = os.geteuid() == 0
# Without these capabilities root obeys file permissions as any user does.
AS_A_USER = ("setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner") if ROOT else ()


def told(result: subprocess.CompletedProcess[bytes]) -> str:
    """The line for the user (``systemMessage``), or '' when the hook printed nothing."""
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["systemMessage"] if result.stdout.strip() else ""


def stop(home: Path, project: Path, tmp_path: Path, user: str, answer: str, *prefix: str) -> None:
    transcript = claude_transcript(tmp_path / f"t-{len(list(tmp_path.glob('t-*')))}.jsonl", [("user", user)])
    command = stop_payload("claude", project, transcript, answer)
    if prefix:
        result = subprocess.run([*prefix, *run_hook_command("stop")], input=json.dumps(command).encode(),
                                capture_output=True, cwd=project, env=hook_env(home), timeout=60)
    else:
        result = run_hook("claude", "stop", command, home, project)
    assert result.returncode == 0 and result.stdout == b"", result.stderr


def run_hook_command(event: str) -> list[str]:
    import sys

    from test_adapters import EVENTS, MEMSIFT
    return [sys.executable, str(MEMSIFT), "hook", "claude-code", EVENTS[event]]


def hook_env(home: Path) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("MEMSIFT_")},
            "HOME": str(home.parent / "user"), "MEMSIFT_HOME": str(home)}


def prompt(home: Path, project: Path, text: str, *prefix: str) -> subprocess.CompletedProcess[bytes]:
    payload = json.dumps(prompt_payload("claude", project, text)).encode()
    return subprocess.run([*prefix, *run_hook_command("prompt")], input=payload, capture_output=True,
                          cwd=project, env=hook_env(home), timeout=60)


def spool_health(home: Path) -> dict:
    path = spool_folder(home) / "health.json"
    return json.loads(path.read_text()) if path.exists() else {}


@pytest.fixture
def shop(tmp_path: Path) -> tuple[Path, Path]:
    """memsift's home (not made yet) and a project folder."""
    (tmp_path / "shop").mkdir()
    return tmp_path / "memsift-home", tmp_path / "shop"


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs, as a small disk: it fills, and it can be remounted read-only."""
    if not ROOT or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "mnt"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(mount)]).returncode:
        pytest.skip("this machine does not let root mount a tmpfs")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder: Path) -> None:
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:  # ENOSPC: full
        pass
    finally:
        os.close(fd)


def kept_one_exchange(home: Path, project: Path, tmp_path: Path) -> NotesFile:
    stop(home, project, tmp_path, INCIDENT, FIX)
    notes = NotesFile(notes_file(home, project))
    assert wait_for(notes.lines), "the first exchange was not kept"
    assert wait_for(lambda: (home / "decisions.jsonl").exists()), "the detached retain did not end"  # its last write
    return notes


def remount(mount: Path, how: str) -> None:
    """``mount -o remount,<how>``, once the detached retain that just wrote has let go of its files."""
    assert wait_for(lambda: subprocess.run(["mount", "-o", f"remount,{how}", str(mount)],
                                           capture_output=True).returncode == 0), f"remount,{how} failed"


def both_kept(notes: NotesFile) -> bool:
    text = "\n".join(notes.lines())
    return "docker builder prune" in text and "SKIP LOCKED" in text


@pytest.mark.parametrize("broken", ["full", "read-only"])
def test_an_exchange_ended_while_the_home_cannot_be_written_waits_and_is_kept_once_it_can(
        broken, tmpfs, tmp_path):
    home, project = tmpfs / "memsift", tmp_path / "shop"
    project.mkdir()
    notes = kept_one_exchange(home, project, tmp_path)
    if broken == "full":
        fill(tmpfs)
    else:
        remount(tmpfs, "ro")

    stop(home, project, tmp_path, *QUEUE)
    [entry] = wait_for(lambda: waiting(home))
    first, second = told(prompt(home, project, "thanks!")), told(prompt(home, project, "ok"))

    why = "no space left on device" if broken == "full" else "read-only file system"
    assert first == (f"memsift: memory not kept: {HOME}: {notes.path.parent} cannot be written ({why}); "
                     "exchanges wait until it can (memsift doctor)")
    assert second == ""  # once per session
    assert json.loads(entry.read_text())["assistant"] == QUEUE[1]

    if broken == "full":
        (tmpfs / "filler").unlink()
    else:
        remount(tmpfs, "rw")
    stop(home, project, tmp_path, "thanks, that works", "Glad it works.")  # any Stop keeps what waited
    assert wait_for(lambda: both_kept(notes)), notes.lines()
    assert wait_for(lambda: not spool_health(home)[HOME]["open"])
    after, again = told(prompt(home, project, "thanks!")), told(prompt(home, project, "ok"))

    assert after == f"memsift: memory kept again: {HOME} can be written; nothing waits"
    assert again == "" and waiting(home) == []


def test_a_read_only_home_still_recalls_and_says_once_that_it_cannot_keep(tmpfs, tmp_path):
    home, project = tmpfs / "memsift", tmp_path / "shop"
    project.mkdir()
    seed_notes(home, project, STRIPE_NOTE)
    remount(tmpfs, "ro")

    asked = prompt(home, project, STRIPE_QUESTION)
    again = prompt(home, project, STRIPE_QUESTION)

    output = json.loads(asked.stdout)
    assert output["systemMessage"].startswith(f"memsift: memory not kept: {HOME}: ")
    assert "Stripe over Mollie" in output["hookSpecificOutput"]["additionalContext"]
    assert "systemMessage" not in json.loads(again.stdout)


def test_a_project_folder_the_hook_may_not_write_keeps_the_exchange_waiting(shop, tmp_path):
    home, project = shop
    notes = kept_one_exchange(home, project, tmp_path)
    notes.path.parent.chmod(0o500)
    try:
        stop(home, project, tmp_path, *QUEUE, *AS_A_USER)
        assert wait_for(lambda: waiting(home))
        first = told(prompt(home, project, "thanks!", *AS_A_USER))
        doctor = subprocess.run([*AS_A_USER, *run_hook_command("prompt")[:2], "doctor", "--project", str(project)],
                                capture_output=True, text=True, cwd=project, env=hook_env(home), timeout=120)
    finally:
        notes.path.parent.chmod(0o700)
    stop(home, project, tmp_path, "thanks, that works", "Glad it works.")

    assert first.endswith(f"{notes.path.parent} cannot be written (permission denied); "
                          "exchanges wait until it can (memsift doctor)")
    assert doctor.returncode == 1
    assert re.search(rf"FAIL +writable +{re.escape(str(notes.path.parent))} cannot be written \(permission denied\)",
                     doctor.stdout), doctor.stdout
    assert f"fix: chmod u+w '{notes.path.parent}'" in doctor.stdout
    assert re.search(rf"warn +waiting +1 exchanges wait in {re.escape(str(spool_folder(home)))}/waiting", doctor.stdout)
    assert wait_for(lambda: both_kept(notes)), notes.lines()
    assert wait_for(lambda: not waiting(home))


def test_a_store_failure_first_seen_by_the_detached_stop_reaches_the_next_prompt_once(shop, tmp_path):
    home, project = shop
    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    store = {"MEMSIFT_STORE": "cognee", "MEMSIFT_COGNEE_URL": f"http://127.0.0.1:{port}"}
    transcript = claude_transcript(tmp_path / "t.jsonl", [("user", INCIDENT)])
    run_hook("claude", "stop", stop_payload("claude", project, transcript, FIX), home, project, **store)
    assert wait_for(lambda: (home / "health.json").exists() and "Cognee" in (home / "health.json").read_text())

    lines = [told(run_hook("claude", "prompt", prompt_payload("claude", project, text), home, project, **store))
             for text in (STRIPE_QUESTION, "and what about the webhooks then?", "ok")]

    assert lines[0].startswith(f"memsift: memory paused: Cognee at http://127.0.0.1:{port} unreachable since ")
    assert lines[1:] == ["", ""]


def test_detached_work_tells_no_session_so_resumed_only_ever_follows_paused(tmp_path):
    now = [1000.0]
    detached = Health(tmp_path, clock=lambda: now[0]).unheard()
    detached.failed("Cognee at http://127.0.0.1:8000", "connection refused")
    assert detached.notice("Cognee at http://127.0.0.1:8000", "s1") is None
    now[0] += 60
    detached.succeeded("Cognee at http://127.0.0.1:8000")

    # The session heard no pause (the detached work told nobody): the recovery is no news to it.
    assert Health(tmp_path, clock=lambda: now[0]).notice("Cognee at http://127.0.0.1:8000", "s1") is None

    detached.failed("Cognee at http://127.0.0.1:8000", "connection refused")
    heard = Health(tmp_path, clock=lambda: now[0])
    assert heard.notice("Cognee at http://127.0.0.1:8000", "s1").startswith("memory paused: ")
    now[0] += 60
    detached.succeeded("Cognee at http://127.0.0.1:8000")
    assert heard.notice("Cognee at http://127.0.0.1:8000", "s1").startswith("memory resumed: ")
    assert heard.notice("Cognee at http://127.0.0.1:8000", "s1") is None  # once


def test_a_cwd_with_a_nul_byte_turns_off_that_path_only(shop):
    home, project = shop
    seed_notes(home, project, STRIPE_NOTE)
    bad = json.dumps({**prompt_payload("claude", project, STRIPE_QUESTION), "cwd": f"{project}\0x"}).encode()

    odd = run_hook("claude", "prompt", bad, home, project)
    fine = run_hook("claude", "prompt", prompt_payload("claude", project, STRIPE_QUESTION,
                                                       session="another"), home, project)

    assert "NUL byte" in told(odd)
    output = json.loads(fine.stdout)
    assert "systemMessage" not in output and "Stripe over Mollie" in output["hookSpecificOutput"]["additionalContext"]
    health = home / "health.json"
    assert not health.exists() or not any(state["open"] for state in json.loads(health.read_text()).values())
