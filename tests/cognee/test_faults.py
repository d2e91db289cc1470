"""Faults on a real Cognee server: killed, restarted, stalled, refusing us.

The paths run as a hook runs them: ``open_services`` from the configuration,
then ``recall`` and ``retain``. Recall runs the every-message pipeline, whose
store search is the same stage memsift's own pipeline uses, so every message
reaches the store; retain runs its store sync after a stage that keeps the
exchange. The server has access control on and memsift logs in.
"""

from __future__ import annotations

import re
import time
import uuid

import httpx
import pytest
from attrs import evolve
from proxy import Proxy
from server import PASSWORD, USER, CogneeServer

from memsift.config import load_config
from memsift.errors import ConfigurationError, DeadlineExceeded
from memsift._keeping.outbox import Outbox
from memsift.pipeline import recall, retain
from memsift.services import open_services
from memsift.stages import EVERY_MESSAGE_STAGES, distill, redact_exchange, sync
from memsift.stores.cognee import CogneeStore
from memsift.types import Category, Exchange, Item, Message

pytestmark = pytest.mark.cognee  # `pytest -m "not cognee"` skips the real servers

MEMORY = Item("payments", "We chose Stripe over Adyen because Adyen wants a sales call before "
              "it hands out test keys.", "passage", "notes.md:3")
QUESTION = "why did we not go with the other card processor"
DEADLINE = 12.0  # memsift's default store deadline
STALL_DEADLINE = 3.0  # a shorter one where the test waits it out
COOLDOWN = 1.0


@pytest.fixture(scope="module")
def fault_server(cognee_installation, standin_llm, tmp_path_factory):
    """A server of this module's own, since these tests kill it."""
    with CogneeServer(cognee_installation, tmp_path_factory.mktemp("cognee-home"),
                      llm_url=standin_llm.url, auth=True) as server:
        yield server


@pytest.fixture
def server(fault_server):
    if not fault_server.running:  # a test before this one left it dead
        fault_server.start()
    return fault_server


def services_for(url: str, home, deadline: float = DEADLINE, **settings):
    """What a hook would open with MEMSIFT_STORE=cognee pointing at *url*."""
    config = load_config({
        "MEMSIFT_HOME": str(home), "MEMSIFT_STORE": "cognee", "MEMSIFT_COGNEE_URL": url,
        "MEMSIFT_COGNEE_USER": USER, "MEMSIFT_COGNEE_PASSWORD": PASSWORD,
        "MEMSIFT_DATASET": f"faults-{uuid.uuid4().hex[:8]}",
        "MEMSIFT_STORE_DEADLINE": str(deadline), "MEMSIFT_BREAKER_COOLDOWN": str(COOLDOWN),
        **settings})
    return open_services(config, project_root=home / "project")


def keep_it(services, state):
    """Stands in for the keep decision: these tests are about what happens after it."""
    return evolve(state, keep=True, category=Category.DECISION)


RETAIN_TO_STORE = (redact_exchange, keep_it, distill, sync)  # distill: the store keeps the fact line


def exchange(n: int, session: str = "s1") -> Exchange:
    return Exchange(f"Which queue do we use for job {n}?",
                    f"Job {n} runs on the Postgres-backed queue; Redis lost jobs {n} times.", session)


def timed_recall(text: str, services, session: str = "s1"):
    started = time.monotonic()
    result = recall(Message(text, session=session), services, EVERY_MESSAGE_STAGES)
    return result, time.monotonic() - started


def stored_names(url: str, dataset: str) -> list[str]:
    """The document names in *dataset*, asked of the server directly."""
    token = httpx.post(f"{url}/api/v1/auth/login", data={"username": USER, "password": PASSWORD},
                       timeout=30).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    datasets = httpx.get(f"{url}/api/v1/datasets", headers=headers, timeout=30).json()
    dataset_id = next(d["id"] for d in datasets if d["name"] == dataset)
    rows = httpx.get(f"{url}/api/v1/datasets/{dataset_id}/data", headers=headers, timeout=30)
    return sorted(row["name"] for row in rows.json())


@pytest.mark.slow  # kills, restarts or stalls a real server: 29 s (pytest -m slow)
def test_killed_mid_session_memory_pauses_with_one_notice_and_retained_items_wait(server, tmp_path):
    services = services_for(server.url, tmp_path)
    store = services.store
    store.add([MEMORY], timeout=60)
    store.settle(120)
    assert recall(Message(QUESTION, session="s1"), services, EVERY_MESSAGE_STAGES).items

    server.kill()
    paused, took = timed_recall(QUESTION, services)
    assert (paused.text, paused.items) == ("", ())
    assert re.fullmatch(f"memory paused: Cognee at {server.url} unreachable since "
                        r"\d\d:\d\d; reminders are off", paused.notice)
    assert took < DEADLINE + 2

    again, _ = timed_recall(QUESTION, services)
    assert (again.text, again.notice) == ("", None)  # told once per session
    assert "paused" in again.stopped_by  # the breaker answered, not the network
    assert timed_recall(QUESTION, services, session="s2")[0].notice == paused.notice

    kept = retain(exchange(1), services, RETAIN_TO_STORE)
    assert kept.keep and services.outbox.pending() == 1

    server.start()
    time.sleep(COOLDOWN + 0.1)
    back, _ = timed_recall(QUESTION, services)
    assert [item.id for item in back.items] == ["payments"], (back.stopped_by, back.trace)
    assert back.notice == f"memory resumed: Cognee at {server.url} answers again; reminders are on"
    assert timed_recall(QUESTION, services)[0].notice is None


@pytest.mark.slow  # kills, restarts or stalls a real server: 21 s (pytest -m slow)
def test_restarted_the_outbox_drains_and_each_item_is_stored_once(server, tmp_path):
    services = services_for(server.url, tmp_path)
    first = retain(exchange(0), services, RETAIN_TO_STORE)  # logs in and creates the dataset
    assert services.outbox.pending() == 0, first.trace

    server.kill()
    for n in (1, 2, 3):
        retain(exchange(n), services, RETAIN_TO_STORE)
    assert services.outbox.pending() == 3

    server.start()
    time.sleep(COOLDOWN + 0.1)
    done = retain(exchange(4), services, RETAIN_TO_STORE)
    assert services.outbox.pending() == 0, done.trace
    retain(exchange(4), services, RETAIN_TO_STORE)  # a repeat queues nothing new
    services.store.settle(120)

    names = stored_names(server.url, services.store.dataset)
    assert len(names) == len(set(names)) == 5
    found = services.store.search("which queue runs the jobs", limit=10, timeout=12)
    assert len(found) == 5 and len({item.id for item in found}) == 5


@pytest.mark.slow  # kills, restarts or stalls a real server: 18 s (pytest -m slow)
def test_stalled_the_deadlines_hold_and_a_lost_answer_never_duplicates(server, tmp_path):
    with Proxy(server.url) as proxy:
        services = services_for(proxy.url, tmp_path, deadline=STALL_DEADLINE)
        store: CogneeStore = services.store
        store.add([MEMORY], timeout=60)
        store.settle(120)

        proxy.hold()
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            store.search(QUESTION, limit=3, timeout=STALL_DEADLINE)
        assert time.monotonic() - started < STALL_DEADLINE + 2

        paused, took = timed_recall(QUESTION, services)
        assert paused.text == "" and paused.notice.startswith("memory paused:")
        assert took < STALL_DEADLINE + 2

        # An add the server carries out while its answer is held: the outbox cannot
        # know it arrived, so before sending it again it asks, and sends nothing twice.
        outbox = Outbox(tmp_path / "other-outbox.sqlite")
        late = Item("late", "The nightly export writes to the cold bucket at 02:00 UTC.",
                    "passage", "x")
        outbox.put([late])
        with pytest.raises(DeadlineExceeded):
            outbox.drain(store, timeout=STALL_DEADLINE)
        assert outbox.pending() == 1
        while stored_names(server.url, store.dataset) != ["late", "payments"]:
            time.sleep(0.2)  # the server is still carrying it out

        proxy.release()
        seen = len(proxy.requests)
        assert outbox.drain(store, timeout=60) == 1
        asked = proxy.requests[seen:]
        assert "POST /api/v1/add" not in asked and re.fullmatch(r"GET /api/v1/datasets/[-0-9a-f]+/data", asked[0])
        assert proxy.requests.count("POST /api/v1/add") == 2  # MEMORY's, and the late one's: once
        store.settle(120)
        assert stored_names(server.url, store.dataset) == ["late", "payments"]
        chunks = [item.id for item in store.search("when does the export run", limit=10,
                                                    timeout=12)]
        assert sorted(chunks) == ["late", "payments"]  # cognified, though its add's answer was lost


def test_a_server_error_is_told_as_one_with_its_status_and_the_exchange_waits(server, tmp_path):
    services = services_for(server.url, tmp_path, MEMSIFT_BREAKER_COOLDOWN="60")
    data = server.home / "data"
    aside = data.with_name("data-aside")
    data.rename(aside)
    data.write_text("a file where Cognee keeps its data folder: every add fails with a 500")
    try:
        failed = retain(exchange(1), services, RETAIN_TO_STORE)
        told = timed_recall(QUESTION, services, session="s2")[0]
    finally:
        data.unlink()
        aside.rename(data)

    assert failed.stopped_by == f"sync: Cognee at {server.url} failing (answered 500)"
    assert re.fullmatch(f"memory paused: Cognee at {server.url} answers with a server error \\(500\\) "
                        r"since \d\d:\d\d; reminders are off", told.notice)
    assert services.outbox.pending() == 1
    assert services.outbox.drain(services.store, timeout=60) == 1  # the folder is back: it goes


def test_a_wrong_key_is_a_configuration_error_asked_once_and_never_retried(server, tmp_path):
    with Proxy(server.url) as proxy:
        store = CogneeStore(proxy.url, dataset="faults", api_key="not-a-key")
        with pytest.raises(ConfigurationError, match="401"):
            store.search(QUESTION, limit=3, timeout=DEADLINE)
        assert proxy.requests == ["POST /api/v1/search"]

        wrong_password = CogneeStore(proxy.url, dataset="faults", user=USER, password="wrong")
        with pytest.raises(ConfigurationError, match="LOGIN_BAD_CREDENTIALS"):
            wrong_password.add([MEMORY], timeout=DEADLINE)
        assert proxy.requests[1:] == ["POST /api/v1/auth/login"]

        services = services_for(proxy.url, tmp_path, MEMSIFT_COGNEE_USER="",
                                MEMSIFT_COGNEE_PASSWORD="", MEMSIFT_COGNEE_API_KEY="not-a-key")
        seen = len(proxy.requests)
        results = [timed_recall(QUESTION, services)[0] for _ in range(5)]
        assert all(result.text == "" for result in results)
        assert "refused us" in results[0].stopped_by
        # memory pauses, said once, rather than going quiet without a word
        assert [bool(result.notice) for result in results] == [True, False, False, False, False]
        asked = proxy.requests[seen:]
        assert 1 <= len(asked) <= 5 and set(asked) == {"POST /api/v1/search"}  # never a storm
