"""Failures stay where they happen (issue 29): a stage or a service of memsift's own that fails affects
that call, and its session hears of it; no other session does. A shared remote service that is down
still pauses memory for every session, as docs/pipelines.md says.

Through open_services' real embedded stack in a private home, as a harness opens it.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from attrs import evolve

from memsift import Exchange, Message, load_config, open_services, recall, retain
from memsift.stages import RECALL_STAGES, classify, notes, redact, render
from memsift.testing import Clock, MemoryStore

NOTE = "Reverse proxy: Caddy over nginx because it renews TLS certificates on its own."
QUESTION = "why did we pick Caddy over nginx for the reverse proxy?"


@pytest.fixture
def services(tmp_path, memsift_home):
    project = tmp_path / "shop"
    project.mkdir()
    with open_services(load_config({"MEMSIFT_HOME": str(memsift_home), "MEMSIFT_JUDGE": "lexical"}), project,
                       clock=Clock()) as opened:
        opened.notebook.append([NOTE])
        yield opened


def health_file(services) -> dict[str, dict]:
    path = services.config.home / "health.json"
    return json.loads(path.read_text()) if path.exists() else {}


broken_now = threading.Event()


def flaky(services, state):
    """A stage of the user's own that fails while ``broken_now`` is set."""
    if broken_now.is_set():
        raise RuntimeError("the vector index is rebuilding")
    return state


@pytest.fixture
def flaky_stage():
    broken_now.set()
    yield [redact, classify, flaky, notes, render]
    broken_now.clear()


def test_a_stage_that_fails_tells_its_own_session_and_no_other(services, flaky_stage):
    failed = recall(Message(QUESTION, session="s1"), services, flaky_stage)
    other = recall(Message(QUESTION, session="s2"), services)  # the built-in path, beside it
    again = recall(Message(QUESTION, session="s1"), services, flaky_stage)
    broken_now.clear()
    services.health.clock.advance(60)  # the health file tells states apart by when they began
    mended = recall(Message(QUESTION, session="s1"), services, flaky_stage)
    later = recall(Message("and for the admin panel?", session="s2"), services)

    assert failed.text == "" and failed.stopped_by == "flaky: failed: RuntimeError"
    assert failed.notice == ("memory off: the flaky stage: RuntimeError: the vector index is rebuilding; "
                             "reminders are off")
    assert other.notice is None and "Caddy over nginx" in other.text  # s2 never hears of s1's trouble
    assert again.notice is None  # told once
    assert mended.notice == "memory back on: the flaky stage works again; reminders are on"
    assert "Caddy over nginx" in mended.text
    assert later.notice is None
    assert {state["session"] for state in health_file(services).values()} == {"s1"}


def test_the_trace_says_which_stage_failed_why_and_where(services, flaky_stage):
    step = recall(Message(QUESTION, session="s1"), services, flaky_stage).trace[-1]

    line = flaky.__code__.co_firstlineno + 3  # the raise
    assert (step.stage, step.verdict) == ("flaky", "error")
    assert step.why == f"RuntimeError: the vector index is rebuilding (test_isolation.py:{line} in flaky)"


def test_a_call_with_no_session_has_the_failure_on_its_own_result_and_writes_nothing(services, flaky_stage):
    result = recall(Message(QUESTION), services, flaky_stage)

    assert result.notice == "memory off for this call: the flaky stage: RuntimeError: the vector index is rebuilding"
    assert health_file(services) == {}


def test_a_decider_that_raises_fails_its_call_alone(services):
    class Unready:
        name = "unready decider"
        remote = False

        def decide(self, state, questions):
            raise ValueError("weights not loaded")

    failed = recall(Message(QUESTION, session="s1"), evolve(services, decider=Unready()))
    other = recall(Message(QUESTION, session="s2"), services)

    assert failed.stopped_by == "classify: failed: ValueError" and failed.notice.startswith("memory off: the classify")
    assert other.notice is None and other.text


def test_a_store_of_the_processs_own_that_fails_is_its_sessions_news_alone(services):
    store = MemoryStore(remote=False)
    store.down = True
    local = evolve(services, store=store)
    question = "the celery workers hang after the broker connection reset again"

    failed = recall(Message(question, session="s1"), local)
    other = recall(Message(question, session="s2"), evolve(services, store=MemoryStore(remote=False)))

    assert failed.stopped_by == "search: memory store unavailable"
    assert failed.notice == "memory off: the search stage: memory store: memory store is down; reminders are off"
    assert other.notice is None


def test_a_shared_remote_store_that_is_down_pauses_memory_for_every_session_until_it_answers(services):
    store = MemoryStore()  # remote: a breaker every hook process shares
    shared = evolve(services, store=store)
    question = "the celery workers hang after the broker connection reset again"
    store.down = True

    first = recall(Message(question, session="s1"), shared)
    second = recall(Message(question, session="s2"), shared)
    store.down = False
    held = recall(Message(question, session="s1"), shared)  # within the cool-down: not asked
    services.health.clock.advance(services.config.breaker_cooldown)
    back = recall(Message(question, session="s1"), shared)

    assert first.notice.startswith("memory paused: memory store unreachable since ")
    assert second.notice.startswith("memory paused: memory store unreachable since ")
    assert held.stopped_by == "search: memory store paused" and held.notice is None
    assert back.notice == "memory resumed: memory store answers again; reminders are on"


def test_a_retain_that_failed_unheard_is_told_to_its_session_at_its_next_prompt(services):
    def lost(services, state):
        raise OSError("notes volume unmounted")

    detached = evolve(services, health=services.health.unheard())  # as the Stop hook's detached process
    kept = retain(Exchange("the exporter OOMs nightly", "capped its heap at 1.5 GB", "s1"), detached, [lost])

    told = recall(Message(QUESTION, session="s1"), services, RECALL_STAGES)
    other = recall(Message(QUESTION, session="s2"), services, RECALL_STAGES)

    assert kept.stopped_by == "lost: failed: OSError" and kept.notice is None  # nobody listens there
    assert told.notice == "memory off: the lost stage: OSError: notes volume unmounted; reminders are off"
    assert other.notice is None


def test_old_failures_of_sessions_long_gone_are_forgotten(services, flaky_stage):
    from memsift._runtime import health as _health

    for session in range(_health._REMEMBERED_SESSIONS + 5):
        services.health.clock.advance(1)
        recall(Message(QUESTION, session=f"s{session}"), services, flaky_stage)

    kept = health_file(services)
    assert len(kept) == _health._REMEMBERED_SESSIONS and "the flaky stage in session s0" not in kept


def test_a_failing_call_leaves_the_calls_beside_it_as_they_are_alone(services, flaky_stage):
    alone = recall(Message(QUESTION, session="s0"), services)
    results: dict[str, object] = {}

    def ask(session: str, stages) -> None:
        results[session] = recall(Message(QUESTION, session=session), services, stages)

    threads = [threading.Thread(target=ask, args=(f"s{i}", flaky_stage if i % 2 else RECALL_STAGES))
               for i in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    for i in range(1, 9):
        result = results[f"s{i}"]
        if i % 2:
            assert result.notice.startswith("memory off: the flaky stage")
        else:
            assert (result.text, result.notice, result.stopped_by) == (alone.text, None, alone.stopped_by)


def test_a_project_path_of_its_own_is_not_told_another_sessions_stage_failure(tmp_path, memsift_home, flaky_stage):
    """Two projects, one home: the health file is shared, the failure is not."""
    config = load_config({"MEMSIFT_HOME": str(memsift_home), "MEMSIFT_JUDGE": "lexical"})
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with open_services(config, Path(tmp_path / "a")) as a, open_services(config, Path(tmp_path / "b")) as b:
        recall(Message(QUESTION, session="in-a"), a, flaky_stage)
        told = recall(Message("thanks!", session="in-b"), b)

    assert told.notice is None
