"""The commands README.md and docs/ show run as written, in a fresh clone's layout, offline.

Each shell command runs in its own bash (with ``pipefail``) in a sandbox laid
out like the docs assume: the repository at ``~/memsift`` (a link farm to this
one), its ``.venv`` the interpreter running the tests, a private HOME and
MEMSIFT_HOME. The Python blocks of one page run together, top to bottom, as a
reader would run them. A command (or a block quoting code) that cannot run here is listed in
``NOT_RUN`` with the reason; a reason no command needs any more fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)

# Command (or Python block) prefix -> why the test does not run it.
NOT_RUN = {
    "python3 -m venv .venv": "makes the venv the tests run in; .ci/run runs README's setup as written",
    "claude plugin marketplace add": "needs Claude Code; tests/agents/test_routes.py adds the marketplace from a "
                                     "local path and runs the plugin",
    "codex plugin marketplace add": "needs Codex; tests/agents/test_routes.py adds the marketplace from a local "
                                    "path and runs the plugin",
    "pipx install .": "a minute and more of pipx building memsift; tests/agents/test_routes.py runs that route "
                      "(slow)",
    "MEMSIFT_DECIDER=openai MEMSIFT_DECIDER_URL=http://127.0.0.1:8080": "needs a model server of your own on port "
                                                                         "8080",
    ".venv/bin/pip install": "installs into the venv; the tests run in one that has every extra",
    "memsift bench SCENARIO... --store cognee": "needs a Cognee server; tests/cognee runs the store against one",
    "python tests/cognee/server.py install": "installs a 1.4 GiB server, as the Cognee tests do on first use",
    "python tests/cognee/server.py serve": "serves until Ctrl-C",
    "python tests/cognee/server.py measure": "minutes of timing a real server",
    "pytest": "the test suite itself",
    ".venv/bin/python benchmarks/bench_hook.py": "a benchmark: minutes of timed processes, run by hand",
    "from claude_agent_sdk import": "needs Claude Code and a model; tests/agents/test_claude_agent_sdk.py runs it "
                                    "against a fake model",
    ".venv/bin/python benchmarks/bench_serve.py": "a benchmark: minutes of timed processes, run by hand",
    ".venv/bin/python training/build_weights.py":
        "rewrites the shipped weights; the slow test in tests/test_decider.py rebuilds them apart and compares",
    ".venv/bin/python training/build_semantic.py":
        "rewrites the shipped head; the slow test in tests/test_semantic_judge.py rebuilds it apart and compares",
}

# What a user's project holds when the docs run `memsift redact .env` in it (docs/privacy.md's example).
DOT_ENV = "DATABASE_URL=postgres://app:Sup3rS3cret!@db.internal:5432/shop\n"


def fenced(language: set[str]) -> list[tuple[Path, int, str]]:
    """(page, line, text) of every fenced block in one of ``language``."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) in language:
                found.append((page, text.count("\n", 0, match.start()) + 2, match.group(2)))
    return found


def shell_commands() -> list[tuple[str, str]]:
    """(where, command) for each command of the shell blocks; a trailing backslash continues a line."""
    commands = []
    for page, first_line, block in fenced({"sh", "bash"}):
        lines = block.replace("\\\n", "\\\0").splitlines()
        for offset, line in enumerate(lines):
            command = line.replace("\\\0", "\\\n").strip()
            if command and not command.startswith("#"):
                commands.append((f"{page.relative_to(REPO)}:{first_line + offset}", command))
    return commands


def why_not_run(command: str) -> str | None:
    return next((why for prefix, why in NOT_RUN.items() if command.startswith(prefix)), None)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A HOME holding ``memsift``: this repository's files, linked, with the tests' venv as its .venv."""
    home = tmp_path_factory.mktemp("home")
    clone = home / "memsift"
    clone.mkdir()
    skipped = {".git", ".venv", ".cache", "build", "dist"}
    for entry in REPO.iterdir():
        if entry.name not in skipped and not entry.name.endswith((".egg-info", "_cache")):
            (clone / entry.name).symlink_to(entry)
    (clone / ".venv").symlink_to(sys.prefix)
    (clone / ".env").write_text(DOT_ENV, encoding="utf-8")
    (home / ".codex").mkdir()  # a Codex user's home has one
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(clone)], check=True)
    return clone


def run_in(sandbox: Path, args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith(("MEMSIFT_", "CODEX_"))}
    env.update(HOME=str(sandbox.parent), MEMSIFT_HOME=str(tmp_path / "memsift-home"),
               PATH=f"{Path(sys.prefix) / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    return subprocess.run(args, cwd=sandbox, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize(("where", "command"), shell_commands(), ids=[w for w, _ in shell_commands()])
def test_a_shell_command_of_the_docs_runs_as_written(where, command, sandbox, tmp_path):
    if why := why_not_run(command):
        pytest.skip(f"not run: {why}")

    done = run_in(sandbox, ["bash", "-o", "pipefail", "-c", command], tmp_path)

    assert done.returncode == 0, f"{where}: {command}\n{done.stderr}"


@pytest.mark.parametrize("page", sorted({page for page, _, _ in fenced({"python"})}),
                         ids=lambda page: str(page.relative_to(REPO)))
def test_the_python_blocks_of_a_page_run_top_to_bottom(page, sandbox, tmp_path):
    script = "\n\n".join(block for where, _, block in fenced({"python"})
                         if where == page and not why_not_run(block))

    done = run_in(sandbox, [sys.executable, "-c", script], tmp_path)

    assert done.returncode == 0, done.stderr


def test_every_reason_not_to_run_names_a_command_of_the_docs():
    commands = [command for _, command in shell_commands()] + [block for _, _, block in fenced({"python"})]

    assert [prefix for prefix in NOT_RUN if not any(c.startswith(prefix) for c in commands)] == []
