"""Deadlines and lifetimes a harness controls (issue 29): ``recall`` / ``retain`` (and their async twins)
take a deadline and return what is safe past it, without a thread per stage left behind; ``Services``
closes (``close()``, ``with``, ``async with``) and releases every file, socket and thread it held.

The margins checked are generous (a shared machine); what a deadline costs is measured by
benchmarks/bench_deadline.py.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest
from attrs import evolve
from chat_services import OpenAIService

from memsift import Exchange, ServiceUnavailable, Message, arecall, aretain, load_config, open_services, recall, retain
from memsift.pipeline import run
from memsift.stages import Sift, classify, redact, render
from memsift.stages.retain import flush
from memsift.testing import MemoryStore

MARGIN = 1.0  # seconds past a deadline a call may still take on a loaded 2-core machine
NOTE = "Reverse proxy: Caddy over nginx because it renews TLS certificates on its own."
QUESTION = "why did we pick Caddy over nginx for the reverse proxy?"
EXCHANGE = Exchange("the exporter OOMs every night, can you fix it?",
                    "Capped the exporter heap at 1536 MB in deploy/exporter.yaml: the nightly run loads every "
                    "order at once and the box has 2 GB.", "s1")


class Hanging:
    """A decider that never answers until released (a model server stuck mid-request)."""

    name = "hanging decider"

    def __init__(self, release: threading.Event, *, remote: bool = True) -> None:
        self.release, self.remote = release, remote
        self.calls = 0

    def decide(self, state, questions):
        self.calls += 1
        self.release.wait(60)
        raise RuntimeError("answered too late")


class HangingStore(MemoryStore):
    """A store whose first write hangs until released, then times out (a server stuck mid-request)."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__(remote=False)
        self.release, self.hung = release, True

    def add(self, items, *, timeout):
        if self.hung:
            self.release.wait(60)
            self.hung = False
            raise ServiceUnavailable("the write timed out")
        super().add(items, timeout=timeout)


@pytest.fixture
def services(tmp_path, memsift_home):
    project = tmp_path / "shop"
    project.mkdir()
    config = load_config({"MEMSIFT_HOME": str(memsift_home), "MEMSIFT_JUDGE": "lexical",
                          "MEMSIFT_DECIDER_DEADLINE": "30", "MEMSIFT_STORE_DEADLINE": "30"})
    with open_services(config, project) as opened:
        opened.notebook.append([NOTE])
        yield opened


def timed(call):
    t0 = time.perf_counter()
    result = call()
    return result, time.perf_counter() - t0


def worker_threads() -> set[threading.Thread]:
    """The worker threads alive now (those of earlier tests may end meanwhile: compare sets, not counts)."""
    return {thread for thread in threading.enumerate() if thread.name == "memsift-worker" and thread.is_alive()}


# -- a deadline of the call's own ----------------------------------------------------------

def test_past_its_deadline_recall_adds_nothing_and_blames_no_service(services, release):
    hung = evolve(services, decider=Hanging(release))

    result, took = timed(lambda: recall(Message(QUESTION, session="s1"), hung, deadline=0.3))

    assert took < 0.3 + MARGIN
    assert result.text == "" and result.stopped_by == "classify: past the 0.3 s deadline"
    assert result.trace[-1].verdict == "late" and result.notice is None
    assert not (services.config.home / "health.json").exists()  # no breaker opened: the caller was in a hurry


def test_past_its_deadline_arecall_adds_nothing_and_the_loop_goes_on(services, release):
    hung = evolve(services, decider=Hanging(release))

    async def main():
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        beat = asyncio.create_task(tick())
        result = await arecall(Message(QUESTION, session="s1"), hung, deadline=0.3)
        beat.cancel()
        return result, ticks

    (result, ticks), took = timed(lambda: asyncio.run(main()))

    assert took < 0.3 + MARGIN and ticks >= 5
    assert result.stopped_by == "classify: past the 0.3 s deadline" and result.text == ""


def test_a_deadline_never_waits_on_a_stage_that_does_not_call_a_service(services, release):
    def reads_a_fifo(services, state):  # one of the user's: stuck in its own work
        release.wait(60)
        return state

    result, took = timed(lambda: recall(Message(QUESTION), services, [redact, reads_a_fifo, render], deadline=0.2))

    assert took < 0.2 + MARGIN and result.stopped_by == "reads_a_fifo: past the 0.2 s deadline"


def test_past_its_deadline_before_it_is_kept_retain_keeps_nothing(services, release):
    hung = evolve(services, decider=Hanging(release))

    result, took = timed(lambda: retain(EXCHANGE, hung, deadline=0.3))

    assert took < 0.3 + MARGIN
    assert not result.keep and result.lines == () and result.stopped_by == "keep: past the 0.3 s deadline"
    assert services.notebook.lines() == [NOTE]


def test_past_its_deadline_after_the_line_is_written_the_exchange_waits_in_the_outbox(services, release):
    store = HangingStore(release)
    hung = evolve(services, store=store)

    async def main():
        return await aretain(EXCHANGE, hung, deadline=1.5)

    result, took = timed(lambda: asyncio.run(main()))

    assert took < 1.5 + MARGIN
    assert result.lines and result.stopped_by == "sync: past the 1.5 s deadline"
    assert result.lines[0] in services.notebook.lines()
    assert services.outbox.pending() == 1  # the fact line and its exchange, queued
    release.set()  # the write given up on fails in its thread, and lets its batch go
    for _ in range(50):  # the next retain (or SessionEnd) sends it, once that batch is let go
        said = flush(hung, "s1")
        if store.items:
            break
        time.sleep(0.05)
    assert said == "flush: 1 sent, 0 pending"
    assert [item.text for item in store.items.values()] == list(result.lines)


def test_run_takes_the_same_deadline_for_a_path_of_ones_own(services, release):
    def waits(services, state):
        release.wait(60)
        return state

    state, took = timed(lambda: run([redact, waits, classify], services, Sift(message=Message(QUESTION)),
                                    deadline=0.2))

    assert took < 0.2 + MARGIN and state.stopped_by == "waits: past the 0.2 s deadline"


def test_without_a_deadline_a_slow_call_is_still_bounded_by_the_services_own(services, release):
    slow = evolve(services, decider=Hanging(release), config=evolve(services.config, decider_deadline=0.2))

    result, took = timed(lambda: recall(Message(QUESTION, session="s1"), slow))

    assert took < 0.2 + MARGIN and result.stopped_by == "classify: hanging decider unavailable"
    assert result.notice.startswith("memory paused: hanging decider unreachable")  # its own deadline: it is down


# -- threads ---------------------------------------------------------------------------------

def test_a_decider_that_hangs_holds_a_few_threads_however_many_calls_give_up_on_it(services, release):
    decider = Hanging(release, remote=False)  # no breaker to stop the calls: only the cap does
    hung = evolve(services, decider=decider)

    results = [recall(Message(f"{QUESTION} ({i})"), hung, deadline=0.1) for i in range(12)]
    held = services._workers.threads()
    release.set()
    time.sleep(0.2)

    assert all(r.text == "" for r in results)
    assert decider.calls == services._workers.STUCK  # past that many stuck calls, no thread is started for it
    assert held <= services._workers.STUCK + 2  # the stuck calls, and a stage or two: not one a stage
    assert {r.stopped_by for r in results[services._workers.STUCK:]} == {"classify: hanging decider unavailable"}


def test_the_threads_of_a_path_are_reused(services):
    for i in range(20):
        recall(Message(f"{QUESTION} ({i})", session="s1"), services)
        retain(evolve(EXCHANGE, user=f"{EXCHANGE.user} ({i})"), services)

    assert services._workers.threads() <= 2


# -- closing -----------------------------------------------------------------------------------

def open_descriptors() -> set[str]:
    return {os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
            if os.path.exists(f"/proc/self/fd/{fd}")}


def used(services) -> None:
    retain(EXCHANGE, services)
    recall(Message(QUESTION, session="s1"), services)
    assert services.outbox.pending() == 0


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
def test_leaving_with_releases_every_file_socket_and_thread(tmp_path, memsift_home):
    project = tmp_path / "shop"
    project.mkdir()
    with OpenAIService() as service:  # its own sockets, server side, are counted in before
        before, threads = open_descriptors(), worker_threads()
        config = load_config({"MEMSIFT_HOME": str(memsift_home), "MEMSIFT_JUDGE": "lexical",
                              "MEMSIFT_DECIDER_URL": service.base_url, "MEMSIFT_DECIDER_MODEL": "gpt-4.1-mini",
                              "MEMSIFT_DECIDER_BY_TASK": "answers=openai,worth=openai"})
        with open_services(config, project) as services:
            services.notebook.append([NOTE])
            used(services)
            during = open_descriptors() - before
        for _ in range(40):  # the server's side of each connection closes once it reads the client's end
            if not open_descriptors() - before:
                break
            time.sleep(0.05)
        after = open_descriptors() - before

    assert any(name.endswith("store.sqlite") for name in during) and any("socket:" in name for name in during)
    assert after == set() and worker_threads() - threads == set()


def test_leaving_async_with_releases_them_too(tmp_path, memsift_home):
    project = tmp_path / "shop"
    project.mkdir()
    config = load_config({"MEMSIFT_HOME": str(memsift_home), "MEMSIFT_JUDGE": "lexical"})
    threads = worker_threads()

    async def main():
        async with open_services(config, project) as services:
            await aretain(EXCHANGE, services)
            await arecall(Message(QUESTION, session="s1"), services)
        return services

    services = asyncio.run(main())

    assert services.store._db is None and services.outbox._db is None and worker_threads() - threads == set()


def test_closed_services_run_no_path(services):
    services.close()
    services.close()  # idempotent

    with pytest.raises(RuntimeError, match="these services are closed"):
        recall(Message(QUESTION), services)
    with pytest.raises(RuntimeError, match="these services are closed"):
        asyncio.run(aretain(EXCHANGE, services))


def test_closing_releases_a_thread_given_up_on_once_its_call_returns(services, release):
    recall(Message(QUESTION), evolve(services, decider=Hanging(release, remote=False)), deadline=0.1)
    stuck = services._workers.threads()

    threading.Timer(0.3, release.set).start()
    services.close()  # waits a while for the stuck call, released meanwhile

    assert stuck >= 1 and services._workers.threads() == 0
