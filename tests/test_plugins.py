"""The Claude Code and Codex plugins in this repository: manifests, hooks, the skill.

Their hook commands are run as the agents run them (``sh -c``), with memsift
on the PATH and without it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from memsift._cli.install import TIMEOUTS

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
MISSING = ("memsift: no memsift command on the PATH of this hook, memory is off "
           "(install memsift with pipx, see its README)")
HOOK_FILES = {"claude-code": ROOT / "hooks" / "hooks.json", "codex": ROOT / "hooks" / "codex.json"}


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_the_claude_marketplace_lists_the_plugin_at_the_repository_root():
    marketplace = load(ROOT / ".claude-plugin" / "marketplace.json")
    plugin = load(ROOT / ".claude-plugin" / "plugin.json")

    assert {"name", "owner", "plugins"} <= set(marketplace)
    [entry] = marketplace["plugins"]
    assert entry["name"] == plugin["name"] == "memsift" and entry["source"] == "./"
    assert plugin["version"] == entry["version"] == VERSION


def test_the_codex_marketplace_and_manifest_point_at_files_that_exist():
    marketplace = load(ROOT / ".agents" / "plugins" / "marketplace.json")
    plugin = load(ROOT / ".codex-plugin" / "plugin.json")

    [entry] = marketplace["plugins"]
    assert entry["name"] == plugin["name"] == "memsift"
    assert entry["source"] == {"source": "local", "path": "./"}
    assert plugin["version"] == VERSION
    assert (ROOT / plugin["hooks"]).resolve() == HOOK_FILES["codex"]
    assert (ROOT / plugin["skills"] / "memsift-search" / "SKILL.md").is_file()


def test_both_plugins_carry_the_skill_that_memsift_install_copies():
    for manifest in (ROOT / ".claude-plugin" / "plugin.json", ROOT / ".codex-plugin" / "plugin.json"):
        assert (ROOT / load(manifest)["skills"]).resolve() == ROOT / "memsift_adapters" / "skills"


@pytest.mark.parametrize("agent", list(HOOK_FILES))
def test_each_plugin_wires_the_four_events_to_its_own_agent(agent):
    hooks = load(HOOK_FILES[agent])

    assert set(hooks) <= {"description", "hooks"}  # Codex rejects a hooks file with any other key
    assert set(hooks["hooks"]) == set(TIMEOUTS)
    for event, groups in hooks["hooks"].items():
        [group] = groups
        [handler] = group["hooks"]
        assert handler["type"] == "command" and handler["timeout"] == TIMEOUTS[event]
        # The memsift on the PATH, by name: no checkout path, no interpreter of the plugin's own.
        assert handler["command"].startswith(f"command -v memsift >/dev/null 2>&1 && exec memsift hook {agent} "
                                             f"{event} || ")


def plugin_command(agent: str, event: str) -> str:
    [group] = load(HOOK_FILES[agent])["hooks"][event]
    return group["hooks"][0]["command"]


def run_plugin_hook(agent: str, event: str, payload: dict, path: str, tmp_path: Path):
    env = {"PATH": path, "HOME": str(tmp_path / "user"), "MEMSIFT_HOME": str(tmp_path / "memsift")}
    return subprocess.run(["sh", "-c", plugin_command(agent, event)], input=json.dumps(payload).encode(),
                          capture_output=True, env=env, cwd=tmp_path, timeout=60)


@pytest.mark.parametrize("agent", list(HOOK_FILES))
def test_a_plugin_hook_runs_the_memsift_it_finds_on_the_path(agent, tmp_path):
    payload = {"session_id": "s1", "transcript_path": None, "cwd": str(tmp_path),
               "hook_event_name": "SessionStart", "source": "startup"}
    bin_folder = str(Path(sys.executable).parent)

    works = run_plugin_hook(agent, "SessionStart", payload, f"{bin_folder}:/usr/bin:/bin", tmp_path)
    broken = run_plugin_hook(agent, "SessionStart", {**payload, "cwd": 3}, f"{bin_folder}:/usr/bin:/bin",
                             tmp_path)

    assert works.returncode == 0 and works.stdout == b"" and works.stderr == b""
    assert broken.returncode == 0
    assert broken.stderr.decode().startswith(f"memsift: {agent} SessionStart hook: the payload has no 'cwd'")


@pytest.mark.parametrize("agent", list(HOOK_FILES))
def test_a_plugin_hook_without_memsift_installed_tells_the_user_and_exits_0(agent, tmp_path):
    """In the agent's output format (stderr alone reaches nobody); Stop and SessionEnd say nothing more."""
    payload = {"session_id": "s1", "cwd": str(tmp_path), "prompt": "why did we pick Stripe?"}
    assert not any((Path(folder) / "memsift").exists() for folder in ("/usr/bin", "/bin"))

    told = {event: run_plugin_hook(agent, event, payload, "/usr/bin:/bin", tmp_path) for event in TIMEOUTS}

    assert all(result.returncode == 0 and result.stderr == b"" for result in told.values())
    for event in ("SessionStart", "UserPromptSubmit"):
        assert json.loads(told[event].stdout) == {"systemMessage": MISSING}, told[event]
    assert told["Stop"].stdout == told["SessionEnd"].stdout == b""  # Codex fails a Stop hook's plain text


def test_the_skill_tells_the_agent_to_run_memsift_search():
    skill = (ROOT / "memsift_adapters" / "skills" / "memsift-search" / "SKILL.md").read_text()
    front = re.match(r"---\n(.*?)\n---\n", skill, re.DOTALL)

    assert front is not None
    fields = dict(line.split(": ", 1) for line in front.group(1).splitlines())
    assert fields["name"] == "memsift-search"  # the spec: the name is the folder's
    assert "earlier" in fields["description"] and len(fields["description"]) <= 1024
    assert "memsift search" in skill and "memsift notes" in skill


def test_no_plugin_file_names_a_checkout_path():
    for path in [*HOOK_FILES.values(), ROOT / ".claude-plugin" / "plugin.json", ROOT / ".codex-plugin" / "plugin.json"]:
        text = path.read_text()
        assert "/path/to" not in text and os.fspath(ROOT) not in text and ".venv" not in text
