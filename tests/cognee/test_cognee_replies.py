"""How CogneeStore reads every answer Cognee gives, on httpx.MockTransport (no server).

The bodies are the shapes a real Cognee 1.6.5 server sends (seen in the tests
against it); here each is replayed on its own, including the rare ones.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from memsift.config import load_config
from memsift.errors import ConfigurationError, DeadlineExceeded, ServerError, ServiceUnavailable
from memsift.stores.cognee import CogneeStore
from memsift.types import Item

URL = "http://cognee.test"
DATASET_ID = "e1e41a21-ce15-5ab4-9bbd-afd15f4d44d7"


def chunk(name: str, text: str, distance: float, node_set: str = "memsift:memsift") -> dict:
    return {"id": f"chunk-{name}-{distance}", "text": text, "document_name": name,
            "document_id": f"doc-{name}", "chunk_index": 0, "score": distance,
            "belongs_to_set": [node_set]}


class Server:
    """Answers by "METHOD /path" from a table; records what was asked."""

    def __init__(self, routes: dict[str, Callable[[httpx.Request], httpx.Response] | list]) -> None:
        self.routes = routes
        self.asked: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        key = f"{request.method} {request.url.path}"
        self.asked.append(key)
        answer = self.routes[key]
        if isinstance(answer, list):  # one answer per call, the last one repeated
            answer = answer.pop(0) if len(answer) > 1 else answer[0]
        return answer(request) if callable(answer) else answer

    def store(self, **options) -> CogneeStore:
        return CogneeStore(URL, dataset="memsift", transport=httpx.MockTransport(self), **options)


def reply(status: int, body) -> httpx.Response:
    return httpx.Response(status, json=body)


def search_answering(*answers: httpx.Response) -> Server:
    return Server({"POST /api/v1/search": list(answers)})


def test_a_bare_list_of_chunks_becomes_items_best_first_one_per_item():
    server = search_answering(reply(200, [
        chunk("payments", "We chose Stripe.", 0.41), chunk("lighthouse", "Marta kept it.", 0.9),
        chunk("payments", "(second chunk of the same item)", 0.7)]))

    found = server.store().search("why Stripe?", limit=5, timeout=5)
    assert found == [Item("payments", "We chose Stripe.", "passage", "cognee:memsift", 1 - 0.41),
                     Item("lighthouse", "Marta kept it.", "passage", "cognee:memsift", 1 - 0.9)]


def test_per_dataset_answers_are_read_too():
    server = search_answering(reply(200, [
        {"dataset_id": DATASET_ID, "dataset_name": "memsift", "dataset_tenant_id": None,
         "search_result": [chunk("a%2Fb%2Etxt", "An id with a slash and a dot.", 0.2)]}]))

    assert [item.id for item in server.store().search("q", limit=5, timeout=5)] == ["a/b.txt"]


def test_a_chunk_of_another_scope_is_never_an_item_whatever_the_server_returns():
    other = chunk("acme", "The acme exporter uses the Postgres queue.", 0.1, node_set="memsift:memsift-acme")
    unmarked = chunk("unmarked", "A chunk that does not say its node set.", 0.2)
    del unmarked["belongs_to_set"]
    server = search_answering(reply(200, [other, unmarked, chunk("ours", "Our own.", 0.5)]),
                              reply(200, [
                                  {"dataset_id": "x", "dataset_name": "memsift-acme",
                                   "search_result": [chunk("theirs", "Filed under our node set.", 0.1)]},
                                  {"dataset_id": DATASET_ID, "dataset_name": "memsift",
                                   "search_result": [chunk("ours", "Our own.", 0.5)]}]))
    store = server.store()

    assert [item.id for item in store.search("queue", limit=5, timeout=5)] == ["ours"]
    assert [item.id for item in store.search("queue", limit=5, timeout=5)] == ["ours"]


def test_a_node_set_named_as_a_string_is_compared_whole_never_as_a_substring():
    """Issue 27: `in` on a string is a substring test; scopes are sets of exact names."""
    theirs = chunk("fork", "Filed under a node set that holds ours.", 0.1, node_set="memsift:memsift-fork")
    theirs["belongs_to_set"] = "memsift:memsift-fork"
    ours_as_string = chunk("ours", "Our own, its node set a string.", 0.4)
    ours_as_string["belongs_to_set"] = "memsift:memsift"
    server = search_answering(reply(200, [theirs, ours_as_string]),
                              reply(200, [{"dataset_name": "memsift-fork", "search_result": [theirs]},
                                          {"search_result": [ours_as_string]}]))
    store = server.store()

    assert [item.id for item in store.search("queue", limit=5, timeout=5)] == ["ours"]
    assert store.search("queue", limit=5, timeout=5) == []  # an object that names no dataset is none of ours


def test_a_search_answer_past_its_cap_is_a_failure_not_a_result():
    from memsift.stores.cognee import SEARCH_BYTES

    server = search_answering(reply(200, [chunk("big", "x" * SEARCH_BYTES, 0.1)]))

    with pytest.raises(ServiceUnavailable, match=f"answered .* the {SEARCH_BYTES} "):
        server.store().search("q", limit=5, timeout=5)


def test_the_search_asks_for_chunks_of_memsift_s_own_node_set():
    seen = []
    server = Server({"POST /api/v1/search": lambda request: (
        seen.append(json.loads(request.content)), reply(200, []))[1]})

    server.store().search("why Stripe?", limit=4, timeout=5)
    assert seen == [{"search_type": "CHUNKS", "query": "why Stripe?", "datasets": ["memsift"],
                     "top_k": 4, "node_name": ["memsift:memsift"]}]


@pytest.mark.parametrize("detail", [
    "Dataset(s) not found: 'memsift'. Dataset names resolve only among the datasets you own "
    "in the current tenant; pass dataset_ids for datasets shared with you. [DatasetNotFoundError]",
    "No searchable memory in dataset 'memsift' (id: 1): No data found in the system, please "
    "add data first. [NoDataError]",
])
def test_no_dataset_or_no_data_yet_is_an_empty_result(detail):
    assert search_answering(reply(404, {"detail": detail})).store().search(
        "q", limit=5, timeout=5) == []


@pytest.mark.parametrize(("status", "body", "error", "said"), [
    (401, {"detail": "Authentication required (auth posture: default)"}, ConfigurationError,
     "401: Authentication required"),
    (403, {"detail": "Request owner does not have necessary permission: [read] "
                     "[PermissionDeniedError]"}, ConfigurationError, "403: Request owner"),
    (404, {"detail": "Not Found"}, ConfigurationError, "404: Not Found; is MEMSIFT_COGNEE_URL"),
    (400, {"detail": [{"loc": ["body", "query"], "msg": "Field required"}], "body": {}},
     ConfigurationError, "400: Field required"),
    (422, {"error": "Unknown scope"}, ConfigurationError, "422: Unknown scope"),
    (402, {"error": "Token budget exhausted", "detail": "monthly cap"}, ServerError,
     "402: Token budget exhausted: monthly cap"),
    (409, {"error": "An error occurred during recall."}, ServerError, "409: An error"),
    (500, {"error": "Internal server error", "detail": "lancedb is gone"}, ServerError,
     "500: Internal server error: lancedb is gone"),
    (500, {"message": "Dataset (x) not found."}, ServerError, "500: Dataset (x)"),
])
def test_each_error_answer_becomes_a_clear_memsift_error_asked_once(status, body, error, said):
    server = search_answering(reply(status, body))

    with pytest.raises(error, match=f"^Cognee at {URL} answered {re.escape(said)}") as raised:
        server.store().search("q", limit=5, timeout=5)
    assert server.asked == ["POST /api/v1/search"]  # none of these is tried again
    if error is ServerError:  # the server failing is no outage: its status says what it is
        assert raised.value.status == status


def test_a_server_not_ready_yet_is_tried_again_within_the_deadline():
    server = search_answering(reply(503, {"status": "not ready"}),
                              reply(200, [chunk("a", "text", 0.5)]))

    assert [item.id for item in server.store().search("q", limit=5, timeout=5)] == ["a"]
    assert server.asked == ["POST /api/v1/search"] * 2


def test_a_server_that_stays_unready_is_unavailable_after_three_tries():
    server = search_answering(reply(503, {"status": "not ready"}))

    with pytest.raises(ServiceUnavailable, match="503"):
        server.store().search("q", limit=5, timeout=5)
    assert len(server.asked) == 3


def test_a_refused_connection_is_tried_three_times_then_unavailable():
    def refuse(request):
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    server = Server({"POST /api/v1/search": refuse})
    with pytest.raises(ServiceUnavailable, match=r"unreachable: .*Connection refused"):
        server.store().search("q", limit=5, timeout=5)
    assert len(server.asked) == 3


def test_a_timeout_is_past_the_deadline_and_not_tried_again():
    def too_slow(request):
        raise httpx.ReadTimeout("timed out", request=request)

    server = Server({"POST /api/v1/search": too_slow})
    with pytest.raises(DeadlineExceeded):
        server.store().search("q", limit=5, timeout=5)
    assert len(server.asked) == 1


def test_an_answer_that_is_not_json_means_the_service_is_not_working():
    server = search_answering(httpx.Response(200, text="<html>proxy error</html>"))

    with pytest.raises(ServiceUnavailable, match="not JSON"):
        server.store().search("q", limit=5, timeout=5)


# -- logging in -----------------------------------------------------------------

def token_answers(*tokens: str) -> list[httpx.Response]:
    return [reply(200, {"access_token": token, "token_type": "bearer"}) for token in tokens]


def test_a_login_gives_the_bearer_token_sent_after_it():
    bearers = []
    server = Server({
        "POST /api/v1/auth/login": token_answers("t1"),
        "POST /api/v1/search": lambda request: (
            bearers.append(request.headers["Authorization"]), reply(200, []))[1]})
    store = server.store(user="me@example.com", password="secret")

    store.search("q", limit=5, timeout=5)
    store.search("q", limit=5, timeout=5)
    assert bearers == ["Bearer t1", "Bearer t1"]  # one login per process, not per call
    assert server.asked.count("POST /api/v1/auth/login") == 1


def test_a_401_brings_one_new_login_and_the_call_again():
    server = Server({
        "POST /api/v1/auth/login": token_answers("old", "new"),
        "POST /api/v1/search": [reply(200, []), reply(401, {"detail": "expired"}), reply(200, [])]})
    store = server.store(user="me@example.com", password="secret")
    store.search("q", limit=5, timeout=5)

    assert store.search("q", limit=5, timeout=5) == []
    assert server.asked == ["POST /api/v1/auth/login", "POST /api/v1/search",
                            "POST /api/v1/search", "POST /api/v1/auth/login",
                            "POST /api/v1/search"]


def test_a_401_after_a_fresh_login_is_a_configuration_error_without_a_storm():
    server = Server({"POST /api/v1/auth/login": token_answers("t"),
                     "POST /api/v1/search": reply(401, {"detail": "user is inactive"})})

    with pytest.raises(ConfigurationError, match="401: user is inactive"):
        server.store(user="me@example.com", password="secret").search("q", limit=5, timeout=5)
    assert len(server.asked) == 4  # login, search, login again, search again: then it stops


def test_bad_credentials_are_a_configuration_error_after_one_login():
    server = Server({"POST /api/v1/auth/login": reply(400, {"detail": "LOGIN_BAD_CREDENTIALS"})})

    with pytest.raises(ConfigurationError, match=r"refused the login of 'me@example\.com': "
                                                 r"LOGIN_BAD_CREDENTIALS"):
        server.store(user="me@example.com", password="wrong").search("q", limit=5, timeout=5)
    assert server.asked == ["POST /api/v1/auth/login"]


def test_an_api_key_goes_in_its_header():
    keys = []
    server = Server({"POST /api/v1/search": lambda request: (
        keys.append(request.headers.get("X-Api-Key")), reply(200, []))[1]})

    server.store(api_key="k-123").search("q", limit=5, timeout=5)
    assert keys == ["k-123"]


# -- adding and settling --------------------------------------------------------

def cognify_started() -> httpx.Response:
    return reply(200, {DATASET_ID: {"status": "PipelineRunStarted"}})


def test_an_add_ensures_the_dataset_sends_files_named_by_id_then_starts_cognify():
    sent = {}

    def add(request):
        sent["body"] = request.content
        return reply(200, {"status": "PipelineRunCompleted"})

    cognify = []
    server = Server({
        "POST /api/v1/datasets": reply(200, {"id": DATASET_ID, "name": "memsift"}),
        "POST /api/v1/add": add,
        "POST /api/v1/cognify": lambda request: (
            cognify.append(json.loads(request.content)), cognify_started())[1]})

    server.store().add([Item("notes.md:3", "We chose Stripe.", "passage", "notes.md:3"),
                        Item("blank", "  ", "passage", "x")], timeout=5)
    assert b'filename="notes%2Emd%3A3.txt"' in sent["body"]
    assert b"We chose Stripe." in sent["body"] and b'filename="blank.txt"' not in sent["body"]
    assert b"memsift:memsift" in sent["body"]  # the node set
    assert cognify == [{"dataset_ids": [DATASET_ID], "run_in_background": True}]


def test_a_changed_item_is_sent_as_an_update_and_the_new_ones_as_an_add():
    added = []
    server = Server({
        "POST /api/v1/datasets": reply(200, {"id": DATASET_ID, "name": "memsift"}),
        "POST /api/v1/add": [
            reply(409, {"error": "Document already exists; use the update endpoint",
                        "detail": "POST /api/v1/add does not update documents."}),
            lambda request: (added.append(request.content), reply(200, {}))[1]],
        "GET /api/v1/datasets/" + DATASET_ID + "/data": reply(200, [
            {"id": "data-1", "name": "old", "extension": "txt"}]),
        "PATCH /api/v1/update": lambda request: reply(
            200 if request.url.params["data_id"] == "data-1" else 404, {"status": "incremental"}),
        "POST /api/v1/cognify": cognify_started()})

    server.store().add([Item("old", "new text", "passage", "x"),
                        Item("fresh", "a new item", "passage", "x")], timeout=5)
    assert server.asked.count("PATCH /api/v1/update") == 1
    assert b'filename="fresh.txt"' in added[0] and b'filename="old.txt"' not in added[0]


def test_a_409_that_is_not_about_a_known_file_means_the_service_failed():
    server = Server({
        "POST /api/v1/datasets": reply(200, {"id": DATASET_ID, "name": "memsift"}),
        "POST /api/v1/add": reply(409, {"error": "Something went wrong."}),
        "GET /api/v1/datasets/" + DATASET_ID + "/data": reply(200, [])})

    with pytest.raises(ServiceUnavailable, match="refused the add: Something went wrong"):
        server.store().add([Item("a", "text", "passage", "x")], timeout=5)


def status(value: str | None) -> httpx.Response:
    return reply(200, {DATASET_ID: value} if value else {})


def settling(*statuses: httpx.Response) -> Server:
    return Server({"POST /api/v1/datasets": reply(200, {"id": DATASET_ID, "name": "memsift"}),
                   "GET /api/v1/datasets/status": list(statuses)})


def test_settle_waits_for_cognify_to_complete():
    server = settling(status("DATASET_PROCESSING_STARTED"), status("DATASET_PROCESSING_COMPLETED"))

    server.store().settle(10)
    assert server.asked.count("GET /api/v1/datasets/status") == 2


def test_settle_has_nothing_to_wait_for_on_a_dataset_never_cognified():
    settling(status(None)).store().settle(10)


def test_settle_reports_a_failed_cognify():
    with pytest.raises(ServiceUnavailable, match="cognify failed"):
        settling(status("DATASET_PROCESSING_ERRORED")).store().settle(10)


def test_settle_gives_up_at_its_deadline():
    with pytest.raises(DeadlineExceeded, match="still DATASET_PROCESSING_STARTED"):
        settling(status("DATASET_PROCESSING_STARTED")).store().settle(1.2)


# -- settings -------------------------------------------------------------------

@pytest.mark.parametrize(("options", "said"), [
    ({"url": "127.0.0.1:8011"}, "must be an http"),
    ({"url": "ftp://host"}, "must be an http"),
    ({"dataset": ""}, "without dots or spaces"),
    ({"dataset": "team.shop"}, "without dots or spaces"),
    ({"api_key": "k", "user": "u", "password": "p"}, "not both"),
    ({"user": "u"}, "go together"),
    ({"password": "p"}, "go together"),
])
def test_bad_settings_are_configuration_errors(options, said):
    settings = {"url": URL, **options}
    with pytest.raises(ConfigurationError, match=said):
        CogneeStore(settings.pop("url"), **settings)


def test_the_store_comes_from_memsift_s_configuration_scoped_to_the_project(tmp_path):
    (tmp_path / "config.toml").write_text('cognee_url = "http://10.1.2.3:8011/"\n'
                                          'dataset = "team"\n')
    config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_STORE": "cognee",
                          "MEMSIFT_COGNEE_API_KEY": "k-1"})
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:acme/shop.git\n')

    store = CogneeStore.from_config(config, project)
    assert re.fullmatch(r"team-shop-[0-9a-f]{12}", store.dataset)
    assert (store.name, store.source) == ("Cognee at http://10.1.2.3:8011", f"cognee:{store.dataset}")


def test_building_the_store_imports_no_http_library():
    script = ("import sys; from memsift.stores.cognee import CogneeStore; "
              "CogneeStore('http://127.0.0.1:1', api_key='k'); "
              "print(sorted({'httpx', 'tenacity'} & set(sys.modules)))")
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True, env={"PYTHONPATH": str(Path(__file__).parents[2])})
    assert output.stdout.strip() == "[]"
