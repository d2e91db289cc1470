"""memsift inside a harness built on the real Claude Agent SDK, which runs the real Claude Code CLI
(the one the SDK's wheel bundles, 2.1.332 as pinned in clis.py), offline against a fake model.

The harness is this test process: ``MemsiftHooks(services).matchers()`` in
``ClaudeAgentOptions(hooks=...)``, its callbacks awaited by the SDK, on the
services the test opened once for the repository. One note
is kept beforehand; then, in a subfolder of a git repository:

1. a question the note answers: its words reach the model's request;
2. a choice with its reason: nothing to add, Stop keeps it;
3. a new session asks about that choice: what Stop kept reaches the model;
4. a thank-you: nothing added, nothing kept.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_models import FakeModel
from test_agents import SEED, added_context

from memsift import Exchange, load_config, open_services, retain
from memsift.hooks import DecisionLog
from memsift_adapters.claude_agent_sdk import MemsiftHooks

sdk = pytest.importorskip("claude_agent_sdk")
pytestmark = pytest.mark.agents

CHOICE = "Queues: RabbitMQ over Kafka, because the operations team already runs RabbitMQ and Kafka needs ZooKeeper."
SCRIPT = [  # (prompt, the model's reply, a new session?, what memory should add, or None)
    ("why does the worker run out of memory at night again?",
     "The nightly export loads every order at once; the heap is capped at 1536 MB.", True, "1536 MB"),
    ("Should we use RabbitMQ or Kafka for the job queue?", CHOICE, False, None),
    ("why did we pick RabbitMQ over Kafka again?", "Operations already run RabbitMQ.", True, "ZooKeeper"),
    ("thanks, that helps", "Glad it helps.", False, None),
]


def environment(home: Path, model: FakeModel) -> dict[str, str]:
    """What Claude Code gets: its own HOME, and every connection ends at the fake model."""
    return {"HOME": str(home), "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "test-key-not-a-secret",
            "HTTPS_PROXY": model.url, "HTTP_PROXY": model.url, "NO_PROXY": "127.0.0.1,localhost",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"}


async def ask(prompt: str, session: str, memory: MemsiftHooks, work: Path, env: dict[str, str]) -> str:
    """One turn through the SDK; the session id, for the next turn to resume."""
    options = sdk.ClaudeAgentOptions(hooks=memory.matchers(), cwd=str(work), env=env, resume=session or None,
                                     max_turns=1)
    async with sdk.ClaudeSDKClient(options) as client:
        await client.query(prompt)
        async for message in client.receive_response():
            if isinstance(message, sdk.ResultMessage):
                return message.session_id
    raise AssertionError(f"no result for {prompt!r}")


@pytest.fixture(scope="module", params=["awaited", "background"])
def replayed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    retain_mode = request.param
    root = tmp_path_factory.mktemp(f"sdk-{retain_mode}")
    repo, home = root / "shop", root / "home"
    work = repo / "src" / "worker"
    work.mkdir(parents=True)
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=60)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEMSIFT_HOME", str(root / "memsift-home"))
        services = open_services(load_config(), repo)
        assert retain(Exchange(SEED["user"], SEED["assistant"]), services).lines, "the seed was not kept"
        memory = MemsiftHooks(services, background=retain_mode == "background")
        turns = []
        with FakeModel("anthropic") as model:
            env = environment(home, model)

            async def replay() -> None:
                session = ""
                for prompt, reply, new_session, expected in SCRIPT:
                    model.reply = reply
                    before = len(model.turns())
                    session = await ask(prompt, "" if new_session else session, memory, work, env)
                    await memory.settled()  # a background retain ends before the next prompt
                    asked = model.turns()[before:]
                    assert len(asked) == 1, f"{len(asked)} model requests for {prompt!r}"
                    turns.append((prompt, expected, added_context(asked[0], prompt)))

            asyncio.run(replay())
        decisions = DecisionLog(root / "memsift-home").last(100)
        notes = services.notebook.lines()
        services.close()
        return {"turns": turns, "notes": notes, "decisions": decisions, "connects": model.connects()}


def test_recall_reaches_the_model_exactly_when_memory_answers(replayed):
    for prompt, expected, added in replayed["turns"]:
        if expected is None:
            assert added == "", f"memsift added context to {prompt!r}: {added!r}"
        else:
            assert expected in added, f"{prompt!r} should have brought {expected!r}; the request had {added!r}"


def test_stop_kept_the_choice_and_not_the_thanks(replayed):
    notes = "\n".join(replayed["notes"])
    assert "RabbitMQ" in notes and "Glad it helps" not in notes, notes
    stops = [d for d in replayed["decisions"] if d["event"] == "Stop" and d["agent"] == "claude-agent-sdk"]
    assert len(stops) == len(SCRIPT), json.dumps(replayed["decisions"], indent=1)


def test_nothing_left_the_machine(replayed):
    assert replayed["connects"] == []
