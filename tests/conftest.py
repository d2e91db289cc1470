"""Shared fixtures: a private MEMSIFT_HOME for every test, and real embedded services.

A hook run by a test may start the warm model server (``memsift serve``) in that
test's home: it is stopped when the test ends, and the suite checks, once over,
that none is left running.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from memsift.config import load_config
from memsift.decider.embedded import EmbeddedDecider
from memsift.notes import NotesFile
from memsift.redact import PatternRedactor
from memsift.revise import DuplicateReviser
from memsift.services import Services, SessionLog
from memsift.stores.sqlite import SQLiteStore
from memsift.types import Answer, Category, Choice, ChoiceAnswer, Kind, Noul, NoulAnswer, Question


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


class ScriptedDecider:
    """A ``Decider`` double that answers each question by its task, from a script.

    ``kind`` and ``keep`` pick the option of a Choice (or give its probabilities
    as a mapping); ``worth`` is the probability of yes; ``answers(item, origin)``
    the probability that one memory item answers the message; ``fact(clause,
    origin)`` the probability that a clause states a kept exchange's fact;
    ``novel(note, new)`` how a new note line stands to an older one
    (``"restates"``, ``"updates"`` or ``"differs"``). Every call is recorded:
    the state it read and the questions it was asked.
    """

    name = "scripted decider"

    def __init__(self, *, kind=Kind.PAST_CHOICE, worth=0.9, answers=None, keep=Category.DECISION,
                 fact=None, novel=None):
        self.kind, self.worth, self.keep = kind, worth, keep
        self.answers = answers or (lambda item, origin: 0.0)
        self.fact = fact or (lambda clause, origin: 0.5)
        self.novel = novel or (lambda note, new: "differs")
        self.calls: list[tuple[dict, dict]] = []

    def decide(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Answer]:
        self.calls.append((dict(state), dict(questions)))
        out: dict[str, Answer] = {}
        for qid, question in questions.items():
            if question.task == "kind" and isinstance(question, Choice):
                out[qid] = _choose(question, self.kind)
            elif question.task == "keep" and isinstance(question, Choice):
                out[qid] = _choose(question, self.keep)
            elif question.task == "worth" and isinstance(question, Noul):
                out[qid] = NoulAnswer(self.worth)
            elif question.task == "answers" and isinstance(question, Noul):
                item = question.instructions
                out[qid] = NoulAnswer(self.answers(item["item"], item["origin"]))
            elif question.task == "fact" and isinstance(question, Noul):
                item = question.instructions
                out[qid] = NoulAnswer(self.fact(item["item"], item["origin"]))
            elif question.task == "novel" and isinstance(question, Choice):
                item = question.instructions
                out[qid] = _choose(question, self.novel(item["item"], item["new"]))
            else:
                raise ValueError(f"no script for a {question.type} question on {question.task!r}")
        return out

    def asked(self, task: str) -> list[Question]:
        """Every question of this task asked so far, in order."""
        return [q for _, questions in self.calls for q in questions.values() if q.task == task]


def _choose(question: Choice, pick: Any) -> ChoiceAnswer:
    if isinstance(pick, Mapping):
        probabilities = {str(o): float(pick.get(o, 0.0)) for o in question.options}
    else:
        probabilities = {str(o): 1.0 if o == pick else 0.0 for o in question.options}
    best = max(probabilities, key=probabilities.__getitem__)
    return ChoiceAnswer(best, probabilities, probabilities[best])


@pytest.fixture(scope="session")
def scripted() -> type[ScriptedDecider]:
    """The scripted decider class, to build one per test: ``scripted(kind=Kind.REACTION)``."""
    return ScriptedDecider
