"""Installing the agents' CLIs: clis.py (the install itself runs in the agents tests)."""

from __future__ import annotations

from pathlib import Path

import pytest
from clis import install_agents


def test_without_npm_the_agents_tests_are_skipped_and_say_why(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no npm on it
    with pytest.raises(pytest.skip.Exception, match="npm is not installed"):
        install_agents(tmp_path / "agents")
    assert not (tmp_path / "agents").exists()
