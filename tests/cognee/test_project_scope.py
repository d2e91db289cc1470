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
