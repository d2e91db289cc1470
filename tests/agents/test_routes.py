"""The plugins from a local marketplace path, alone and beside ``memsift install``, in the real CLIs.

A user adds the repository as a marketplace (``claude plugin marketplace add
PATH``, ``codex plugin marketplace add PATH``) and installs the plugin, with
memsift on the PATH as ``pipx install`` puts it. Alone, the plugin's hooks
recall and retain; beside ``memsift install`` every hook runs twice, and
memsift answers each call once: one reminder in the model's request, one
line kept. ``memsift doctor`` names the route, and warns about two.

Codex runs a plugin's hooks only once they are trusted in its TUI's
``/hooks``, whose trust key for a plugin hook is not documented; scripted
here with ``codex exec --dangerously-bypass-hook-trust``, as docs/agents.md
says. Codex's plugin support also reaches for its curated plugins on
github.com and chatgpt.com at start: refused by the fake model's proxy, so
only Claude Code is checked for staying on the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from clis import Agents
from fake_models import FakeModel
from test_agents import (SEED, _ask, _decisions, _environment, _memsift, _notes_file, _wait_for, install_memsift,
                         since_prompt)

from memsift.stages import BRIEF_HEADER, HEADER

pytestmark = pytest.mark.agents

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_FILES = (".claude-plugin", ".codex-plugin", ".agents", "hooks", "memsift_adapters/skills")
QUESTION = "why does the worker run out of memory at night again?"
BYPASS = {"claude-code": (), "codex": ("--dangerously-bypass-hook-trust",)}


def marketplace(folder: Path) -> Path:
    """The repository's plugin files, as a clone has them (a clone's .venv would be copied whole by both CLIs)."""
    for part in PLUGIN_FILES:
        shutil.copytree(ROOT / part, folder / part)
    return folder


def add_plugin(agent: str, agents: Agents, env: dict[str, str], market: Path) -> None:
    cli = str(agents.claude if agent == "claude-code" else agents.codex)
    install = ["install"] if agent == "claude-code" else ["add"]
    for args in (["plugin", "marketplace", "add", str(market)], ["plugin", *install, "memsift@memsift"]):
        done = subprocess.run([cli, *args], env=env, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"{agent} {args}: {done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("route", ["plugin", "both"])
@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_the_plugin_alone_or_beside_install_adds_one_reminder_and_keeps_one_line(
        agent: str, route: str, agents: Agents, tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=60)
    with FakeModel("anthropic" if agent == "claude-code" else "openai") as model:
        env = _environment(agent, tmp_path, model)
        env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"  # where pipx puts memsift: on the PATH
        if agent == "codex":  # plugins are on by default; the other tests turn them off
            config = Path(env["CODEX_HOME"]) / "config.toml"
            config.write_text(config.read_text().replace("plugins = false", "plugins = true"))
        _memsift(env, "retain", "--project", str(repo), stdin=json.dumps(SEED))
        add_plugin(agent, agents, env, marketplace(tmp_path / "memsift-clone"))
        if route == "both":
            install_memsift(agent, env)
        model.reply = "The nightly export loads every order at once; the heap is capped at 1536 MB."
        _, hooks, output = _ask(agent, agents, env, repo, QUESTION, "", *BYPASS[agent])
        [request] = model.turns()
        _wait_for(lambda: _decisions(env, "Stop") >= 1, f"{agent}'s Stop hook")
        connects = model.connects()

    # One reminder: the session's brief holds the note, given once whichever routes run the hook;
    # the message's recall adds nothing more (the brief gave it).
    whole = json.dumps(request.body)
    assert whole.count(json.dumps(BRIEF_HEADER)[1:-1]) == 1 and "1536 MB" in whole, output
    assert json.dumps(HEADER)[1:-1] not in since_prompt(request, QUESTION), output
    runs = 2 if route == "both" else 1
    events = [event for event, _ in hooks]
    assert all(events.count(event) == runs for event in ("SessionStart", "UserPromptSubmit", "Stop")), hooks
    assert all(outcome == "completed" for _, outcome in hooks), (hooks, output)
    assert _decisions(env, "UserPromptSubmit") == 1 and _decisions(env, "Stop") == 1  # each call answered once
    assert _notes_file(env, repo).read_text().count("\n") == 1  # the seed; the question is not kept twice
    report = json.loads(_memsift(env, "doctor", "--json", "--project", str(repo)))
    [row] = [c for c in report["checks"] if c["name"] == "route"]
    if route == "plugin":
        assert row["status"] == "ok" and row["detail"].startswith(f"{agent}: plugin (its hooks run "), row
    else:
        assert row["status"] == "warn" and row["detail"].startswith(f"{agent}: install and plugin: 2 of them"), row
    if agent == "claude-code":
        assert connects == [], connects


@pytest.mark.slow  # pipx builds memsift and installs its dependencies into a venv of its own: about 90 s
def test_pipx_install_from_a_fresh_clone_then_memsift_install(agents: Agents, tmp_path: Path) -> None:
    """README's other route: ``pipx install .`` from a clone puts memsift on the PATH; ``memsift install``
    from there writes hooks and a skill naming pipx's venv by absolute path. The clone is of the
    repository's last commit, as a user's would be."""
    clone = tmp_path / "memsift"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    # pip's settings (the package index) as the user has them, and pip as pipx's backend: the uv it
    # would pick up from the test venv reads none of them.
    pipx_env = {**{k: v for k, v in os.environ.items() if k.startswith("PIP_")}, "PATH": "/usr/bin:/bin",
                "PIPX_DEFAULT_BACKEND": "pip",
                "HOME": str(tmp_path / "pipx-user"), "PIPX_HOME": str(tmp_path / "pipx"),
                "PIPX_BIN_DIR": str(tmp_path / "bin")}
    done = subprocess.run([sys.executable, "-m", "pipx", "install", str(clone)], env=pipx_env, timeout=900,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    memsift = tmp_path / "bin" / "memsift"
    repo = tmp_path / "shop"
    repo.mkdir()
    with FakeModel("anthropic") as model:
        env = {**_environment("claude-code", tmp_path, model), "PATH": f"{memsift.parent}:/usr/bin:/bin"}
        for args, stdin in ((["retain", "--project", str(repo)], json.dumps(SEED)), (["install", "claude-code"], "")):
            ran = subprocess.run([str(memsift), *args], env=env, input=stdin, capture_output=True, text=True,
                                 timeout=120)
            assert ran.returncode == 0, ran.stderr
        settings = (Path(env["HOME"]) / ".claude" / "settings.json").read_text()
        skill = (Path(env["HOME"]) / ".claude" / "skills" / "memsift-search" / "SKILL.md").read_text()
        _, hooks, output = _ask("claude-code", agents, env, repo, QUESTION, "")
        [request] = model.turns()

    venv = tmp_path / "pipx" / "venvs" / "memsift"
    assert f"{venv}/bin/python {venv}/bin/memsift hook claude-code UserPromptSubmit" in settings
    assert f"{venv}/bin/memsift search" in skill
    assert "1536 MB" in since_prompt(request, QUESTION), output
    assert all(outcome == "completed" for _, outcome in hooks), hooks
