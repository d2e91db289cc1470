"""The agents the end-to-end tests drive: installed once per machine, see clis.py."""

from __future__ import annotations

import pytest
from clis import CACHE, Agents, install_agents


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "agents: drives the real Claude Code and Codex CLIs (npm, ~1 min)")


@pytest.fixture(scope="session")
def agents() -> Agents:
    return install_agents(CACHE)
