"""Shared fixtures: a private MEMSIFT_HOME for every test, and real embedded services.

A hook run by a test may start the warm model server (``memsift serve``) in that
test's home: it is stopped when the test ends, and the suite checks, once over,
that none is left running.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from memsift.config import load_config
from memsift.decider.embedded import EmbeddedDecider
from memsift.notes import NotesFile
from memsift.redact import PatternRedactor
from memsift.revise import DuplicateReviser
from memsift.services import Services, SessionLog
from memsift.stores.sqlite import SQLiteStore
from memsift.testing import ScriptedDecider


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests run only when ``-m`` names them (``pytest -m slow``, as .ci/run does).

    A ``-m "not slow"`` in addopts would be replaced by any other ``-m``, so
    ``pytest -m "not cognee"`` would pay for them too.
    """
    if "slow" in config.option.markexpr:
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


@pytest.fixture(autouse=True)
def memsift_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                 tmp_path: Path) -> Iterator[Path]:
    """No test reads or writes the real home: MEMSIFT_HOME points to a fresh folder."""
    home = tmp_path_factory.mktemp("memsift-home")
    for name in [n for n in os.environ if n.startswith("MEMSIFT_")]:  # the developer's own settings
        monkeypatch.delenv(name)
    monkeypatch.setenv("MEMSIFT_HOME", str(home))
    # Where exchanges wait when the home cannot keep them (memsift/_keeping/spool.py): never the user's.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("runtime")))
    yield home
    stop_servers([home, *served_homes(tmp_path)])  # a test's hooks may use a home of its own in tmp_path


def served_homes(folder: Path) -> list[Path]:
    """The homes under ``folder`` where a model server was started."""
    from memsift.semantic import _serve

    return [serve.parent for serve in folder.rglob(_serve.FOLDER) if serve.is_dir()]


def stop_servers(homes: Iterable[Path]) -> None:
    """Stop the model server of each home: one running, or one on its way (it answers once loaded)."""
    from memsift.semantic import _serve

    for home in homes:
        starting = _serve.serve_dir(home) / _serve.STARTING
        deadline = time.monotonic() + 60
        while (_serve.lock_held(home) or starting.exists()) and time.monotonic() < deadline:
            if _serve.stop(home):
                break
            time.sleep(0.1)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """No model server outlives the suite. A detached retain may start one after its test ended:
    those are stopped here; one that does not stop fails the run."""
    from memsift.semantic import _serve

    homes = served_homes(session.config._tmp_path_factory.getbasetemp())  # type: ignore[attr-defined]
    stop_servers(homes)
    alive = [str(home) for home in homes if _serve.lock_held(home)]
    if alive:
        print(f"\nmemsift: model servers still running after the suite, in {alive}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def decider() -> EmbeddedDecider:
    return EmbeddedDecider.load()


@pytest.fixture
def services(tmp_path: Path, decider: EmbeddedDecider) -> Iterator[Services]:
    """The embedded parts a fresh machine runs, each on files in tmp_path."""
    store = SQLiteStore(tmp_path / "store.sqlite")
    yield Services(
        decider=decider,
        notebook=NotesFile(tmp_path / "notes.md"),
        redactor=PatternRedactor(),
        reviser=DuplicateReviser(),
        config=load_config({"MEMSIFT_HOME": str(tmp_path)}),
        store=store,
        session_log=SessionLog(tmp_path / "sessions"),
    )
    store.close()


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """What a slow or hanging double waits on; set at teardown, so an abandoned call ends with its test."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture(scope="session")
def scripted() -> type[ScriptedDecider]:
    """The scripted decider class, to build one per test: ``scripted(kind=Kind.REACTION)``."""
    return ScriptedDecider
