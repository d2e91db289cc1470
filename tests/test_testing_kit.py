"""The conformance kit (memsift/testing/): every built-in passes it, and it catches what breaks a contract.

The remote backends are checked against the real-contract services the
other tests use (tests/chat_services.py, tests/test_systemone.py's stub);
the Cognee store is checked against a real Cognee server in tests/cognee/.
"""

from __future__ import annotations

import json
import socket
import threading
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from chat_services import AnthropicService, OpenAIService
from test_systemone import SystemOneStub

from memsift.decider.anthropic_messages import AnthropicDecider
from memsift.decider.backends import RoutedDecider
from memsift.decider.embedded import EmbeddedDecider
from memsift.decider.openai_compatible import OpenAICompatibleDecider
from memsift.decider.systemone import SystemOneDecider
from memsift.model_reviser import ModelReviser
from memsift.notes import NotesFile
from memsift.redact import PatternRedactor
from memsift.revise import DuplicateReviser
from memsift.stores.cognee import CogneeStore
from memsift.stores.sqlite import SQLiteStore
from memsift.testing import (
    ContractError, MemoryStore, ScriptedDecider, check_decider, check_notebook, check_redactor, check_reviser,
    check_store,
)
from memsift.types import Answer, ChoiceAnswer, Edit, Item, Question


def fresh(tmp_path: Path, suffix: str) -> Path:
    return tmp_path / f"{uuid.uuid4().hex}{suffix}"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- every built-in passes --------------------------------------------------------------------

def test_the_sqlite_store_keeps_the_store_contract(tmp_path):
    check_store(lambda: SQLiteStore(fresh(tmp_path, ".sqlite")))


def test_the_memory_store_fake_keeps_the_store_contract_up_and_down():
    def down() -> MemoryStore:
        store = MemoryStore()
        store.down = True
        return store

    check_store(MemoryStore, down=down)


def test_the_cognee_store_away_raises_service_unavailable():
    """The up half runs against a real server: tests/cognee/test_cognee_store.py."""
    check_store(MemoryStore, down=lambda: CogneeStore(f"http://127.0.0.1:{closed_port()}"))


def test_the_embedded_decider_keeps_the_decider_contract(decider):
    check_decider(lambda: decider)


def test_the_scripted_decider_fake_keeps_the_decider_contract():
    check_decider(ScriptedDecider, levels=True)


def test_the_remote_deciders_keep_the_decider_contract(tmp_path):
    slack = {"deadline": 60.0}  # four threads' questions at once on a shared machine: the shapes are checked, not speed
    with OpenAIService(api_key="sk-right") as openai, AnthropicService() as anthropic, SystemOneStub() as stub:
        check_decider(lambda: OpenAICompatibleDecider(openai.base_url, model="gpt-4.1-mini", api_key="sk-right",
                                                      home=tmp_path, **slack))
        check_decider(lambda: AnthropicDecider(anthropic.base_url, model="claude-haiku-4-5", api_key="sk-ant-test",
                                               **slack))
        check_decider(lambda: SystemOneDecider(stub.url, **slack), levels=True)
        check_decider(lambda: RoutedDecider(EmbeddedDecider.load(), {"answers": SystemOneDecider(stub.url, **slack)}))


def test_the_notes_file_keeps_the_notebook_contract(tmp_path):
    check_notebook(lambda: NotesFile(fresh(tmp_path, ".md")))


def test_the_pattern_redactor_keeps_the_redactor_contract():
    check_redactor(PatternRedactor)


def test_the_revisers_keep_the_reviser_contract():
    check_reviser(DuplicateReviser)
    edits = [{"line": 4, "action": "remove", "text": ""}, {"line": 2, "action": "replace",
                                                          "text": "Queues: RabbitMQ, since ops run it."}]
    with OpenAIService(structurer=lambda prompt, schema: {"edits": edits}) as service:
        check_reviser(lambda: ModelReviser(OpenAICompatibleDecider(service.base_url, model="gpt-4.1-mini")))


# -- one written as a user would: a store in a JSON file ---------------------------------------

class JsonFileStore:
    """What a user might write: every item in one JSON file, searched by shared words."""

    name = "json file store"
    remote = False

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()

    def _read(self) -> dict[str, dict[str, str]]:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def add(self, items: Sequence[Item], *, timeout: float) -> None:
        with self.lock:
            held = self._read()
            held.update({i.id: {"text": i.text, "origin": i.origin, "source": i.source} for i in items})
            self.path.write_text(json.dumps(held))

    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]:
        words = set(query.lower().replace("?", " ").split())
        held = self._read()
        hits = [(len(words & set(v["text"].lower().replace(",", " ").replace(".", " ").split())), k, v)
                for k, v in held.items()]
        return [Item(k, v["text"], v["origin"], v["source"]) for n, k, v in sorted(hits, reverse=True) if n][:limit]


def test_a_users_own_store_is_checked_by_the_kit(tmp_path):
    check_store(lambda: JsonFileStore(fresh(tmp_path, ".json")))


# -- what breaks a contract is caught ----------------------------------------------------------

class ForgetfulStore(JsonFileStore):
    """Loses a concurrent writer's items: no lock around read-modify-write."""

    def add(self, items: Sequence[Item], *, timeout: float) -> None:
        held = self._read()
        threading.Event().wait(0.02)  # the window another thread's write falls into
        held.update({i.id: {"text": i.text, "origin": i.origin, "source": i.source} for i in items})
        self.path.write_text(json.dumps(held))


class NoneOnEmptyStore(JsonFileStore):
    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]:
        return super().search(query, limit=limit, timeout=timeout) or None  # type: ignore[return-value]


class TwiceStore(MemoryStore):
    """Appends instead of keeping one item per id."""

    def add(self, items: Sequence[Item], *, timeout: float) -> None:
        for item in items:
            self.items[f"{item.id}#{len(self.items)}"] = item


class CrashingWhenDown(MemoryStore):
    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]:
        raise ConnectionRefusedError("down")


class UnnormalisedDecider(ScriptedDecider):
    def decide(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Answer]:
        answers = super().decide(state, questions)
        return {qid: ChoiceAnswer(a.choice, dict.fromkeys(a.probabilities, 0.9), 0.9)
                if isinstance(a, ChoiceAnswer) else a for qid, a in answers.items()}


class UnhashableRedactor:
    __hash__ = None  # type: ignore[assignment]

    def redact(self, text: str) -> str:
        return PatternRedactor().redact(text)


class OffByOneReviser:
    def revise(self, lines: Sequence[str], added: Sequence[str]) -> list[Edit]:
        return [Edit(2, "remove", old=lines[2])]


@pytest.mark.parametrize(("check", "broken", "promise"), [
    (check_store, lambda tmp: (lambda: NoneOnEmptyStore(fresh(tmp, ".json"))), "returns \\[\\]"),
    (check_store, lambda tmp: TwiceStore, "idempotent per id"),
    (check_store, lambda tmp: (lambda: ForgetfulStore(fresh(tmp, ".json"))), "several threads"),
    (check_decider, lambda tmp: UnnormalisedDecider, "sum to 1"),
    (check_redactor, lambda tmp: UnhashableRedactor, "hashable"),
    (check_redactor, lambda tmp: type("Leaky", (), {"redact": lambda self, t: t}), "is redacted"),
    (check_reviser, lambda tmp: OffByOneReviser, "exact text"),
], ids=["none-on-empty", "not-idempotent", "lost-writes", "unnormalised", "unhashable", "leaky", "off-by-one"])
def test_the_kit_names_the_promise_an_implementation_breaks(check, broken, promise, tmp_path):
    with pytest.raises(ContractError, match=promise):
        check(broken(tmp_path))


def test_a_store_that_raises_something_else_when_down_is_caught():
    with pytest.raises(ContractError, match="raises ServiceUnavailable, not"):
        check_store(MemoryStore, down=CrashingWhenDown)


# -- told precisely why not --------------------------------------------------------------------

class PositionalStore(MemoryStore):
    """A first try: search's limit and timeout taken by position, as the protocol does not have them."""

    def search(self, query, limit, timeout):  # type: ignore[override]
        return super().search(query, limit=limit, timeout=timeout)


class NoAddStore:
    name = "no add"

    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]:
        return []


class KeyErrorStore(MemoryStore):
    def add(self, items: Sequence[Item], *, timeout: float) -> None:
        raise KeyError("tenant")


class PositionalDecider(ScriptedDecider):
    def decide(self, questions):  # type: ignore[override]
        return super().decide({}, questions)


@pytest.mark.parametrize(("check", "make", "said"), [
    (check_store, NoAddStore, r"NoAddStore has no method add\(items, \*, timeout\)"),
    (check_store, KeyErrorStore, "add raised KeyError: 'tenant'"),
    (check_decider, PositionalDecider,
     r"PositionalDecider.decide\(self, questions\) cannot be called as decide\(state, questions\): "
     "too many positional arguments"),
    (check_redactor, PatternRedactor(), "a check takes a factory that makes a new redactor"),
], ids=["missing-method", "raises", "wrong-signature", "an-instance-not-a-factory"])
def test_an_implementation_that_breaks_a_promise_is_told_which_and_where(check, make, said):
    with pytest.raises(ContractError, match=said):
        check(make)


def test_keyword_arguments_taken_by_position_pass_as_the_stages_call_them():
    check_store(PositionalStore)  # search(query, limit=..., timeout=...) binds to positional parameters too


def test_every_check_takes_a_factory_and_options_by_keyword():
    import inspect

    from memsift import testing

    checks = [getattr(testing, name) for name in testing.__all__ if name.startswith("check_")]
    for check in checks:
        first, *rest = inspect.signature(check).parameters.values()
        assert first.name == "make" and first.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, check.__name__
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in rest), check.__name__
