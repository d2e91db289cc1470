"""One project, one memory, on one real Cognee server that two projects share.

The server has access control off, Cognee's leakiest setting: every dataset
shares one vector store, and a search of one dataset returns the others'
chunks (checked here). memsift writes each project into a dataset and node
set of its own, named after the repository's remote, searches only those,
and drops on the way out any chunk the server returns from elsewhere.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest
from attrs import evolve

from memsift.config import load_config
from memsift.pipeline import recall, retain
from memsift.services import Services, open_services
from memsift.stages import EVERY_MESSAGE_STAGES, distill, redact_exchange, sync
from memsift.types import Category, Exchange, Message
from hostile import LocalHTTP

pytestmark = pytest.mark.cognee  # `pytest -m "not cognee"` skips the real servers

ACME = Exchange("Which queue does the invoice exporter use?",
                "The acme invoice exporter moved to the Postgres-backed queue because Redis dropped "
                "40 invoices during the March failover.", "a1")
GLOBEX = Exchange("Which queue does the invoice exporter use?",
                  "The globex invoice exporter stays on RabbitMQ; their ops team runs it for us.", "g1")
QUESTION = "which queue should the invoice exporter run on, and why"


def keep_it(services: Services, state):
    """Stands in for the keep decision: these tests are about where a kept exchange goes."""
    return evolve(state, keep=True, category=Category.DECISION)


def repository(folder: Path, remote: str) -> Path:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", remote], check=True)
    return folder


def services_for(url: str, home: Path, project: Path) -> Services:
    """What a hook opens in *project*, on a machine whose memsift home is *home*."""
    return open_services(load_config({"MEMSIFT_HOME": str(home), "MEMSIFT_STORE": "cognee",
                                      "MEMSIFT_COGNEE_URL": url}), project)


def kept(exchange: Exchange, services: Services) -> None:
    result = retain(exchange, services, (redact_exchange, keep_it, distill, sync))
    assert result.keep and services.outbox.pending() == 0, result.trace
    services.store.settle(180)


def unfiltered(url: str, dataset: str, query: str) -> list[str]:
    """What the server returns for a search of *dataset* without memsift's node set."""
    answer = httpx.post(f"{url}/api/v1/search", timeout=30, json={
        "search_type": "CHUNKS", "query": query, "datasets": [dataset], "top_k": 20}).json()
    return [chunk["text"] for chunk in answer]


def test_two_projects_on_one_server_never_see_each_other_s_memory(cognee_server, tmp_path):
    home = tmp_path / "home"
    acme = services_for(cognee_server.url, home, repository(
        tmp_path / "client-acme", "git@github.com:example-co/client-acme.git"))
    globex = services_for(cognee_server.url, home, repository(
        tmp_path / "client-globex", "https://github.com/example-co/client-globex.git"))
    assert acme.store.dataset != globex.store.dataset
    kept(ACME, acme)
    kept(GLOBEX, globex)

    # The server itself does not keep them apart here: a search of globex's dataset returns acme's.
    assert ACME.assistant in "\n".join(unfiltered(cognee_server.url, globex.store.dataset, QUESTION))

    for services, own, other in ((acme, ACME, GLOBEX), (globex, GLOBEX, ACME)):
        found = services.store.search(QUESTION, limit=10, timeout=12)
        assert [item.exchange for item in found] == [f"{own.user}\n\n{own.assistant}"]  # under its fact line
        result = recall(Message(QUESTION, session="s2"), services, EVERY_MESSAGE_STAGES)
        assert other.assistant not in result.text and all(
            other.assistant not in item.text for item in result.items), result.trace


def test_two_clones_of_one_repository_share_its_memory_across_machines(cognee_server, tmp_path):
    laptop = services_for(cognee_server.url, tmp_path / "laptop-home", repository(
        tmp_path / "laptop" / "shop", "git@github.com:example-co/shop.git"))
    desktop = services_for(cognee_server.url, tmp_path / "desktop-home", repository(
        tmp_path / "desktop" / "work" / "shop-checkout", "https://github.com/example-co/shop"))
    stranger = services_for(cognee_server.url, tmp_path / "laptop-home", repository(
        tmp_path / "laptop" / "other" / "shop", "git@github.com:someone-else/shop.git"))

    kept(ACME, laptop)

    assert desktop.store.dataset == laptop.store.dataset
    assert [item.exchange for item in desktop.store.search(QUESTION, limit=5, timeout=12)] == [
        f"{ACME.user}\n\n{ACME.assistant}"]
    assert stranger.store.search(QUESTION, limit=5, timeout=12) == []  # same folder name, other repository


class ShapeShiftingCognee(LocalHTTP):
    """A real Cognee server behind a proxy that answers searches in another shape: it drops the node set
    the search asks for, and names each chunk's node set as one string instead of a list. What the chunks
    hold is the real server's."""

    def __init__(self, upstream: str) -> None:
        from http.server import BaseHTTPRequestHandler

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                import json

                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                search = self.command == "POST" and self.path == "/api/v1/search"
                if search:
                    asked = json.loads(body)
                    asked.pop("node_name", None)
                    body = json.dumps(asked).encode()
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                reply = httpx.request(self.command, upstream + self.path, content=body, headers=headers, timeout=60)
                raw = reply.content
                if search and reply.status_code == 200:
                    chunks = reply.json()
                    for chunk in chunks:
                        names = chunk.get("belongs_to_set") or []
                        chunk["belongs_to_set"] = " ".join(names)
                    raw = json.dumps(chunks).encode()
                self.send_response(reply.status_code)
                self.send_header("Content-Type", reply.headers.get("content-type", "application/json"))
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PATCH = do_DELETE = _forward  # http.server's naming

            def log_message(self, *_: object) -> None:
                pass

        super().__init__(Handler)


def test_a_node_set_named_as_a_string_that_holds_this_project_s_is_another_project_s(cognee_server, tmp_path):
    """Issue 27, row 7: the scope test was `in` on whatever the server sent, a substring test on a string."""
    home = tmp_path / "home"
    acme = services_for(cognee_server.url, home, repository(
        tmp_path / "client-acme", "git@github.com:example-co/client-acme.git"))
    # Another project whose dataset name starts with acme's: its node set holds acme's as a substring.
    fork_config = load_config({"MEMSIFT_HOME": str(home), "MEMSIFT_STORE": "cognee",
                               "MEMSIFT_COGNEE_URL": cognee_server.url, "MEMSIFT_DATASET": acme.store.dataset})
    fork = open_services(fork_config, repository(tmp_path / "fork", "git@github.com:someone-else/fork.git"))
    assert acme.store._node_set in fork.store._node_set and acme.store.dataset != fork.store.dataset
    kept(ACME, acme)
    kept(GLOBEX, fork)

    with ShapeShiftingCognee(cognee_server.url) as shifted:
        seen = services_for(shifted.url, home, tmp_path / "client-acme")
        found = seen.store.search(QUESTION, limit=10, timeout=30)
        result = recall(Message(QUESTION, session="s3"), seen, EVERY_MESSAGE_STAGES)

    assert GLOBEX.assistant not in "".join(item.exchange + item.text for item in found)
    assert [item.exchange for item in found] == [f"{ACME.user}\n\n{ACME.assistant}"]  # its own, still found
    assert GLOBEX.assistant not in result.text
