"""memsift inside a harness built on the real Claude Agent SDK, which runs the real Claude Code CLI
(the one the SDK's wheel bundles, 2.1.332 as pinned in clis.py), offline against a fake model.

The harness is this test process: ``MemsiftHooks(services).matchers()`` in
``ClaudeAgentOptions(hooks=...)``, its callbacks awaited by the SDK, on the
services the test opened once for the repository, with a session brief that
holds one fact. One note is kept beforehand; then, in a subfolder of a git
repository:

1. a question the note answers: the session's brief, with the note, reaches
   the model's request with it (nothing more is added: the brief gave it);
2. a choice with its reason: nothing to add, Stop keeps it;
3. a new session asks about that choice: its brief holds it now, the newest;
4. it asks about the note again: the brief had no room for it, recall adds it;
5. a thank-you: nothing added, nothing kept.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_models import FakeModel
from test_agents import BRIEF_CHARS, SEED, added_context, brief_in

from memsift import Exchange, load_config, open_services, retain
from memsift.hooks import DecisionLog
from memsift_adapters.claude_agent_sdk import MemsiftHooks

sdk = pytest.importorskip("claude_agent_sdk")
pytestmark = pytest.mark.agents

CHOICE = "Queues: RabbitMQ over Kafka, because the operations team already runs RabbitMQ and Kafka needs ZooKeeper."
# (prompt, the model's reply, a new session?, what the session's brief holds, what memory adds to the message)
SCRIPT = [
    ("why does the worker run out of memory at night again?",
     "The nightly export loads every order at once; the heap is capped at 1536 MB.", True, "1536 MB", None),
    ("Should we use RabbitMQ or Kafka for the job queue?", CHOICE, False, "1536 MB", None),
    ("why did we pick RabbitMQ over Kafka again?", "Operations already run RabbitMQ.", True, "ZooKeeper", None),
    ("the worker ran out of memory again at night, what heap cap did we set for it?",
     "1536 MB, in deploy/worker.yaml.", False, "ZooKeeper", "1536 MB"),
    ("thanks, that helps", "Glad it helps.", False, "ZooKeeper", None),
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
        patch.setenv("MEMSIFT_BRIEF_CHARS", BRIEF_CHARS)
        services = open_services(load_config(), repo)
        assert retain(Exchange(SEED["user"], SEED["assistant"]), services).lines, "the seed was not kept"
        memory = MemsiftHooks(services, background=retain_mode == "background")
        turns = []
        with FakeModel("anthropic") as model:
            env = environment(home, model)

            async def replay() -> None:
                session = ""
                for prompt, reply, new_session, briefed, expected in SCRIPT:
                    model.reply = reply
                    before = len(model.turns())
                    session = await ask(prompt, "" if new_session else session, memory, work, env)
                    await memory.settled()  # a background retain ends before the next prompt
                    asked = model.turns()[before:]
                    assert len(asked) == 1, f"{len(asked)} model requests for {prompt!r}"
                    turns.append((prompt, briefed, expected, brief_in(asked[0]), added_context(asked[0], prompt)))

            asyncio.run(replay())
        decisions = DecisionLog(root / "memsift-home").last(100)
        notes = services.notebook.lines()
        services.close()
        return {"turns": turns, "notes": notes, "decisions": decisions, "connects": model.connects()}


def test_the_brief_reaches_the_model_with_each_sessions_first_prompt(replayed):
    for prompt, briefed, _, brief, _ in replayed["turns"]:
        assert briefed in brief, f"{prompt!r} should have come with a brief holding {briefed!r}; it had {brief!r}"
    assert "1536 MB" not in replayed["turns"][2][3]  # one fact fits: the newest


def test_recall_reaches_the_model_exactly_when_memory_answers(replayed):
    for prompt, _, expected, _, added in replayed["turns"]:
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
