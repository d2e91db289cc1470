"""`memsift install` and `uninstall`, run as a user runs them, into a temporary home."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from memsift._cli.install import TIMEOUTS, trust_entries

MEMSIFT = Path(sys.executable).parent / "memsift"
SKILL = (Path(__file__).resolve().parents[1] / "memsift_adapters/skills/memsift-search/SKILL.md").read_text()
# The copy install writes runs this very install's command: a venv's memsift is not on the PATH.
INSTALLED_SKILL = (SKILL.replace("memsift search", f"{MEMSIFT} search").replace("memsift notes", f"{MEMSIFT} notes")
                   .replace("memsift show", f"{MEMSIFT} show"))
INTERPRETER = MEMSIFT.read_text().splitlines()[0].removeprefix("#!")  # what `memsift install` runs under
EVENTS = list(TIMEOUTS)

# A user's settings as they wrote them: four-space indents, no newline at the end, hooks of their own.
CLAUDE_SETTINGS = """{
    "model": "opus",
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}]
    },
    "permissions": {"allow": ["Bash(git status)"]}
}"""
CODEX_HOOKS = '{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "log-prompt"}]}]}}\n'
CODEX_CONFIG = 'model = "gpt-5.5"\n\n[features]\nhooks = true\n'


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def memsift(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("CODEX_HOME", "CLAUDE_CONFIG_DIR")}
    return subprocess.run([str(MEMSIFT), *args], capture_output=True, text=True, timeout=60,
                          env={**clean, "HOME": str(home), "MEMSIFT_HOME": str(home / "memsift"), **env})


def ours(settings: dict, event: str) -> list[dict]:
    return [handler for group in settings["hooks"].get(event, []) for handler in group["hooks"]
            if "memsift" in handler["command"]]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# -- Claude Code --------------------------------------------------------------------

def test_claude_install_merges_four_hooks_beside_the_users_own(home):
    settings = write(home / ".claude" / "settings.json", CLAUDE_SETTINGS)

    result = memsift(home, "install", "claude-code")

    assert result.returncode == 0, result.stderr
    assert str(settings) in result.stdout
    merged = json.loads(settings.read_text())
    assert merged["model"] == "opus" and merged["permissions"] == {"allow": ["Bash(git status)"]}
    assert merged["hooks"]["PreToolUse"] == json.loads(CLAUDE_SETTINGS)["hooks"]["PreToolUse"]
    assert merged["hooks"]["Stop"][0] == {"hooks": [{"type": "command", "command": "notify-send done"}]}
    for event in EVENTS:
        [handler] = ours(merged, event)
        # This interpreter and the console script beside it, by absolute path: no shim, no PATH lookup.
        assert handler == {"type": "command", "timeout": TIMEOUTS[event],
                           "command": f"{INTERPRETER} {MEMSIFT} hook claude-code {event}"}


def test_claude_install_twice_changes_nothing_and_uninstall_restores_the_bytes(home):
    settings = write(home / ".claude" / "settings.json", CLAUDE_SETTINGS)
    settings.chmod(0o640)

    assert memsift(home, "install", "claude-code").returncode == 0
    installed = settings.read_bytes()
    again = memsift(home, "install", "claude-code")
    assert again.returncode == 0 and "already in" in again.stdout
    assert settings.read_bytes() == installed

    result = memsift(home, "uninstall", "claude-code")

    assert result.returncode == 0, result.stderr
    assert settings.read_bytes() == CLAUDE_SETTINGS.encode()
    assert stat.S_IMODE(settings.stat().st_mode) == 0o640


def test_the_users_layout_stays_while_memsift_is_installed_and_after_an_edit_and_uninstall(home):
    """Four-space indents, key order, arrays on one line: only memsift's groups are added, then taken out."""
    settings = write(home / ".claude" / "settings.json", CLAUDE_SETTINGS)

    assert memsift(home, "install", "claude-code").returncode == 0
    installed = settings.read_text()

    for line in CLAUDE_SETTINGS.splitlines()[:3] + CLAUDE_SETTINGS.splitlines()[5:]:
        assert line in installed.splitlines(), line  # the user's own lines, unchanged
    stop = '"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}, '
    assert f"        {stop}" in installed  # the user's group on its line, memsift's after it
    assert "\n                        \"command\": " in installed  # new groups in the file's own 4 spaces
    assert list(json.loads(installed)) == ["model", "hooks", "permissions"]
    edited = installed.replace('"opus"', '"sonnet"')  # the user changes the file while memsift is in
    settings.write_text(edited)

    assert memsift(home, "uninstall", "claude-code").returncode == 0
    assert settings.read_text() == CLAUDE_SETTINGS.replace('"opus"', '"sonnet"')  # every byte but the edit


def test_the_installed_skill_runs_the_command_by_its_path_without_memsift_on_the_path(home, tmp_path):
    """A venv install is not on the PATH: the skill names the command the agent can run."""
    assert memsift(home, "install", "claude-code").returncode == 0
    skill = (home / ".claude" / "skills" / "memsift-search" / "SKILL.md").read_text()
    [command] = [line.strip() for line in skill.splitlines() if line.strip().endswith('search "lottie SPM"')]

    ran = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(home), "MEMSIFT_HOME": str(home / "memsift")})

    assert command.startswith(f"{MEMSIFT} search")
    assert ran.returncode == 0, ran.stderr


def test_claude_uninstall_removes_the_file_and_folder_install_created(home):
    assert memsift(home, "install", "claude-code").returncode == 0
    assert (home / ".claude" / "settings.json").is_file()
    assert (home / ".claude" / "skills" / "memsift-search" / "SKILL.md").read_text() == INSTALLED_SKILL

    assert memsift(home, "uninstall", "claude-code").returncode == 0

    assert not (home / ".claude").exists()


def test_a_settings_file_edited_after_install_keeps_the_edit_on_uninstall(home):
    settings = write(home / ".claude" / "settings.json", CLAUDE_SETTINGS)
    assert memsift(home, "install", "claude-code").returncode == 0
    edited = json.loads(settings.read_text())
    edited["theme"] = "dark"
    edited["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "say finished"}]})
    settings.write_text(json.dumps(edited))

    result = memsift(home, "uninstall", "claude-code")

    assert result.returncode == 0, result.stderr
    left = json.loads(settings.read_text())
    assert left["theme"] == "dark"
    assert [g["hooks"][0]["command"] for g in left["hooks"]["Stop"]] == ["notify-send done", "say finished"]
    assert set(left["hooks"]) == {"Stop", "PreToolUse"}  # the events only memsift had are gone
    assert not any(ours(left, event) for event in EVENTS)


def test_claude_project_install_writes_the_projects_settings(home, tmp_path):
    project = tmp_path / "shop"
    project.mkdir()

    result = memsift(home, "install", "claude-code", "--project", str(project))

    assert result.returncode == 0, result.stderr
    assert ours(json.loads((project / ".claude" / "settings.json").read_text()), "Stop")
    assert not (home / ".claude").exists()
    assert memsift(home, "uninstall", "claude-code", "--project", str(project)).returncode == 0
    assert list(project.iterdir()) == []


def test_claude_config_dir_is_where_claude_reads_its_settings(home, tmp_path):
    config = tmp_path / "claude-config"

    assert memsift(home, "install", "claude-code", CLAUDE_CONFIG_DIR=str(config)).returncode == 0

    assert ours(json.loads((config / "settings.json").read_text()), "UserPromptSubmit")


def test_settings_that_are_not_json_are_left_alone_with_a_clear_error(home):
    settings = write(home / ".claude" / "settings.json", "{not json")

    result = memsift(home, "install", "claude-code")

    assert result.returncode == 2
    assert "not JSON" in result.stderr and "nothing changed" in result.stderr
    assert settings.read_text() == "{not json"


# -- Codex ----------------------------------------------------------------------------

def test_codex_install_without_trust_says_the_one_step_left(home):
    hooks = write(home / ".codex" / "hooks.json", CODEX_HOOKS)

    result = memsift(home, "install", "codex")

    assert result.returncode == 0, result.stderr
    assert "/hooks" in result.stdout and "--trust" in result.stdout
    merged = json.loads(hooks.read_text())
    assert set(merged) == {"hooks"}  # Codex rejects the whole file over any other top-level key
    assert merged["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] == "log-prompt"
    for event in EVENTS:
        [handler] = ours(merged, event)
        assert handler["command"] == f"{INTERPRETER} {MEMSIFT} hook codex {event}"
    assert not (home / ".codex" / "config.toml").exists()


def test_codex_install_again_without_trust_on_hooks_already_trusted_says_so(home):
    assert memsift(home, "install", "codex", "--trust").returncode == 0

    again = memsift(home, "install", "codex")

    assert again.returncode == 0, again.stderr
    assert "already trusted" in again.stdout and "one step left" not in again.stdout


def test_codex_trust_writes_one_entry_per_hook_and_uninstall_restores_both_files(home, tmp_path):
    codex_home = tmp_path / "codex-home"
    hooks = write(codex_home / "hooks.json", CODEX_HOOKS)
    config = write(codex_home / "config.toml", CODEX_CONFIG)

    result = memsift(home, "install", "codex", "--trust", CODEX_HOME=str(codex_home))

    assert result.returncode == 0, result.stderr
    assert "trusted: 4 hooks" in result.stdout
    state = tomllib.loads(config.read_text())["hooks"]["state"]
    merged = json.loads(hooks.read_text())
    expected = trust_entries(hooks, merged)
    assert {key: value["trusted_hash"] for key, value in state.items()} == expected
    # Keyed by the file, the event in snake case, the group and the handler, as Codex keys them.
    assert f"{hooks}:user_prompt_submit:1:0" in state and f"{hooks}:session_end:0:0" in state
    assert config.read_text().startswith(CODEX_CONFIG)

    again = memsift(home, "install", "codex", "--trust", CODEX_HOME=str(codex_home))
    assert "already trusted" in again.stdout
    assert len(tomllib.loads(config.read_text())["hooks"]["state"]) == 4

    assert memsift(home, "uninstall", "codex", CODEX_HOME=str(codex_home)).returncode == 0
    assert hooks.read_bytes() == CODEX_HOOKS.encode()
    assert config.read_bytes() == CODEX_CONFIG.encode()


def test_a_changed_hook_gets_its_stale_trust_replaced_in_place(home, tmp_path):
    codex_home = tmp_path / "codex-home"
    hooks = codex_home / "hooks.json"
    stale = f'[hooks.state."{hooks}:stop:0:0"]\ntrusted_hash = "sha256:{"0" * 64}"\n'
    config = write(codex_home / "config.toml", CODEX_CONFIG + "\n" + stale)

    assert memsift(home, "install", "codex", "--trust", CODEX_HOME=str(codex_home)).returncode == 0

    state = tomllib.loads(config.read_text())["hooks"]["state"]
    assert state[f"{hooks}:stop:0:0"]["trusted_hash"] == trust_entries(hooks, json.loads(hooks.read_text()))[
        f"{hooks}:stop:0:0"]
    assert config.read_text().count(f"{hooks}:stop:0:0") == 1


def test_any_edit_of_a_hook_changes_its_trusted_hash(tmp_path):
    hooks = tmp_path / "hooks.json"
    handler = {"type": "command", "command": "/venv/bin/python /venv/bin/memsift hook codex Stop", "timeout": 10}
    settings = {"hooks": {"Stop": [{"hooks": [handler]}]}}
    longer = {"hooks": {"Stop": [{"hooks": [{**handler, "timeout": 11}]}]}}
    moved = {"hooks": {"Stop": [{"hooks": [{**handler, "command": handler["command"].replace("venv", "env")}]}]}}

    [(key, digest)] = trust_entries(hooks, settings).items()

    assert key == f"{hooks}:stop:0:0" and digest.startswith("sha256:") and len(digest) == 7 + 64
    assert trust_entries(hooks, longer)[key] != digest
    assert trust_entries(hooks, moved)[key] != digest


def test_an_unknown_agent_is_refused_by_the_parser(home):
    result = memsift(home, "install", "cursor")

    assert result.returncode == 2
    assert "invalid choice" in result.stderr


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_the_installed_commands_run_as_the_agent_runs_them(agent, home, tmp_path):
    """Each hook command, through a shell as both agents start it, with a payload on stdin."""
    project = tmp_path / "shop"
    project.mkdir()
    assert memsift(home, "install", agent).returncode == 0
    path = home / (".claude/settings.json" if agent == "claude-code" else ".codex/hooks.json")
    commands = {event: ours(json.loads(path.read_text()), event)[0]["command"] for event in EVENTS}
    payloads = {
        "SessionStart": {"source": "startup"},
        "UserPromptSubmit": {"prompt": "thanks, that works!"},
        "Stop": {"stop_hook_active": True, "last_assistant_message": "Done."},
        "SessionEnd": {"reason": "other"},
    }
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "MEMSIFT_HOME": str(home / "memsift")}

    for event, command in commands.items():
        payload = {"session_id": "s1", "transcript_path": None, "cwd": str(project), "hook_event_name": event,
                   **payloads[event]}
        result = subprocess.run(["sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                                env=env, cwd=project, timeout=60)

        assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), event


def test_codex_project_install_trusts_the_projects_hooks_file_and_says_the_project_needs_trust(home, tmp_path):
    project = tmp_path / "shop"
    project.mkdir()

    result = memsift(home, "install", "codex", "--project", str(project), "--trust")

    assert result.returncode == 0, result.stderr
    hooks = project / ".codex" / "hooks.json"
    state = tomllib.loads((home / ".codex" / "config.toml").read_text())["hooks"]["state"]
    assert set(state) == set(trust_entries(hooks, json.loads(hooks.read_text())))
    assert all(key.startswith(f"{hooks}:") for key in state)
    assert f"only in a trusted project: accept {project}" in result.stdout

    assert memsift(home, "uninstall", "codex", "--project", str(project)).returncode == 0
    assert not (home / ".codex").exists() and list(project.iterdir()) == []


@pytest.mark.parametrize(("agent", "skills"), [("claude-code", ".claude/skills"), ("codex", ".codex/skills")])
def test_install_copies_the_search_skill_beside_the_users_own_and_uninstall_takes_it_back(agent, skills, home):
    own = write(home / skills / "deploy" / "SKILL.md", "---\nname: deploy\ndescription: ship it\n---\n")
    stale = write(home / skills / "memsift-search" / "SKILL.md", "an older copy\n")

    result = memsift(home, "install", agent)

    assert result.returncode == 0, result.stderr
    assert "memsift-search skill" in result.stdout
    assert stale.read_text() == INSTALLED_SKILL and "memsift search" in SKILL
    assert memsift(home, "uninstall", agent).returncode == 0
    assert stale.read_text() == "an older copy\n"  # as it was before install
    assert own.read_text().startswith("---\nname: deploy")


def test_a_project_install_puts_the_skill_where_each_agent_reads_a_projects_skills(home, tmp_path):
    project = tmp_path / "shop"
    project.mkdir()

    for agent in ("claude-code", "codex"):
        assert memsift(home, "install", agent, "--project", str(project)).returncode == 0

    assert (project / ".claude" / "skills" / "memsift-search" / "SKILL.md").read_text() == INSTALLED_SKILL
    assert (project / ".agents" / "skills" / "memsift-search" / "SKILL.md").read_text() == INSTALLED_SKILL
