"""The async paths: memsift.arecall and memsift.aretain (memsift/pipeline.py, memsift/_runtime/budget.py).

They run the same stages through the same runner as the sync paths, each
stage in a worker thread: the results and traces are equal, the event loop
is never blocked, and cancelling the task ends the path.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from attrs import evolve

import memsift
from memsift.bench import LoopScenario, Scenario, load_scenario
from memsift.decider.openai_compatible import OpenAICompatibleDecider
from memsift.notes import NotesFile
from memsift.stages import RECALL_STAGES, redact, render
from memsift.stores.sqlite import SQLiteStore
from memsift.types import Exchange, Message, Step

SCENARIOS = sorted((Path(__file__).parents[1] / "benchmarks" / "scenarios").glob("*.json"))


def decided(trace: tuple[Step, ...]) -> list[tuple[object, ...]]:
    """A trace without its timings: what each stage decided and why."""
    return [(s.stage, s.verdict, s.score, s.why, s.usage) for s in trace]


def same_recall(a: memsift.Recall, b: memsift.Recall) -> bool:
    return ((a.text, a.items, a.kind, a.stopped_by, a.notice, decided(a.trace))
            == (b.text, b.items, b.kind, b.stopped_by, b.notice, decided(b.trace)))


def same_retain(a: memsift.Retained, b: memsift.Retained) -> bool:
    return ((a.keep, a.category, a.lines, a.edits, a.stopped_by, a.notice, decided(a.trace))
            == (b.keep, b.category, b.lines, b.edits, b.stopped_by, b.notice, decided(b.trace)))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_arecall_and_aretain_equal_the_sync_paths_over_the_example_scenarios(path, services, tmp_path):
    scenario = load_scenario(path)
    messages, exchanges = _replayed(scenario)
    if isinstance(scenario, Scenario):
        services.notebook.append([n.text for n in scenario.notes])
        services.store.add(scenario.archive, timeout=60)
    services = evolve(services, session_log=None)  # each message judged afresh, by both paths alike
    twin = evolve(services, notebook=NotesFile(tmp_path / "twin-notes.md"),
                  store=SQLiteStore(tmp_path / "twin-store.sqlite"))
    twin.notebook.append(services.notebook.lines())
    if isinstance(scenario, Scenario):
        twin.store.add(scenario.archive, timeout=60)

    recalls = [(memsift.recall(m, services), asyncio.run(memsift.arecall(m, services))) for m in messages]
    retains = [(memsift.retain(e, services), asyncio.run(memsift.aretain(e, twin))) for e in exchanges]

    assert recalls and all(same_recall(sync, done) for sync, done in recalls)
    assert retains and all(same_retain(sync, done) for sync, done in retains)
    assert services.notebook.lines() == twin.notebook.lines()


def _replayed(scenario: Scenario | LoopScenario) -> tuple[list[Message], list[Exchange]]:
    if isinstance(scenario, Scenario):
        return ([Message(t.text, t.before) for t in scenario.messages], [e for e, _ in scenario.retain])
    exchanges = [Exchange(turn.text, answer, session.id) for session in scenario.sessions
                 for turn, answer in session.exchanges]
    return [Message(e.user) for e in exchanges], exchanges


def test_the_loop_keeps_running_while_a_stage_works(services):
    release = threading.Event()
    ticks = 0

    def slow_stage(services, state):
        release.wait(30)
        return state

    async def ticker():
        nonlocal ticks
        while True:
            ticks += 1
            if ticks == 5:
                release.set()  # the stage ends only once the loop has run five times meanwhile
            await asyncio.sleep(0.01)

    async def main():
        beat = asyncio.create_task(ticker())
        result = await memsift.arecall(Message("why did we pick Stripe?"), services, [slow_stage, render])
        beat.cancel()
        return result

    result = asyncio.run(main())

    assert ticks >= 5 and result.stopped_by == "render: nothing to add"


def test_cancelling_the_task_ends_the_path_before_the_next_stage(services):
    started, release = threading.Event(), threading.Event()
    ran = []

    def blocking(services, state):
        started.set()
        release.wait(30)
        return state

    def after(services, state):
        ran.append("after")
        return state

    async def main():
        task = asyncio.create_task(memsift.arecall(Message("why Stripe?"), services, [blocking, after]))
        await asyncio.to_thread(started.wait, 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        await asyncio.sleep(0.05)  # room for the abandoned stage's thread to finish

    asyncio.run(main())

    assert ran == []


def test_a_stage_past_its_budget_ends_the_async_path_as_it_ends_the_sync_one(services):
    services = evolve(services, config=evolve(services.config, decider_deadline=0.05, store_deadline=0.05))
    release = threading.Event()

    def stuck(services, state):
        release.wait(30)
        return state

    stuck_stages = [redact, stuck, render]
    sync = memsift.recall(Message("why did we pick Stripe?"), services, stuck_stages)
    done = asyncio.run(memsift.arecall(Message("why did we pick Stripe?"), services, stuck_stages))
    release.set()

    assert sync.stopped_by == done.stopped_by == "stuck: over its budget"


def test_a_remote_deciders_questions_run_on_the_callers_loop(services):
    """From arecall, the OpenAI-compatible decider's concurrent questions are scheduled by the
    harness's own event loop (its executor), not by threads of memsift's own."""
    threads: list[str] = []

    def chat(request: httpx.Request) -> httpx.Response:
        threads.append(threading.current_thread().name)
        token = "yes"
        return httpx.Response(200, json={
            "choices": [{"message": {"content": token}, "logprobs": {"content": [
                {"token": token, "logprob": -0.1, "top_logprobs": [{"token": "yes", "logprob": -0.1},
                                                                   {"token": "no", "logprob": -2.4}]}]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1}})

    decider = OpenAICompatibleDecider("http://127.0.0.1:9/v1", model="test-model", api_key="sk-test",
                                      deadline=5.0, transport=httpx.MockTransport(chat))
    services = evolve(services, decider=decider, config=evolve(services.config, judged_notes=4))
    services.notebook.append([f"Payments: note {i} on Stripe over Adyen, for the test account." for i in range(4)])
    notes_only = [stage for stage in RECALL_STAGES if stage.__name__ in {"redact", "notes", "render"}]

    async def main():
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(thread_name_prefix="harness-pool"))
        return await memsift.arecall(Message("why did we pick Stripe over Adyen?"), services, notes_only)

    asyncio.run(main())
    memsift.recall(Message("why did we pick Stripe over Adyen?"), services, notes_only)

    asked_async, asked_sync = threads[:4], threads[4:]
    assert len(asked_async) == 4 and all(name.startswith("harness-pool") for name in asked_async)
    assert asked_sync and not any(name.startswith("harness-pool") for name in asked_sync)
