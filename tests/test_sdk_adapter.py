"""The Claude Agent SDK adapter's callbacks, called as the SDK calls them (memsift_adapters/claude_agent_sdk.py).

The end to end run, with the real SDK and Claude Code, is tests/agents/test_claude_agent_sdk.py.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import json
import subprocess
from pathlib import Path

import pytest

import memsift_adapters
from memsift import arecall, load_config, open_services
from memsift.stages import classify, notes, redact, render
from memsift_adapters.claude_agent_sdk import MemsiftHooks

pytest.importorskip("claude_agent_sdk")


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=60)
    return tmp_path


@pytest.fixture
def services(repo):
    with open_services(load_config(), repo) as opened:
        yield opened


def call(callback, payload):
    return asyncio.run(callback(payload, None, {"signal": None}))


def test_the_matchers_are_the_sdks_own_for_prompt_stop_and_compaction(services):
    from claude_agent_sdk import HookMatcher

    matchers = MemsiftHooks(services).matchers()

    assert set(matchers) == {"UserPromptSubmit", "Stop", "PreCompact"}
    assert all(isinstance(m, HookMatcher) and len(m.hooks) == 1 for ms in matchers.values() for m in ms)


def test_a_quiet_prompt_gets_nothing(repo, services):
    assert call(MemsiftHooks(services).on_prompt, {"session_id": "s1", "cwd": str(repo), "prompt": "thanks!",
                                                   "transcript_path": ""}) == {}


def test_a_sessions_first_prompt_comes_with_its_brief_and_again_after_a_compaction(repo, services):
    services.notebook.append(["The job lock is a Postgres advisory lock. (constraint 2026-11-02 ex-11111111)"])
    memory = MemsiftHooks(services)
    prompt = {"session_id": "s1", "cwd": str(repo), "prompt": "thanks!", "transcript_path": ""}

    first, second = call(memory.on_prompt, prompt), call(memory.on_prompt, prompt)
    call(memory.on_compact, {"session_id": "s1", "cwd": str(repo), "trigger": "auto"})
    after = call(memory.on_prompt, prompt)

    assert "advisory lock" in first["hookSpecificOutput"]["additionalContext"]
    assert second == {}  # the brief is in the session's context already; "thanks!" needs nothing more
    assert "advisory lock" in after["hookSpecificOutput"]["additionalContext"]
    assert call(memory.on_prompt, {**prompt, "session_id": "s2"})["hookSpecificOutput"]  # another session's own


def test_a_payload_without_a_prompt_is_told_to_the_user_and_raises_nothing(repo, services):
    said = call(MemsiftHooks(services).on_prompt, {"session_id": "s1", "cwd": str(repo)})

    assert list(said) == ["systemMessage"] and "recall failed" in said["systemMessage"]


def test_a_stop_the_agent_was_asked_to_go_on_from_keeps_nothing(repo, services):
    said = call(MemsiftHooks(services, background=False).on_stop, {"session_id": "s1", "cwd": str(repo),
                                                                    "stop_hook_active": True})

    assert said == {} and services.notebook.lines() == []


def test_stop_keeps_the_exchange_of_the_prompt_it_saw(repo, services):
    memory = MemsiftHooks(services, background=False)
    prompt = "Should the job queue be RabbitMQ or Kafka?"
    answer = "RabbitMQ over Kafka: operations already run RabbitMQ, and Kafka would need ZooKeeper."
    base = {"session_id": "s1", "cwd": str(repo), "transcript_path": str(repo / "missing.jsonl")}

    call(memory.on_prompt, {**base, "prompt": prompt})
    said = call(memory.on_stop, {**base, "stop_hook_active": False, "last_assistant_message": answer})

    assert said == {} and "RabbitMQ over Kafka" in "\n".join(services.notebook.lines()), json.dumps(said)


def test_every_prompt_runs_on_the_callers_services_and_opens_none(repo, services, monkeypatch):
    import memsift.services

    def refused(*args, **kwargs):
        raise AssertionError("the adapter opened services of its own")

    monkeypatch.setattr(memsift.services, "open_services", refused)
    services.notebook.append(["Queues: RabbitMQ over Kafka, because operations already run RabbitMQ."])
    memory = MemsiftHooks(services)
    payload = {"session_id": "s1", "cwd": str(repo), "transcript_path": str(repo / "missing.jsonl"),
               "prompt": "why did we pick RabbitMQ over Kafka for the queue?"}

    said = [call(memory.on_prompt, payload) for _ in range(3)]

    assert "RabbitMQ over Kafka" in said[0]["hookSpecificOutput"]["additionalContext"]
    assert services.store is not None and services._workers.threads() <= 2  # the same threads, prompt after prompt


def test_a_pipeline_of_the_callers_own_is_what_runs(repo, services):
    ran = []

    def counted(services, state):
        ran.append(state.message.text)
        return state

    services.notebook.append(["Queues: RabbitMQ over Kafka, because operations already run RabbitMQ."])
    notes_only = functools.partial(arecall, stages=[redact, counted, classify, notes, render])
    payload = {"session_id": "s1", "cwd": str(repo), "transcript_path": "",
               "prompt": "why did we pick RabbitMQ over Kafka for the queue?"}

    said = call(MemsiftHooks(services, recall=notes_only).on_prompt, payload)

    assert ran == [payload["prompt"]] and "RabbitMQ" in said["hookSpecificOutput"]["additionalContext"]


def test_past_its_deadline_a_prompt_gets_nothing_and_the_session_goes_on(repo, services):
    def hangs(services, state):
        import time

        time.sleep(2)
        return state

    slow = functools.partial(arecall, stages=[redact, hangs, render])
    payload = {"session_id": "s1", "cwd": str(repo), "transcript_path": "", "prompt": "why RabbitMQ over Kafka?"}

    assert call(MemsiftHooks(services, recall=slow, deadline=0.2).on_prompt, payload) == {}


def test_the_adapters_import_only_memsifts_public_modules():
    private = []
    for path in Path(memsift_adapters.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                     else [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            private += [f"{path.name}: {name}" for name in names
                        if name.startswith("memsift.") and any(part.startswith("_") for part in name.split("."))]

    assert private == []


def test_memsift_adapters_says_it_is_typed():
    assert (Path(memsift_adapters.__file__).parent / "py.typed").is_file()
