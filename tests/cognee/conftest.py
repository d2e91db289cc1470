"""Real Cognee servers for the tests in this folder.

The first test that needs one installs Cognee 1.6.5 into its own venv under
``<repo>/.cache/cognee-1.6.5/`` (once; ``python tests/cognee/server.py
install`` does it ahead), then starts the stand-in LLM and a Cognee server on
free loopback ports with a fresh data folder, and stops both at the end.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from server import CogneeServer, Installation, StandinLLM, install


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cognee: runs against a real Cognee server (minutes)")


@pytest.fixture(scope="session")
def cognee_installation() -> Installation:
    return install()


@pytest.fixture(scope="session")
def standin_llm() -> Iterator[StandinLLM]:
    with StandinLLM() as llm:
        yield llm


@pytest.fixture(scope="session")
def cognee_server(cognee_installation, standin_llm, tmp_path_factory) -> Iterator[CogneeServer]:
    """A Cognee server with access control off: every request runs as its default user."""
    with CogneeServer(cognee_installation, tmp_path_factory.mktemp("cognee-home"),
                      llm_url=standin_llm.url, auth=False) as server:
        yield server


@pytest.fixture(scope="session")
def cognee_auth_server(cognee_installation, standin_llm, tmp_path_factory) -> Iterator[CogneeServer]:
    """A Cognee server with access control on (Cognee's default): log in, or use an API key.

    Its login tokens last 3 s, so a test can watch one expire (and wait 4 s for it, not more).
    """
    with CogneeServer(cognee_installation, tmp_path_factory.mktemp("cognee-home"),
                      llm_url=standin_llm.url, auth=True, token_lifetime=3) as server:
        yield server
