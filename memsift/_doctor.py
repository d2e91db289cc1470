"""``memsift doctor``: can memory work here, and what did it decide lately?

    >>> report = diagnose("/src/shop")
    >>> report.healthy                       # False when memory cannot work
    True
    >>> print(format_report(report))         # or report.as_json() for scripts

It reports the settings and where each came from (default, ``config.toml``,
environment), the project's root and notes, each service's health (the
breaker's state; a Cognee store is also asked ``/health``), whether the hooks
are installed in Claude Code and Codex (and, for Codex, trusted), and the
last decisions from the decision log with their traces.

A check is ``ok``, ``info``, ``warn`` (memory works, but not everywhere it
could: a hook missing or untrusted, a paused service that answers again) or
``fail`` (memory cannot work: a configuration error, damaged state, a service
down). ``healthy`` is False when any check failed.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from attrs import asdict, frozen

from .config import Config, default_home, load_config, setting_sources
from ._decisions import DecisionLog
from .errors import MemsiftError
from ._install import trust_entries

OK, INFO, WARN, FAIL = "ok", "info", "warn", "fail"
SECRET_NAMES = ("_key", "_password", "_token", "_secret")  # a setting named so is never printed
# A hook is memsift's when its command runs ``memsift hook`` (the console script or ``-m memsift``).
_MEMSIFT_HOOK = re.compile(r"(?:^|[\s/\"'])memsift(?:\.exe)?[\"']?\s+hook(?:\s|$)")
_ESSENTIAL = ("UserPromptSubmit", "Stop")  # recall and retain: without these memory does nothing


@frozen
class Setting:
    name: str
    value: str
    source: str  # "default" | "config.toml" | "environment"


@frozen
class Check:
    section: str  # "configuration" | "project" | "services" | "hooks"
    name: str
    status: str  # OK | INFO | WARN | FAIL
    detail: str


@frozen
class Report:
    home: str
    settings: tuple[Setting, ...]
    checks: tuple[Check, ...]
    decisions: tuple[dict[str, Any], ...]

    @property
    def healthy(self) -> bool:
        """False when memory cannot work: a check failed."""
        return not any(check.status == FAIL for check in self.checks)

    def as_json(self) -> str:
        data = asdict(self)
        data["healthy"] = self.healthy
        return json.dumps(data, indent=1)


def diagnose(project: str | os.PathLike[str] = ".", *, environ: Mapping[str, str] | None = None,
             last: int = 5, probe_timeout: float = 2.0) -> Report:
    """Everything ``memsift doctor`` prints, for the project at *project*."""
    from ._project import project_root

    environ = os.environ if environ is None else environ
    home = default_home(environ)
    root = project_root(project)
    checks: list[Check] = []
    settings: tuple[Setting, ...] = ()
    try:
        config = load_config(environ)
        sources = setting_sources(environ)
    except MemsiftError as exc:
        checks.append(Check("configuration", "config", FAIL, str(exc)))
    else:
        settings = _settings(config, sources)
        checks += _project_checks(config, root)
        checks += _service_checks(config, root, probe_timeout)
    checks += _hook_checks(environ, root)
    return Report(str(home), settings, tuple(checks), tuple(DecisionLog(home).last(last)))


def _settings(config: Config, sources: Mapping[str, str]) -> tuple[Setting, ...]:
    shown = []
    for name, value in asdict(config).items():
        if name.endswith(SECRET_NAMES):
            value = "(not set)" if value is None else "(set)"  # never print a key or a password
        shown.append(Setting(name, str(value), sources[name]))
    return tuple(shown)


# -- the project ----------------------------------------------------------------------

def _project_checks(config: Config, root: Path) -> list[Check]:
    notes = config.project_dir(root) / "notes.md"
    checks = [Check("project", "root", OK if root.is_dir() else WARN,
                    str(root) if root.is_dir() else f"{root} is not a folder")]
    try:
        lines = [line for line in notes.read_text(encoding="utf-8").splitlines() if line.strip()]
    except FileNotFoundError:
        checks.append(Check("project", "notes", OK, f"{notes} (none yet: the first kept exchange makes it)"))
    except (OSError, UnicodeDecodeError) as exc:
        checks.append(Check("project", "notes", FAIL, f"{notes} cannot be read: {exc}"))
    else:
        checks.append(Check("project", "notes", OK, f"{notes} ({len(lines)} notes)"))
    return checks


# -- the services ---------------------------------------------------------------------

def _service_checks(config: Config, root: Path, probe_timeout: float) -> list[Check]:
    from .services import open_services
    from .stages import is_remote

    try:
        services = open_services(config, root)
    except Exception as exc:  # settings a service refuses, or embedded weights that do not load
        return [Check("services", "services", FAIL, f"they do not open: {type(exc).__name__}: {exc}")]
    remote = {service.name for service in (services.decider, services.store)
              if service is not None and is_remote(service)}
    checks = [_decider_check(services.decider.name, remote)]
    if config.store == "cognee":
        probe = _cognee_probe(config.cognee_url, probe_timeout)
        checks += [probe, _outbox_check(config.home / "outbox.sqlite")]
        answering = {f"Cognee at {config.cognee_url.rstrip('/')}"} if probe.status == OK else set()
    else:
        checks.append(_sqlite_check(config.project_dir(root) / "store.sqlite"))
        answering = set()
    return [*checks, _model_server_check(config), *_breaker_checks(config.home, remote, answering)]


def _model_server_check(config: Config) -> Check:
    """The warm model server hooks reach (``memsift serve``): running or not, and as what."""
    from . import __version__
    from .semantic import _serve
    from .semantic.model import installed

    def row(status: str, detail: str) -> Check:
        return Check("services", "model server", status, detail)

    if config.judge == "lexical":
        return row(INFO, "off: judge = lexical, every message is judged lexically")
    if config.embedding_model is None and not installed():
        return row(INFO, "the [semantic] extra is not installed: messages are judged lexically "
                         "(pip install 'memsift[semantic]' for the semantic judge)")
    path = _serve.socket_path(config.home)
    told = _serve.status(config.home)
    if told is None:
        if _serve.lock_held(config.home):
            return row(INFO, f"starting (loading its model), socket {path}")
        return row(INFO, f"not running: the next searching message starts it (and is judged lexically); "
                         f"socket {path}")
    rss = told.get("rss_bytes")
    idle = float(told.get("idle_seconds", 0))
    since = time.strftime("%H:%M:%S UTC", time.gmtime(time.time() - idle))
    detail = (f"running: pid {told.get('pid')}, memsift {told.get('memsift')}, model {told.get('model')}, "
              f"RSS {rss / 2**20:.0f} MB, idle since {since} ({idle:.0f} s; it ends after "
              f"{config.serve_idle:g} s idle), socket {path}" if isinstance(rss, int) else f"running: {told}")
    if told.get("memsift") != __version__:
        return row(INFO, f"{detail}; another version than this memsift ({__version__}): the next hook replaces it")
    wanted = _served_model(config)
    if told.get("model") != wanted:
        return row(INFO, f"{detail}; another model than embedding_model ({wanted}): the next hook replaces it")
    return row(OK, detail)


def _served_model(config: Config) -> str:
    """The name of the model hooks ask the server for (its folder's name and size, or the packaged one's)."""
    from .semantic.model import PACKAGED, model_files

    if config.embedding_model is None:
        return PACKAGED
    try:
        return model_files(config.embedding_model)[2]
    except MemsiftError as exc:
        return f"unreadable: {exc}"


def _decider_check(name: str, remote: set[str]) -> Check:
    if name in remote:  # a question costs a call (and money): its breaker says how it went
        return Check("services", "decider", INFO, f"{name}: not probed, see its breaker below if it has one")
    return Check("services", "decider", OK, f"{name}: loaded")


def _sqlite_check(path: Path) -> Check:
    if not path.exists():
        return Check("services", "store", OK, f"embedded store {path} (none yet: the first kept exchange makes it)")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
        try:
            verdict = db.execute("PRAGMA quick_check").fetchone()[0]
            count = db.execute("SELECT count(*) FROM passages").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error as exc:
        return Check("services", "store", FAIL, f"embedded store {path} is damaged: {exc}")
    if verdict != "ok":
        return Check("services", "store", FAIL, f"embedded store {path} is damaged: {verdict}")
    return Check("services", "store", OK, f"embedded store {path} ({count} passages)")


def _cognee_probe(url: str, timeout: float) -> Check:
    import httpx

    name = f"Cognee at {url}"
    try:
        reply = httpx.get(url.rstrip("/") + "/health", timeout=timeout)
    except httpx.HTTPError as exc:
        return Check("services", "store", FAIL, f"{name}: /health did not answer in {timeout:g} s "
                                                f"({type(exc).__name__}: {exc})")
    if reply.status_code != 200:
        return Check("services", "store", FAIL, f"{name}: /health answered {reply.status_code} "
                                                f"{reply.text[:120]!r}")
    return Check("services", "store", OK, f"{name}: /health answered 200")


def _outbox_check(path: Path) -> Check:
    if not path.exists():
        return Check("services", "outbox", OK, f"{path} (none yet)")
    from ._outbox import Outbox

    outbox = Outbox(path)
    try:
        pending = outbox.pending()
    except sqlite3.Error as exc:
        return Check("services", "outbox", FAIL, f"{path} is damaged: {exc}")
    finally:
        outbox.close()
    return Check("services", "outbox", OK, f"{path}: {pending} items waiting for the store")


def _breaker_checks(home: Path, remote: set[str], answering: set[str]) -> list[Check]:
    """The breakers in ``health.json``: an open one pauses memory until its service answers.

    An open breaker fails, unless its service just answered a probe (the next
    call after the cool-down closes it) or is no longer configured.
    """
    from ._health import FILE_NAME

    path = home / FILE_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        return [Check("services", "breakers", FAIL, f"{path} is damaged: {exc}")]
    if not isinstance(data, dict):
        return [Check("services", "breakers", FAIL, f"{path} is damaged: not an object")]
    checks = []
    for service, state in sorted(data.items()):
        if isinstance(state, dict) and state.get("kind") in ("broken", "event"):  # memsift's own troubles
            checks.append(_trouble_check(service, state))
            continue
        if not isinstance(state, dict) or not state.get("open"):
            checks.append(Check("services", "breaker", OK, f"{service}: closed"))
            continue
        detail = (f"{service}: open since {_clock(state.get('since'))} ({state.get('reason', '')}); "
                  f"memory is paused, next try at {_clock(state.get('retry_at'))}")
        if service not in remote:
            checks.append(Check("services", "breaker", INFO, f"{service} (not configured now): open"))
        else:
            checks.append(Check("services", "breaker", WARN if service in answering else FAIL, detail))
    return checks


def _trouble_check(name: str, state: dict[str, Any]) -> Check:
    """An entry ``Health.broken`` or ``Health.damaged`` wrote: memory off, or a file set aside."""
    if state["kind"] == "event":
        return Check("services", "recovered", INFO, f"{name} {state.get('reason', '')} at {_clock(state.get('since'))}")
    if state.get("open"):
        since = _clock(state.get("since"))
        return Check("services", "memory off", FAIL, f"{name}: {state.get('reason', '')} (since {since})")
    return Check("services", "memory off", OK, f"{name}: works again since {_clock(state.get('since'))}")


def _clock(stamp: object) -> str:
    return time.strftime("%H:%M:%S", time.localtime(stamp)) if isinstance(stamp, int | float) else "?"


# -- the hooks ------------------------------------------------------------------------

HOOK_ERRORS = "hooks.log"  # in memsift's home: where the hooks' detached work (Stop, SessionEnd) says what failed


def _hook_checks(environ: Mapping[str, str], root: Path) -> list[Check]:
    return _claude_checks(environ, root) + _codex_checks(environ, root) + _hook_errors(default_home(environ))


def _hook_errors(home: Path, shown: int = 3) -> list[Check]:
    """The last lines the detached hooks wrote: the agent had stopped listening, so nobody saw them."""
    path = home / HOOK_ERRORS
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[-shown:]
        written = path.stat().st_mtime
    except FileNotFoundError:
        return []
    except OSError as exc:
        return [Check("hooks", "errors", WARN, f"{path} cannot be read: {exc}")]
    if not lines:
        return []
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(written))
    return [Check("hooks", "errors", INFO,
                  f"{path}, last written {when}:" + "".join(f"\n              {line}" for line in lines))]


def _claude_checks(environ: Mapping[str, str], root: Path) -> list[Check]:
    user_dir = Path(environ.get("CLAUDE_CONFIG_DIR") or Path(environ.get("HOME", "~")).expanduser() / ".claude")
    files = [("user", user_dir / "settings.json"), ("project", root / ".claude" / "settings.json"),
             ("project, local", root / ".claude" / "settings.local.json")]
    checks, found = [], False
    for scope, path in files:
        try:
            settings = _json_object(path)
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            checks.append(Check("hooks", "claude-code", WARN, f"{scope} settings {path} cannot be read: {exc}"))
            continue
        events = sorted({event for event, _ in _memsift_handlers(_hooks_of(settings))})
        if events:
            checks.append(Check("hooks", "claude-code", _events_status(events),
                                f"{scope} settings {path}: {', '.join(events)}{_missing(events)}"))
        plugins = settings.get("enabledPlugins")
        # The plugin brings the hooks itself: enabling it is installing them.
        enabled = [name for name, on in plugins.items() if name.startswith("memsift@") and on] \
            if isinstance(plugins, dict) else []
        if enabled:
            checks.append(Check("hooks", "claude-code", OK, f"{scope} settings {path}: plugin {enabled[0]} enabled"))
        found = found or bool(events) or bool(enabled)
    if not found:
        checks.append(Check("hooks", "claude-code", WARN,
                            "not installed (memsift install claude-code [--project DIR])"))
    return checks


def _codex_checks(environ: Mapping[str, str], root: Path) -> list[Check]:
    codex_home = Path(environ.get("CODEX_HOME") or Path(environ.get("HOME", "~")).expanduser() / ".codex")
    user_config = codex_home / "config.toml"
    try:
        config = _toml(user_config)
    except FileNotFoundError:
        config = {}
    except (OSError, ValueError) as exc:
        return [Check("hooks", "codex", WARN, f"{user_config} cannot be read: {exc}")]
    trusted = {key: entry.get("trusted_hash") for key, entry in
               config.get("hooks", {}).get("state", {}).items() if isinstance(entry, dict)}
    project_trusted = (config.get("projects", {}).get(str(root), {}).get("trust_level") == "trusted")
    sources = [("user", codex_home / "hooks.json"), ("user", user_config),
               ("project", root / ".codex" / "hooks.json"), ("project", root / ".codex" / "config.toml")]
    checks, found = [], False
    for scope, path in sources:
        try:
            hooks = _hooks_of(_toml(path) if path.suffix == ".toml" else _json_object(path))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            checks.append(Check("hooks", "codex", WARN, f"{scope} {path} cannot be read: {exc}"))
            continue
        check = _codex_file_check(f"{scope} {path}", path, hooks, trusted)
        if check is None:
            continue
        found = True
        if check.status == OK and scope == "project" and not project_trusted:
            check = Check("hooks", "codex", WARN, f"{check.detail}; but the project {root} is not trusted "
                          "(Codex ignores its .codex/ folder: codex exec --trust, or trust it in the TUI)")
        checks.append(check)
    if not found:
        checks.append(Check("hooks", "codex", WARN, "not installed (memsift install codex [--project DIR] [--trust])"))
    return checks


def _codex_file_check(where: str, path: Path, hooks: Mapping[str, Any],
                      trusted: Mapping[str, object]) -> Check | None:
    """memsift's hooks in one Codex file, and whether each is trusted; None when it has none."""
    events = sorted({event for event, _ in _memsift_handlers(hooks)})
    if not events:
        return None
    untrusted = []
    for event in events:
        # The trusted hash of each memsift handler, as Codex computes it; none for a command install does not write.
        wanted = trust_entries(path, {"hooks": {event: hooks[event]}})
        if not wanted or any(trusted.get(key) != digest for key, digest in wanted.items()):
            untrusted.append(event)
    detail = f"{where}: {', '.join(events)}{_missing(events)}"
    if untrusted:
        return Check("hooks", "codex", WARN, f"{detail}; NOT TRUSTED: {', '.join(untrusted)} (Codex skips "
                     "them without a word: trust them in Codex's /hooks, or run memsift install codex --trust)")
    return Check("hooks", "codex", _events_status(events), f"{detail}; trusted")


def _events_status(events: list[str]) -> str:
    return OK if all(event in events for event in _ESSENTIAL) else WARN


def _missing(events: list[str]) -> str:
    missing = [event for event in _ESSENTIAL if event not in events]
    return f" (missing {', '.join(missing)}: memory cannot {'recall' if 'UserPromptSubmit' in missing else 'retain'})" \
        if missing else ""


def _json_object(path: Path) -> Mapping[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _hooks_of(settings: Mapping[str, Any]) -> Mapping[str, Any]:
    hooks = settings.get("hooks", {})
    return hooks if isinstance(hooks, dict) else {}


def _toml(path: Path) -> dict[str, Any]:
    import tomllib

    return tomllib.loads(path.read_text(encoding="utf-8"))


def _memsift_handlers(hooks: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(event, handler) of every hook that runs ``memsift hook``."""
    for event, groups in hooks.items():
        if event == "state" or not isinstance(groups, list):
            continue  # Codex's config.toml keeps its trust entries under hooks.state
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                command = handler.get("command") if isinstance(handler, dict) else None
                if isinstance(command, str) and _MEMSIFT_HOOK.search(command):
                    yield event, handler


# -- the text report ------------------------------------------------------------------

_MARK = {OK: "ok  ", INFO: "··  ", WARN: "warn", FAIL: "FAIL"}
_ALWAYS = ("home", "store", "decider")
# Shown when that service is configured.
_URLS = {"cognee": "cognee_url", "systemone": "decider_url", "openai": "decider_url", "anthropic": "decider_url"}


def format_report(report: Report) -> str:
    """The report as a person reads it."""
    failed = [check for check in report.checks if check.status == FAIL]
    out = [f"memsift doctor: {'memory works' if report.healthy else f'MEMORY CANNOT WORK ({len(failed)} failed)'}",
           "", f"configuration (home {report.home})"]
    # The services always, other settings when something changed them: --json has every one.
    services = {s.value for s in report.settings if s.name in ("store", "decider")}
    always = {*_ALWAYS, *(url for service, url in _URLS.items() if service in services)}
    shown = [s for s in report.settings if s.source != "default" or s.name in always]
    width = max((len(s.name) for s in shown), default=0)
    out += [f"  {s.name:<{width}}  {s.value:<28} {s.source}" for s in shown]
    if len(report.settings) > len(shown):
        out.append(f"  ({len(report.settings) - len(shown)} more at their defaults: memsift doctor --json lists them)")
    for section in ("configuration", "project", "services", "hooks"):
        checks = [check for check in report.checks if check.section == section]
        if checks:
            out += ["", section] if section != "configuration" else []
            out += [f"  {_MARK[c.status]}  {c.name:<11} {c.detail}" for c in checks]
    out += ["", f"last decisions ({len(report.decisions)}, oldest first)"]
    out += [line for entry in report.decisions for line in _decision_lines(entry)] or ["  none yet"]
    return "\n".join(out)


def _decision_lines(entry: Mapping[str, Any]) -> list[str]:
    kind = f" {entry['kind']}" if entry.get("kind") else ""
    added = f", {entry['added']} chars" if entry.get("added") else ""
    head = (f"  {entry.get('time', '?')}  {entry.get('agent', '?')} {entry.get('event', '?')}"
            f" ({entry.get('path', '?')}{kind}{added}): {entry.get('stopped_by', '?')}")
    lines = [head, f"      project {entry.get('project', '?')}"]
    if entry.get("notice"):
        lines.append(f"      notice: {entry['notice']}")
    for step in entry.get("trace", []):
        score = f" p={step['p']:.2f}" if isinstance(step.get("p"), int | float) else ""
        why = f" ({step['why']})" if step.get("why") else ""
        lines.append(f"      {step.get('stage', '?'):<9} {step.get('verdict', '?')}{score}{why} {step.get('ms', 0)} ms")
    return lines
