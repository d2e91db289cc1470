"""``memsift doctor`` against a real Cognee server: its ``/health`` probe answers, with access control on."""

from __future__ import annotations

from pathlib import Path

import pytest
from server import PASSWORD, USER, CogneeServer

from memsift._cli.doctor import OK, diagnose

pytestmark = pytest.mark.cognee  # `pytest -m "not cognee"` skips the real servers


def test_doctor_finds_a_running_cognee_healthy(cognee_auth_server: CogneeServer, tmp_path: Path) -> None:
    env = {"MEMSIFT_HOME": str(tmp_path / "memsift"), "HOME": str(tmp_path), "MEMSIFT_STORE": "cognee",
           "MEMSIFT_COGNEE_URL": cognee_auth_server.url, "MEMSIFT_COGNEE_USER": USER,
           "MEMSIFT_COGNEE_PASSWORD": PASSWORD}

    report = diagnose(tmp_path, environ=env)

    assert report.healthy, report.checks
    [store] = [check for check in report.checks if check.name == "store"]
    assert (store.status, store.detail) == (OK, f"Cognee at {cognee_auth_server.url}: /health answered 200")
