"""Shared fixtures: a private MEMSIFT_HOME for every test, and real embedded services."""

from __future__ import annotations

import os
from collections.abc import Iterator
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
def memsift_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the real home: MEMSIFT_HOME points to a fresh folder."""
    home = tmp_path_factory.mktemp("memsift-home")
    for name in [n for n in os.environ if n.startswith("MEMSIFT_")]:  # the developer's own settings
        monkeypatch.delenv(name)
    monkeypatch.setenv("MEMSIFT_HOME", str(home))
    # Where exchanges wait when the home cannot keep them (memsift/_spool.py): never the user's.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("runtime")))
    return home


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


@pytest.fixture(scope="session")
def scripted() -> type[ScriptedDecider]:
    """The scripted decider class, to build one per test: ``scripted(kind=Kind.REACTION)``."""
    return ScriptedDecider
