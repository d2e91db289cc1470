"""``memsift doctor``: memsift/doctor.py, on real homes, files and a real HTTP server."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memsift.config import load_config
from memsift._hooks.decisions import DecisionLog
from memsift._cli.doctor import FAIL, INFO, OK, WARN, Report, diagnose, format_report
from memsift._runtime.health import Health
from memsift.pipeline import recall
from memsift.services import open_services
from memsift.types import Message


@pytest.fixture
def env(tmp_path: Path, memsift_home: Path) -> dict[str, str]:
    """A fresh memsift home and a fresh HOME (for the agents' settings)."""
    home = tmp_path / "user"
    home.mkdir()
    return {"MEMSIFT_HOME": str(memsift_home), "HOME": str(home)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


def checks(report: Report, section: str, name: str | None = None) -> list[tuple[str, str]]:
    return [(c.status, c.detail) for c in report.checks if c.section == section and name in (None, c.name)]


def test_a_fresh_home_works_offline_and_says_the_hooks_are_missing(env: dict[str, str], project: Path) -> None:
    report = diagnose(project, environ=env)
    assert report.healthy
    assert {s.source for s in report.settings} == {"default", "environment"}  # home from MEMSIFT_HOME
    # decider, store, and the model server: not running, or the extra not installed (neither an error)
    assert [status for status, _ in checks(report, "services")] == [OK, OK, INFO]
    assert checks(report, "project", "root") == [(OK, str(project))]
    [(status, notes)] = checks(report, "project", "notes")
    assert status == OK and str(load_config(env).project_dir(project) / "notes.md") in notes
    assert [status for status, _ in checks(report, "hooks")] == [WARN, WARN]
    assert "memsift install claude-code" in format_report(report)


def test_each_setting_says_where_it_came_from_and_secrets_stay_hidden(
        env: dict[str, str], project: Path, memsift_home: Path) -> None:
    (memsift_home / "config.toml").write_text('dataset = "shop"\nmax_items = 2\n\n[embedded]\nkeep_threshold = 0.7\n')
    env.update(MEMSIFT_MAX_ITEMS="3", MEMSIFT_DECIDER_API_KEY="sk-not-shown-anywhere")

    report = diagnose(project, environ=env)

    sources = {s.name: (s.value, s.source) for s in report.settings}
    assert sources["dataset"] == ("shop", "config.toml")
    assert sources["max_items"] == ("3", "environment")  # the environment wins over the file
    assert sources["store"] == ("embedded", "default")
    assert sources["keep_threshold"] == ("0.7", "config.toml [embedded]")  # the backend answering keep
    assert sources["decider_api_key"] == ("(set)", "environment")
    assert "sk-not-shown-anywhere" not in report.as_json() + format_report(report)


def test_a_configuration_error_fails_and_exits_non_zero(env: dict[str, str], project: Path,
                                                        memsift_home: Path) -> None:
    (memsift_home / "config.toml").write_text("max_items = 'two'\n")

    report = diagnose(project, environ=env)
    assert not report.healthy
    [(status, detail)] = checks(report, "configuration")
    assert status == FAIL and "max_items='two'" in detail

    done = _doctor_command(env, project, "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["healthy"] is False


def test_the_command_exits_zero_when_memory_works(env: dict[str, str], project: Path) -> None:
    fresh = _doctor_command(env, project)
    _install(env, "claude-code")
    done = _doctor_command(env, project)

    assert fresh.returncode == 0 and fresh.stdout.startswith("memsift doctor: memory is on, 2 things to fix"), (
        fresh.stdout)  # no agent has the hooks
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("memsift doctor: memory works\n")


def test_a_damaged_store_or_breaker_file_fails(env: dict[str, str], project: Path, memsift_home: Path) -> None:
    store = load_config(env).project_dir(project) / "store.sqlite"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"this is not a database, it only has the name of one" * 100)
    (memsift_home / "health.json").write_text('{"Cognee at http://127.0.0.1:8000": {"open": tr')

    report = diagnose(project, environ=env)

    assert not report.healthy
    assert [status for status, _ in checks(report, "services", "store")] == [FAIL]
    assert [status for status, _ in checks(report, "services", "breakers")] == [FAIL]


def test_notes_and_store_are_counted(env: dict[str, str], project: Path) -> None:
    from memsift.pipeline import retain
    from memsift.types import Exchange

    services = open_services(load_config(env), project)
    retain(Exchange("Should we use Stripe or Mollie?", "Stripe: Mollie webhooks dropped events under load, "
                    "so we chose Stripe over Mollie."), services)

    report = diagnose(project, environ=env)

    assert "(1 notes)" in checks(report, "project", "notes")[0][1]
    assert "(1 passages)" in checks(report, "services", "store")[0][1]


class CogneeHealth:
    """Cognee's ``GET /health`` on 127.0.0.1: 200 ``{"status": "ready", ...}`` or 503 when not ready."""

    def __init__(self, ready: bool) -> None:
        self.ready = ready
        self.asked = 0

    def __enter__(self) -> str:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                outer.asked += 1
                ok = self.path == "/health" and outer.ready
                body = json.dumps({"status": "ready", "health": "healthy", "version": "1.6.5"} if ok
                                  else {"status": "not ready"}).encode()
                self.send_response(200 if ok else 503)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def cognee_ready() -> Iterator[tuple[CogneeHealth, str]]:
    server = CogneeHealth(ready=True)
    with server as url:
        yield server, url


def test_a_cognee_store_that_answers_health_is_ok(env: dict[str, str], project: Path, cognee_ready) -> None:
    server, url = cognee_ready
    env.update(MEMSIFT_STORE="cognee", MEMSIFT_COGNEE_URL=url)
    report = diagnose(project, environ=env)
    assert report.healthy and server.asked == 1
    assert checks(report, "services", "store") == [(OK, f"Cognee at {url}: /health answered 200")]


def test_a_cognee_store_not_ready_or_not_there_fails(env: dict[str, str], project: Path) -> None:
    with CogneeHealth(ready=False) as url:
        env.update(MEMSIFT_STORE="cognee", MEMSIFT_COGNEE_URL=url)
        report = diagnose(project, environ=env)
    [(status, detail)] = checks(report, "services", "store")
    assert status == FAIL and "answered 503" in detail and not report.healthy

    # The server is gone: nothing listens on its port now.
    report = diagnose(project, environ=env, probe_timeout=0.5)
    [(status, detail)] = checks(report, "services", "store")
    assert status == FAIL and "did not answer" in detail
    assert _doctor_command(env, project).returncode == 1


def test_an_open_breaker_pauses_memory(env: dict[str, str], project: Path, memsift_home: Path,
                                       cognee_ready) -> None:
    _, url = cognee_ready
    env.update(MEMSIFT_STORE="cognee", MEMSIFT_COGNEE_URL=url)
    Health(memsift_home).failed(f"Cognee at {url}", "ConnectError: connection refused")

    report = diagnose(project, environ=env)

    # It answers again: the next call after the cool-down closes the breaker, so a warning.
    [(status, detail)] = checks(report, "services", "breaker")
    assert status == WARN and "open since" in detail and "connection refused" in detail
    assert report.healthy

    # A breaker of a service no longer configured only informs.
    Health(memsift_home).failed("decider at api.example.com", "timed out")
    report = diagnose(project, environ=env)
    assert report.healthy
    assert (INFO, "decider at api.example.com (not configured now): open") in checks(report, "services", "breaker")

    # Configured, it has no probe to vouch for it: memory cannot work while it is open.
    env.update(MEMSIFT_DECIDER="systemone", MEMSIFT_DECIDER_URL="https://api.example.com/v1/systemone",
               MEMSIFT_DECIDER_API_KEY="test-key-not-a-secret")
    report = diagnose(project, environ=env)
    assert not report.healthy
    assert checks(report, "services", "decider") == [
        (INFO, "decider at api.example.com: not probed, see its breaker below if it has one")]


def test_settings_a_service_refuses_fail(env: dict[str, str], project: Path) -> None:
    env.update(MEMSIFT_DECIDER="systemone", MEMSIFT_DECIDER_URL="ftp://api.example.com")
    [(status, detail)] = checks(diagnose(project, environ=env), "services")
    assert status == FAIL and "MEMSIFT_DECIDER_URL must be an http(s) URL" in detail


def test_the_last_decisions_are_shown_with_their_traces(env: dict[str, str], project: Path,
                                                        memsift_home: Path) -> None:
    services = open_services(load_config(env), project)
    log = DecisionLog(memsift_home)
    for text in ("thanks", "ok", "why did we pick Stripe?"):
        log.record("claude-code", "UserPromptSubmit", str(project), recall(Message(text), services))

    report = diagnose(project, environ=env, last=2)

    assert len(report.decisions) == 2
    text = format_report(report)
    assert "last decisions (2, oldest first)" in text
    assert "claude-code UserPromptSubmit (recall" in text and "      classify " in text
    assert json.loads(report.as_json())["decisions"][-1]["path"] == "recall"


def _doctor_command(env: dict[str, str], project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memsift", "doctor", "--project", str(project), *args],
                          env={**env, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)


# -- hooks, written by the real `memsift install` ---------------------------------------

def _install(env: dict[str, str], *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "memsift", "install", *args], env={**env, "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_installed_hooks_are_found_and_codex_trust_is_checked(env: dict[str, str], project: Path) -> None:
    _install(env, "claude-code")
    _install(env, "codex", "--trust")

    report = diagnose(project, environ=env)

    [(status, claude)] = checks(report, "hooks", "claude-code")
    assert status == OK and claude.startswith(f"user settings {env['HOME']}/.claude/settings.json")
    assert "SessionEnd, SessionStart, Stop, UserPromptSubmit" in claude
    [(status, codex)] = checks(report, "hooks", "codex")
    assert status == OK and codex.endswith("; trusted") and f"{env['HOME']}/.codex/hooks.json" in codex


def test_untrusted_or_edited_codex_hooks_are_flagged(env: dict[str, str], project: Path) -> None:
    _install(env, "codex")
    [(status, detail)] = checks(diagnose(project, environ=env), "hooks", "codex")
    assert status == WARN and "NOT TRUSTED: SessionEnd, SessionStart, Stop, UserPromptSubmit" in detail

    _install(env, "codex", "--trust")
    hooks_file = Path(env["HOME"]) / ".codex" / "hooks.json"
    settings = json.loads(hooks_file.read_text())
    settings["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 30  # Codex wants any edit trusted again
    hooks_file.write_text(json.dumps(settings))
    [(status, detail)] = checks(diagnose(project, environ=env), "hooks", "codex")
    assert status == WARN and detail.endswith("NOT TRUSTED: Stop (Codex skips them without a word: trust them "
                                              "in Codex's /hooks, or run memsift install codex --trust)")


def test_a_project_s_codex_hooks_also_need_the_project_trusted(env: dict[str, str], project: Path) -> None:
    _install(env, "codex", "--project", str(project), "--trust")
    [(status, detail)] = checks(diagnose(project, environ=env), "hooks", "codex")
    assert status == WARN and "the project" in detail and "is not trusted" in detail

    with open(Path(env["HOME"]) / ".codex" / "config.toml", "a") as config:
        config.write(f'\n[projects."{project}"]\ntrust_level = "trusted"\n')
    [(status, detail)] = checks(diagnose(project, environ=env), "hooks", "codex")
    assert status == OK and detail.startswith(f"project {project}/.codex/hooks.json")


def test_only_hooks_that_run_memsift_hook_count(env: dict[str, str], project: Path) -> None:
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo memsift hooked"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "/opt/venv/bin/python -m memsift hook claude-code Stop"}]}],
    }}))

    [(status, detail)] = checks(diagnose(project, environ=env), "hooks", "claude-code")

    assert status == WARN  # Stop alone: memory keeps, but never recalls
    assert detail == (f"project, local settings {settings}: Stop (missing UserPromptSubmit: memory cannot recall)")


def test_the_claude_code_plugin_counts_when_enabled(env: dict[str, str], project: Path) -> None:
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"enabledPlugins": {"memsift@memsift": True, "other@market": True}}))
    assert checks(diagnose(project, environ=env), "hooks", "claude-code") == [
        (OK, f"user settings {settings}: plugin memsift@memsift enabled")]

    settings.write_text(json.dumps({"enabledPlugins": {"memsift@memsift": False}}))
    [(status, _)] = checks(diagnose(project, environ=env), "hooks", "claude-code")
    assert status == WARN


def test_the_detached_hooks_errors_are_shown(env: dict[str, str], project: Path, memsift_home: Path) -> None:
    from memsift._cli.doctor import HOOK_ERRORS
    from memsift_adapters.hook import LOG

    assert HOOK_ERRORS == LOG  # the file the adapters write
    (memsift_home / LOG).write_text("".join(f"memsift: codex Stop hook: failure {n}\n" for n in range(5)))

    [(status, detail)] = checks(diagnose(project, environ=env), "hooks", "errors")

    assert status == "info" and "failure 1" not in detail
    assert [line.strip() for line in detail.splitlines()[1:]] == [
        f"memsift: codex Stop hook: failure {n}" for n in (2, 3, 4)]


def test_memory_off_for_a_stage_fails_while_doctor_finds_it_too_and_its_recovery_says_so(
        env: dict[str, str], project: Path, memsift_home: Path) -> None:
    health = Health(memsift_home)
    health.broken("the notes stage", "NotRegularFile: notes.md is not a regular file")
    notes = load_config(env).project_dir(project) / "notes.md"
    notes.mkdir(parents=True)  # what the hook found: doctor finds it too

    off = diagnose(project, environ=env)
    notes.rmdir()  # the user fixed it; no hook ran since
    fixed = diagnose(project, environ=env)
    health.succeeded("the notes stage")
    back = diagnose(project, environ=env)

    assert not off.healthy
    [(status, detail)] = checks(off, "services", "memory off")
    assert status == FAIL and detail.startswith("the notes stage: NotRegularFile")
    assert fixed.healthy  # checked afresh, not the last hook's verdict
    [(status, detail)] = checks(fixed, "services", "memory off")
    assert status == WARN and detail.endswith("the files and services doctor checks work now: the next message "
                                              "tries again")
    assert back.healthy and checks(back, "services", "memory off")[0][0] == OK


def test_a_fixed_settings_error_is_history_at_once(env: dict[str, str], project: Path, memsift_home: Path) -> None:
    """The hook recorded "cannot read config.toml"; the user fixed it: doctor loads the settings itself."""
    (memsift_home / "config.toml").write_text("store = 'mongo'\n")
    hook = subprocess.run([sys.executable, "-m", "memsift", "hook", "claude-code", "SessionStart"], timeout=60,
                          env={**env, "CLAUDE_CODE_ENTRYPOINT": "cli"},
                          input=json.dumps({"session_id": "s1", "cwd": str(project)}), capture_output=True, text=True)
    assert "memory off" in hook.stdout
    assert not diagnose(project, environ=env).healthy

    (memsift_home / "config.toml").write_text("store = 'embedded'\n")
    report = diagnose(project, environ=env)

    assert report.healthy
    [(status, detail)] = checks(report, "services", "memory off")
    assert status == INFO and detail.endswith("they load now (the next hook says memory back on)")


def test_an_unknown_memsift_variable_is_a_warning(env: dict[str, str], project: Path) -> None:
    env["MEMSIFT_ANSWER_THRESHOLD"] = "0.9"
    report = diagnose(project, environ=env)

    assert report.healthy
    assert checks(report, "configuration", "environment") == [
        (WARN, "MEMSIFT_ANSWER_THRESHOLD is not a memsift setting (did you mean MEMSIFT_ANSWERS_THRESHOLD?), ignored")]


def test_a_misspelled_setting_is_a_warning_with_the_fix_and_never_memory_works(
        env: dict[str, str], project: Path, memsift_home: Path) -> None:
    """The typo is ignored (memory works with the other settings) and named with the right name;
    the headline counts it as a thing to fix."""
    (memsift_home / "config.toml").write_text("jugde = 'semantic'\nmax_items = 2\n")

    done = _doctor_command(env, project)

    assert done.returncode == 0, done.stdout + done.stderr
    headline, *lines = done.stdout.splitlines()
    assert "memory works" not in headline and "to fix" in headline, headline
    assert any(line.split()[:2] == ["warn", "config.toml"] and "jugde is not a memsift setting (did you mean "
               "judge?), ignored" in line for line in lines), done.stdout
    assert "max_items" in done.stdout  # the setting spelled right is read


def test_a_project_folder_that_does_not_exist_fails_and_nothing_is_made(
        env: dict[str, str], tmp_path: Path, memsift_home: Path) -> None:
    missing = tmp_path / "no-such-project"

    report = diagnose(missing, environ=env)

    assert not report.healthy
    assert checks(report, "project", "root") == [
        (FAIL, f"{missing} is not a folder (--project names the project's folder)")]
    assert not missing.exists() and not (memsift_home / "projects").exists()


# -- routes: install, plugin, both -------------------------------------------------------

def _enable_claude_plugin(env: dict[str, str]) -> Path:
    """What `claude plugin install memsift@memsift` writes into the user's settings (Claude Code 2.1.332)."""
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    current = json.loads(settings.read_text()) if settings.exists() else {}
    settings.write_text(json.dumps({**current, "enabledPlugins": {"memsift@memsift": True}}))
    return settings


def _enable_codex_plugin(env: dict[str, str]) -> Path:
    """What `codex plugin add memsift@memsift` writes into config.toml (Codex 0.171.0)."""
    config = Path(env["HOME"]) / ".codex" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    with config.open("a") as out:
        out.write('\n[plugins."memsift@memsift"]\nenabled = true\n')
    return config


def test_a_codex_plugin_user_hears_nothing_about_claude_code_and_sees_the_route(
        env: dict[str, str], project: Path) -> None:
    _enable_codex_plugin(env)
    env["PATH"] = f"{Path(sys.executable).parent}:/usr/bin:/bin"  # where pipx would put memsift

    report = diagnose(project, environ=env)

    assert report.healthy
    assert checks(report, "hooks", "claude-code") == []  # no ~/.claude: not an agent this user has
    [(status, detail)] = checks(report, "hooks", "route")
    found = Path(sys.executable).parent / "memsift"
    assert status == OK and detail == f"codex: plugin (its hooks run {found}, found on the PATH)"
    assert "memsift install codex" not in format_report(report)


def test_a_plugin_without_memsift_on_the_path_is_told(env: dict[str, str], project: Path) -> None:
    _enable_claude_plugin(env)
    env["PATH"] = "/usr/bin:/bin"

    [(status, detail)] = checks(diagnose(project, environ=env), "hooks", "route")

    assert status == WARN and detail.startswith("claude-code: plugin: its hooks run the memsift on the PATH, and "
                                                "there is none on this one: memory is off")


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_install_and_plugin_both_running_the_hooks_is_a_warning(agent: str, env: dict[str, str],
                                                                project: Path) -> None:
    _install(env, agent, *(["--trust"] if agent == "codex" else []))
    (_enable_claude_plugin if agent == "claude-code" else _enable_codex_plugin)(env)

    report = diagnose(project, environ=env)

    [(status, detail)] = checks(report, "hooks", "route")
    assert status == WARN and detail.startswith(f"{agent}: install and plugin: 2 of them run SessionEnd, "
                                                "SessionStart, Stop, UserPromptSubmit")
    assert f"keep one (memsift uninstall {agent} or " in detail


def test_a_hook_command_naming_an_unknown_agent_or_event_is_a_warning_not_a_hook(
        env: dict[str, str], project: Path) -> None:
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "memsift hook claude UserPromptSubmit"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "memsift hook claude-code Stopped"}]}]}}))

    rows = checks(diagnose(project, environ=env), "hooks", "claude-code")

    assert rows == [
        (WARN, f"user settings {settings}: UserPromptSubmit runs `memsift hook claude UserPromptSubmit`, which "
               "names an unknown agent 'claude': memory is off there (write memsift hook claude-code "
               "UserPromptSubmit)"),
        (WARN, f"user settings {settings}: Stop runs `memsift hook claude-code Stopped`, which names an unknown "
               "event 'Stopped': memory is off there (write memsift hook claude-code Stop)"),
        (WARN, "not installed (memsift install claude-code [--project DIR], or the plugin: docs/agents.md)")]


def test_the_report_keeps_its_columns(env: dict[str, str], project: Path, memsift_home: Path) -> None:
    (memsift_home / "hooks.log").write_text("memsift: codex Stop hook: one\nmemsift: codex Stop hook: two\n")
    _install(env, "codex")
    report = diagnose(project, environ=env)
    lines = format_report(report).splitlines()
    column = 2 + 4 + 2 + max(len(check.name) for check in report.checks) + 2  # mark, name, then the detail

    rows = [line for line in lines if line[2:6] in ("ok  ", "··  ", "warn", "FAIL")]
    assert len(rows) == len(report.checks)
    assert all(row[column - 2:column] == "  " and row[column] != " " for row in rows), rows
    after_log = lines[next(i for i, line in enumerate(lines) if "hooks.log, last written" in line) + 1]
    assert after_log == " " * column + "memsift: codex Stop hook: one"  # a detail's next lines stay in its column
    settings = [line for line in lines[2:] if line.startswith("  ") and line.rstrip().endswith(
        ("default", "environment"))]
    assert len({line.rstrip().rindex(" ") for line in settings}) == 1  # the sources in one column
