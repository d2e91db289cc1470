"""The code is clean under the checkers configured in pyproject.toml: ``mypy --strict`` and ruff.

A user's type checker sees memsift's public API with its real types, although
the names are imported lazily at run time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def run_tool(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    # MYPYPATH: an editable install is an import hook, which mypy does not follow; an installed wheel
    # is found through its py.typed, which test_packaging checks it holds.
    env = {**os.environ, "MYPYPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def test_mypy_strict_finds_nothing_in_the_packages():
    pytest.importorskip("mypy")

    done = run_tool("mypy", "--strict", "memsift", "memsift_adapters")

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found")


def test_ruff_finds_nothing_in_the_repository():
    pytest.importorskip("ruff")

    done = run_tool("ruff", "check", "--no-cache", ".")

    assert done.returncode == 0, done.stdout + done.stderr


def test_a_users_type_checker_sees_the_public_api_with_its_types(tmp_path):
    pytest.importorskip("mypy")
    user_code = tmp_path / "user_code.py"
    user_code.write_text(textwrap.dedent("""
        from memsift import Message, load_config, open_services, recall

        services = open_services(load_config(), project_root=".")
        result = recall(Message("why did we pick Stripe?"), services)
        reveal_type(services)
        reveal_type(result)
        reveal_type(result.kind)
        Message(42)  # a mistake the checker must catch
    """))

    done = run_tool("mypy", "--strict", "--no-incremental", str(user_code), cwd=tmp_path)

    assert 'Revealed type is "memsift.services.Services"' in done.stdout, done.stdout
    assert 'Revealed type is "memsift.types.Recall"' in done.stdout
    assert re.search(r'Revealed type is "memsift(\.\w+)+\.Kind \| None"', done.stdout)
    assert 'Argument 1 to "Message" has incompatible type "int"; expected "str"' in done.stdout
    assert done.stdout.count("error:") == 1, done.stdout
