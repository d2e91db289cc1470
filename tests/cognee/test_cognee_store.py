"""CogneeStore against a real Cognee 1.6.5 server (real embeddings, stand-in LLM)."""

from __future__ import annotations

import re
import time
import uuid
from collections import Counter

import httpx
import pytest
from proxy import Proxy
from server import PASSWORD, USER

from examples import INCIDENT
from memsift.config import load_config
from memsift.errors import ConfigurationError
from memsift.pipeline import retain
from memsift.services import open_services
from memsift.stores.cognee import CogneeStore
from memsift.testing import check_store
from memsift.types import Exchange, Item, Store

pytestmark = pytest.mark.cognee  # `pytest -m "not cognee"` skips the real servers

# Four memories, and for each a question that shares almost none of its words.
MEMORIES = {
    "lighthouse": ("The Zephyrine lighthouse on Kessel Point was kept by Marta Oyelaran "
                   "until it was automated in 1987.",
                   "who looked after the beacon on the coast"),
    "payments": ("We chose Stripe over Adyen because Adyen wants a sales call before it "
                 "hands out test keys.",
                 "why did we not go with the other card processor"),
    "turbine": ("Quarterly maintenance report: the tidal turbine array near Brannock Sound "
                "needs new bearings before the autumn storms.",
                "machinery repairs needed before bad weather"),
    "sessions": ("Redis is only a cache here; the source of truth for user sessions is Postgres.",
                 "which database holds login state for good"),
}


def memory(key: str, text: str | None = None) -> Item:
    return Item(id=key, text=text or MEMORIES[key][0], origin="passage", source="test")


def fresh_dataset() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z]+", text.lower()) if len(word) > 3}


def raw_chunks(url: str, dataset: str, query: str, headers: dict | None = None) -> list[dict]:
    """Every chunk the server returns for *query*, straight from its API."""
    answer = httpx.post(f"{url}/api/v1/search", headers=headers, timeout=30, json={
        "search_type": "CHUNKS", "query": query, "datasets": [dataset], "top_k": 100,
        "node_name": [f"memsift:{dataset}"]}).json()
    if answer and "search_result" in answer[0]:
        return [chunk for entry in answer for chunk in entry["search_result"]]
    return answer


def stored_names(url: str, dataset: str, headers: dict | None = None) -> list[str]:
    """The names of the documents in *dataset*, straight from the server."""
    datasets = httpx.get(f"{url}/api/v1/datasets", headers=headers, timeout=30).json()
    dataset_id = next(d["id"] for d in datasets if d["name"] == dataset)
    data = httpx.get(f"{url}/api/v1/datasets/{dataset_id}/data", headers=headers, timeout=30)
    return [row["name"] for row in data.json()]


@pytest.fixture
def store(cognee_server):
    store = CogneeStore(cognee_server.url, dataset=fresh_dataset())
    yield store
    store.close()


def test_it_follows_the_store_protocol(store):
    assert isinstance(store, Store)
    assert store.name == f"Cognee at {store.url}"


@pytest.mark.slow  # every promise of the kit against a real server: 15 s (pytest -m slow)
def test_it_keeps_the_store_contract_of_the_conformance_kit(cognee_server):
    check_store(lambda: CogneeStore(cognee_server.url, dataset=fresh_dataset()), settle=lambda s: s.settle(600),
                timeout=180)  # cognify runs in the background, and the machine may be shared


def test_a_dataset_that_does_not_exist_yet_has_nothing_to_find(store):
    assert store.search("anything at all", limit=5, timeout=12) == []


def test_a_dataset_never_cognified_has_nothing_to_find(store):
    httpx.post(f"{store.url}/api/v1/datasets", json={"name": store.dataset}).raise_for_status()

    assert store.search("anything at all", limit=5, timeout=12) == []


def test_passages_are_found_by_meaning_with_few_words_in_common(store):
    store.add([memory(key) for key in MEMORIES], timeout=60)
    store.settle(120)

    for key, (text, question) in MEMORIES.items():
        assert len(words(question) & words(text)) <= 1
        found = store.search(question, limit=2, timeout=12)
        assert found[0].id == key, (question, found)
        assert found[0] == Item(key, text, "passage", f"cognee:{store.dataset}", found[0].score)
        assert 0 < found[0].score <= 1 and found[0].score > found[1].score


def test_a_search_makes_no_llm_call(store, standin_llm):
    store.add([memory("payments")], timeout=60)
    store.settle(120)
    before = standin_llm.calls()

    store.search("why not the other card processor", limit=3, timeout=12)
    store.search("who kept the lighthouse", limit=3, timeout=12)
    assert standin_llm.calls() == before


def test_adding_the_same_items_again_stores_each_once(store):
    items = [memory("lighthouse"), memory("payments")]
    for _ in range(3):
        store.add(items, timeout=60)
    store.settle(120)

    assert sorted(stored_names(store.url, store.dataset)) == ["lighthouse", "payments"]
    chunks = raw_chunks(store.url, store.dataset, "lighthouse keeper or payment provider")
    assert Counter(chunk["document_name"] for chunk in chunks) == {"lighthouse": 1, "payments": 1}


def test_an_item_with_new_text_replaces_the_stored_one(store):
    store.add([memory("sessions"), memory("turbine")], timeout=60)
    store.settle(120)
    moved = "Sessions moved to Redis with append-only persistence in March; Postgres keeps none."

    store.add([memory("sessions", moved), memory("payments")], timeout=60)
    store.settle(120)

    found = {item.id: item.text for item in store.search("where do sessions live", limit=5,
                                                           timeout=12)}
    assert found == {"sessions": moved, "turbine": MEMORIES["turbine"][0],
                     "payments": MEMORIES["payments"][0]}
    chunks = raw_chunks(store.url, store.dataset, "where do sessions live")
    assert Counter(chunk["document_name"] for chunk in chunks)["sessions"] == 1


def test_any_item_id_comes_back_as_it_went_in(store):
    ids = ["notes.md:12", "a/b c", "ünïcode-ĩd", "x.txt", "100% sure?", "note-3f2a9c81d0e4"]
    store.add([Item(item_id, f"Fact {n}: the build cache lives in bucket number {n}.",
                    "passage", "test") for n, item_id in enumerate(ids)], timeout=60)
    store.settle(120)

    found = store.search("where is the build cache", limit=10, timeout=12)
    assert sorted(item.id for item in found) == sorted(ids)


def test_a_dataset_sees_only_its_own_passages_even_without_access_control(cognee_server):
    ours = CogneeStore(cognee_server.url, dataset=fresh_dataset())
    theirs = CogneeStore(cognee_server.url, dataset=fresh_dataset())
    ours.add([memory("lighthouse")], timeout=60)
    theirs.add([memory("turbine"), memory("payments")], timeout=60)
    ours.settle(120)
    theirs.settle(120)

    assert [item.id for item in ours.search("storms and bearings", limit=5, timeout=12)] == [
        "lighthouse"]


def test_a_server_that_is_not_cognee_is_a_configuration_error(standin_llm):
    with pytest.raises(ConfigurationError, match="404"):
        CogneeStore(standin_llm.url).search("anything", limit=3, timeout=5)


# -- access control on: login, bearer tokens, API keys, per-dataset answers --

def login_headers(url: str) -> dict[str, str]:
    token = httpx.post(f"{url}/api/v1/auth/login", data={"username": USER, "password": PASSWORD},
                       timeout=30).json()["access_token"]
    return {"Authorization": f"Bearer {token}"}


def test_with_a_login_passages_come_back_from_per_dataset_answers(cognee_auth_server):
    store = CogneeStore(cognee_auth_server.url, dataset=fresh_dataset(), user=USER,
                        password=PASSWORD)
    assert store.search("anything", limit=3, timeout=12) == []
    store.add([memory("payments"), memory("lighthouse")], timeout=60)
    store.settle(120)

    found = store.search(MEMORIES["payments"][1], limit=3, timeout=12)
    assert [item.id for item in found] == ["payments", "lighthouse"]
    # the answer this came from is the per-dataset shape
    headers = login_headers(cognee_auth_server.url)
    answer = httpx.post(f"{cognee_auth_server.url}/api/v1/search", headers=headers, json={
        "search_type": "CHUNKS", "query": "payments", "datasets": [store.dataset]}).json()
    assert answer[0]["dataset_name"] == store.dataset and "search_result" in answer[0]


def test_an_expired_token_is_renewed_with_one_new_login(cognee_auth_server):
    with Proxy(cognee_auth_server.url) as proxy:
        store = CogneeStore(proxy.url, dataset=fresh_dataset(), user=USER, password=PASSWORD)
        store.add([memory("turbine")], timeout=60)
        store.settle(120)
        assert store.search("repairs before bad weather", limit=1, timeout=12)
        time.sleep(cognee_auth_server.token_lifetime + 1)
        seen = len(proxy.requests)

        assert [item.id for item in store.search("repairs before bad weather", limit=1,
                                                 timeout=12)] == ["turbine"]
        assert proxy.requests[seen:] == [
            "POST /api/v1/search", "POST /api/v1/auth/login", "POST /api/v1/search"]


def test_an_api_key_works_without_any_login(cognee_auth_server):
    created = httpx.post(f"{cognee_auth_server.url}/api/v1/auth/api-keys",
                         headers=login_headers(cognee_auth_server.url),
                         json={"name": "memsift-test"}, timeout=30).json()
    with Proxy(cognee_auth_server.url) as proxy:
        store = CogneeStore(proxy.url, dataset=fresh_dataset(), api_key=created["key"])
        store.add([memory("lighthouse")], timeout=60)
        store.settle(120)

        assert [item.id for item in store.search(MEMORIES["lighthouse"][1], limit=1,
                                                 timeout=12)] == ["lighthouse"]
        assert "POST /api/v1/auth/login" not in proxy.requests


def test_no_credentials_for_a_server_that_wants_them_is_a_configuration_error(cognee_auth_server):
    store = CogneeStore(cognee_auth_server.url, dataset=fresh_dataset())

    with pytest.raises(ConfigurationError, match=r"401.*Authentication required"):
        store.search("anything", limit=3, timeout=12)


def test_what_retain_sends_to_cognee_is_redacted(cognee_server, tmp_path):
    token = "ghp_R8sT2vW9xY4zA7bC1dE5fG3hJ6kL0mN2pQ4r"
    dataset = fresh_dataset()
    services = open_services(load_config({
        "MEMSIFT_HOME": str(tmp_path), "MEMSIFT_STORE": "cognee", "MEMSIFT_COGNEE_URL": cognee_server.url,
        "MEMSIFT_DATASET": dataset}), tmp_path)
    exchange = Exchange(INCIDENT.user, f"{INCIDENT.assistant} The export job now reads its token {token}.")

    result = retain(exchange, services)
    services.store.settle(60)

    assert result.keep and services.outbox.pending() == 0
    chunks = raw_chunks(cognee_server.url, services.store.dataset, "nightly export out of memory")
    assert chunks and all(token not in chunk["text"] for chunk in chunks)
    assert any("[REDACTED:github-token]" in chunk["text"] for chunk in chunks)


def test_a_kept_fact_comes_back_with_its_exchange_from_search_and_by_its_id(store):
    fact = ("Sessions live in Postgres, Redis is only a cache: a Redis restart logged everyone out. "
            "(decision 2026-12-01 ex-5e551045)")
    exchange = "where should login sessions live?\n\nIn Postgres: when Redis restarted in May, everyone was logged out."
    store.add([Item("ex-5e551045", fact, "passage", "memsift:decision", exchange=exchange),
               memory("turbine")], timeout=60)
    store.settle(120)

    found = {item.id: item for item in store.search("which database holds login state", limit=5, timeout=12)}

    assert (found["ex-5e551045"].text, found["ex-5e551045"].exchange) == (fact, exchange)
    assert (found["turbine"].text, found["turbine"].exchange) == (MEMORIES["turbine"][0], "")
    kept = store.get("ex-5e551045")
    assert kept is not None and (kept.text, kept.exchange, kept.source) == (fact, exchange, store.source)
    assert store.get("ex-00000000") is None
