"""The Claude Agent SDK adapter's callbacks, called as the SDK calls them (memsift_adapters/claude_agent_sdk.py).

The end to end run, with the real SDK and Claude Code, is tests/agents/test_claude_agent_sdk.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest

from memsift import load_config
from memsift_adapters.claude_agent_sdk import MemsiftHooks

pytest.importorskip("claude_agent_sdk")


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=60)
    return tmp_path


def call(callback, payload):
    return asyncio.run(callback(payload, None, {"signal": None}))


def test_the_matchers_are_the_sdks_own_for_prompt_and_stop():
    from claude_agent_sdk import HookMatcher

    matchers = MemsiftHooks().matchers()

    assert set(matchers) == {"UserPromptSubmit", "Stop"}
    assert all(isinstance(m, HookMatcher) and len(m.hooks) == 1 for ms in matchers.values() for m in ms)


def test_a_quiet_prompt_gets_nothing(repo):
    assert call(MemsiftHooks().on_prompt, {"session_id": "s1", "cwd": str(repo), "prompt": "thanks!",
                                           "transcript_path": ""}) == {}


def test_a_payload_without_a_prompt_is_told_to_the_user_and_raises_nothing(repo):
    said = call(MemsiftHooks().on_prompt, {"session_id": "s1", "cwd": str(repo)})

    assert list(said) == ["systemMessage"] and "recall failed" in said["systemMessage"]


def test_a_stop_the_agent_was_asked_to_go_on_from_keeps_nothing(repo):
    said = call(MemsiftHooks(retain="awaited").on_stop, {"session_id": "s1", "cwd": str(repo),
                                                         "stop_hook_active": True})

    assert said == {} and not (load_config().project_dir(repo) / "notes.md").exists()


def test_stop_keeps_the_exchange_of_the_prompt_it_saw(repo):
    memory = MemsiftHooks(retain="awaited")
    prompt = "Should the job queue be RabbitMQ or Kafka?"
    answer = "RabbitMQ over Kafka: operations already run RabbitMQ, and Kafka would need ZooKeeper."
    base = {"session_id": "s1", "cwd": str(repo), "transcript_path": str(repo / "missing.jsonl")}

    call(memory.on_prompt, {**base, "prompt": prompt})
    said = call(memory.on_stop, {**base, "stop_hook_active": False, "last_assistant_message": answer})

    notes = (load_config().project_dir(repo) / "notes.md").read_text()
    assert said == {} and "RabbitMQ over Kafka" in notes, json.dumps(said)
