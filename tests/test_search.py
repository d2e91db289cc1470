"""`memsift notes` and `memsift search`, run as the agent runs them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memsift.config import load_config
from memsift.notes import NotesFile
from memsift.stores.sqlite import SQLiteStore
from memsift.types import Item

MEMSIFT = Path(sys.executable).parent / "memsift"
NOTES = [
    "# Payments",
    "decision: why Stripe over Mollie? -> Mollie's webhooks dropped events under load.",
    "constraint: the iOS app adds packages with CocoaPods only; SPM breaks the widget target.",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    (folder / ".git").mkdir(parents=True)
    (folder / "ios").mkdir()
    return folder


def memsift(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(MEMSIFT), *args], capture_output=True, text=True, cwd=cwd, timeout=60,
                            env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    return result


def project_dir(project: Path) -> Path:
    return load_config().project_dir(project)


def test_notes_prints_each_line_numbered_under_the_files_path(project):
    NotesFile(project_dir(project) / "notes.md").append(NOTES)

    out = memsift("notes", cwd=project / "ios").stdout.splitlines()  # a subfolder: the repository's notes

    assert out[0] == f"notes of {project}: {project_dir(project) / 'notes.md'}"
    assert out[1:] == [f"  {n:>3}  {line}" for n, line in enumerate(NOTES, start=1)]


def test_notes_of_a_project_without_any(project, tmp_path):
    out = memsift("notes", "--project", str(project), cwd=tmp_path).stdout

    assert out.endswith("  (none yet)\n")


def test_search_finds_notes_and_stored_exchanges_with_their_pointers(project):
    NotesFile(project_dir(project) / "notes.md").append(NOTES)
    store = SQLiteStore(project_dir(project) / "store.sqlite")
    store.add([Item("x1", "add lottie to the iOS app? We vendored it with CocoaPods like the rest.",
                    "passage", "memsift:decision")], timeout=5)
    store.close()

    out = memsift("search", "lottie", "SPM", cwd=project / "ios").stdout

    assert "notes.md:3  constraint: the iOS app adds packages with CocoaPods only" in out
    assert "Stripe" not in out  # no shared word, not shown
    assert "x1  add lottie to the iOS app?" in out  # the item's id: the pointer `memsift show` takes
    assert out.endswith("(earlier work, possibly out of date: check the code before acting on it)\n")


def test_search_says_nothing_shares_a_word_and_a_store_that_is_down(project):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"

    out = memsift("search", "kubernetes", cwd=project, MEMSIFT_STORE="cognee", MEMSIFT_COGNEE_URL=url).stdout

    assert "  no note shares a word with it\n" in out
    assert f"store (Cognee at {url}):\n  memory paused: Cognee at {url} unreachable" in out


LOCKS_FACT = ("We use Postgres advisory locks instead of Redis locks, because a lock must die with its "
              "connection. (decision 2026-12-01 ex-0a1b2c3d)")
LOCKS_EXCHANGE = ("the cron runs twice sometimes when two workers start together, how do we stop that?\n\n"
                  "We use Postgres advisory locks instead of Redis locks, because a lock must die with its "
                  "connection: pg_try_advisory_lock(42) at the start of the job.")


def kept_fact(project: Path) -> None:
    """What retain leaves behind for one kept exchange: the fact line in the notes, both in the store."""
    NotesFile(project_dir(project) / "notes.md").append([LOCKS_FACT])
    store = SQLiteStore(project_dir(project) / "store.sqlite")
    store.add([Item("ex-0a1b2c3d", LOCKS_FACT, "passage", "memsift:decision", exchange=LOCKS_EXCHANGE)],
              timeout=5)
    store.close()


def test_search_shows_a_kept_fact_and_the_head_of_its_exchange(project):
    kept_fact(project)

    out = memsift("search", "advisory", "locks", cwd=project).stdout

    assert f"notes.md:1  {LOCKS_FACT}" in out
    assert f"ex-0a1b2c3d  {LOCKS_FACT}" in out
    assert "      from the exchange: the cron runs twice sometimes" in out


def test_show_prints_the_whole_exchange_a_note_line_points_to(project):
    kept_fact(project)
    pointer = NotesFile(project_dir(project) / "notes.md").lines()[0].rsplit(" ", 1)[1].rstrip(")")

    out = memsift("show", pointer, cwd=project / "ios").stdout

    assert out == f"ex-0a1b2c3d  memsift:decision\nfact: {LOCKS_FACT}\nexchange:\n{LOCKS_EXCHANGE}\n"


def test_show_of_a_pointer_the_store_does_not_hold_says_so_and_fails(project):
    kept_fact(project)

    result = subprocess.run([str(MEMSIFT), "show", "ex-ffffffff"], capture_output=True, text=True, cwd=project,
                            timeout=60)

    assert result.returncode == 1
    assert result.stdout == "memsift: the store (embedded store) holds no item ex-ffffffff\n"


def test_every_pointer_memsift_prints_is_taken_by_show(project, tmp_path):
    """The notes' lines as recall and search point to them (notes.md:N) and as `memsift notes`
    numbers them, and the stored items' ids: each shows what it names."""
    kept_fact(project)
    NotesFile(project_dir(project) / "notes.md").append(["constraint: deploys stop on Fridays."])
    searched = memsift("search", "advisory", "locks", "fridays", cwd=project).stdout
    pointers = [line.split()[0] for line in searched.splitlines() if line.startswith("  ") and not
                line.startswith("      ")]
    assert pointers == ["notes.md:1", "notes.md:2", "ex-0a1b2c3d"], searched

    first, second, stored = (memsift("show", pointer, cwd=project).stdout for pointer in pointers)
    numbered = memsift("show", "2", "--project", str(project), cwd=tmp_path).stdout

    assert first == f"notes.md:1  {LOCKS_FACT}\n\nex-0a1b2c3d  memsift:decision\nfact: {LOCKS_FACT}\n" \
                    f"exchange:\n{LOCKS_EXCHANGE}\n"  # the line, then the exchange its fact came from
    assert second == numbered == "notes.md:2  constraint: deploys stop on Fridays.\n"  # a line with no source
    assert stored == first.split("\n\n", 1)[1]


def test_show_of_a_line_the_notes_do_not_have_says_so_and_fails(project):
    kept_fact(project)

    result = subprocess.run([str(MEMSIFT), "show", "notes.md:9"], capture_output=True, text=True, cwd=project,
                            timeout=60)

    assert result.returncode == 1
    assert result.stdout == f"memsift: {project_dir(project) / 'notes.md'} has 1 line: no note at line 9\n"


def test_show_of_a_stored_items_source_label_says_which_pointer_to_use(project):
    """Recall shows a stored item with its source (`[memsift:decision]`): no one item, so show says
    what it takes instead."""
    kept_fact(project)

    result = subprocess.run([str(MEMSIFT), "show", "memsift:decision"], capture_output=True, text=True,
                            cwd=project, timeout=60)

    assert result.returncode == 1
    assert result.stdout.startswith("memsift: memsift:decision names where stored items come from, not one item")
