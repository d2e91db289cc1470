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
import shutil
import sqlite3
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from attrs import asdict, frozen

from ..config import Config, default_home, load_config, setting_sources
from .._hooks.decisions import DecisionLog
from ..errors import MemsiftError
from .install import AGENTS, TIMEOUTS, trust_entries
from ..screen import terminal_safe

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
    from .._fs.project import project_root

    environ = os.environ if environ is None else environ
    home = default_home(environ)
    root = project_root(project)
    checks: list[Check] = _name_checks(environ)
    settings: tuple[Setting, ...] = ()
    try:
        config = load_config(environ)
        sources = setting_sources(environ)
    except MemsiftError as exc:
        checks.append(Check("configuration", "config", FAIL, str(exc)))
    else:
        settings = _settings(config, sources)
        checks += _as_checked_now(_project_checks(config, root) + _keeping_checks(config, root, environ)
                                  + _service_checks(config, root, probe_timeout))
    checks += _hook_checks(environ, root)
    return Report(str(home), settings, tuple(checks), tuple(DecisionLog(home).last(last)))


def _name_checks(environ: Mapping[str, str]) -> list[Check]:
    """Names that are no setting, in the environment or config.toml: a typo the settings never see,
    ignored (memory works with the rest), each a warning with the closest name there is."""
    from ..config import unknown_settings

    return [Check("configuration", "environment" if line.startswith("MEMSIFT_") else "config.toml", WARN, line)
            for line in unknown_settings(environ)]


def _as_checked_now(checks: list[Check]) -> list[Check]:
    """The last hook's verdicts ("memory off") beside what doctor just checked itself.

    Settings that load now make a hook's "cannot read the settings" history; a stage's
    failure stays a failure unless doctor's own checks of the files and services all pass.
    """
    from .._hooks.guarded import SETTINGS

    fresh_fail = any(c.status == FAIL for c in checks if c.name != "memory off")
    out = []
    for check in checks:
        if check.name == "memory off" and check.status == FAIL:
            if check.detail.startswith(f"{SETTINGS}:"):
                check = Check(check.section, check.name, INFO, f"{check.detail}; they load now (the next hook "
                              "says memory back on)")
            elif not fresh_fail:
                check = Check(check.section, check.name, WARN, f"{check.detail}; the files and services doctor "
                              "checks work now: the next message tries again")
        out.append(check)
    return out


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
    if not root.is_dir():  # nothing to check in it: memory has no project here
        return [Check("project", "root", FAIL, f"{root} is not a folder (--project names the project's folder)")]
    checks = [Check("project", "root", OK, str(root))]
    try:
        lines = [line for line in notes.read_text(encoding="utf-8").splitlines() if line.strip()]
    except FileNotFoundError:
        checks.append(Check("project", "notes", OK, f"{notes} (none yet: the first kept exchange makes it)"))
    except (OSError, UnicodeDecodeError) as exc:
        checks.append(Check("project", "notes", FAIL, f"{notes} cannot be read: {exc}"))
    else:
        checks.append(Check("project", "notes", OK, f"{notes} ({len(lines)} notes)"))
    checks += _missing_lines_check(notes)
    return checks


def _missing_lines_check(notes: Path, shown: int = 3) -> list[Check]:
    """memsift's lines another program's write removed (an editor saving an older copy): a warning
    when there are some, nothing otherwise."""
    from ..notes import NotesFile

    try:
        missing = NotesFile(notes).missing()
    except OSError:  # unreadable notes: the notes check says so
        return []
    if not missing:
        return []
    listed = "; ".join(repr(line[:80]) for line in missing[-shown:])
    return [Check("project", "notes edits", WARN,
                  f"{len(missing)} of memsift's lines are gone from the notes, e.g. {listed} (an editor saving "
                  "from an older copy?); the store still holds their exchanges. `memsift notes --restore` puts "
                  "them back, `memsift notes --forget-missing` agrees they are gone")]


_WRITE_FIXES = {"no space left on device": "free space on its disk", "read-only file system": "remount it read-write"}


def _keeping_checks(config: Config, root: Path, environ: Mapping[str, str]) -> list[Check]:
    """Whether memory's files are the user's own (``_fs/trust.py``) and exchanges can be kept
    (``_keeping/spool.py``)."""
    from .._keeping.spool import cannot_write, spool_folder, waiting
    from .._fs.trust import untrusted_files

    folder = config.project_dir(root)
    foreign = untrusted_files(config.home, folder)
    checks = [Check("project", "not yours", FAIL, f"{d.reason}: memory is off for "
                    f"{'this project' if d.reason.startswith(str(folder)) else 'every project'}; fix: {d.fix}")
              for d in foreign]
    why = cannot_write(folder)
    if why:
        fix = _WRITE_FIXES.get(why, f"chmod u+w '{folder}'")
        checks.append(Check("project", "writable", FAIL, f"{folder} cannot be written ({why}): exchanges wait "
                                                         f"in {spool_folder(config.home, environ)}; fix: {fix}"))
    queued = waiting(config.home, environ)
    if queued:
        checks.append(Check("project", "waiting", WARN, f"{len(queued)} exchanges wait in {queued[0].parent} for "
                                                        "the home: the next retain keeps them once it can"))
    return checks


# -- the services ---------------------------------------------------------------------

def _service_checks(config: Config, root: Path, probe_timeout: float) -> list[Check]:
    from ..services import open_services
    from ..stages import is_remote

    try:
        services = open_services(config, root)
    except Exception as exc:  # settings a service refuses, or embedded weights that do not load
        return [Check("services", "services", FAIL, f"they do not open: {type(exc).__name__}: {exc}")]
    remote = {service.name for service in (services.decider, services.store)
              if service is not None and is_remote(service)}
    checks = [_decider_check(services.decider.name, remote)]
    if config.store == "cognee":
        probe = _cognee_probe(config.cognee_url, probe_timeout)
        checks += [probe, _scope_check(root, getattr(services.store, "dataset", "")),
                   *([_outbox_check(services.outbox.path)] if services.outbox else [])]
        answering = {f"Cognee at {config.cognee_url.rstrip('/')}"} if probe.status == OK else set()
    else:
        checks.append(_sqlite_check(config.project_dir(root) / "store.sqlite"))
        answering = set()
    return [*checks, _model_server_check(config), *_breaker_checks(config.home, remote, answering)]


def _model_server_check(config: Config) -> Check:
    """The warm model server hooks reach (``memsift serve``): running or not, and as what."""
    from .. import __version__
    from .._fs.trust import socket_not_yours
    from ..semantic import _serve
    from ..semantic.model import installed

    def row(status: str, detail: str) -> Check:
        return Check("services", "model server", status, detail)

    path = _serve.socket_path(config.home)
    try:
        foreign = socket_not_yours(path)
    except OSError:  # none there
        foreign = None
    if foreign is not None:  # whatever the judge: a hook asks a server there to recall a searching message
        return row(FAIL, f"{foreign}: hooks do not talk to it; fix: rm '{path}' (memsift serve makes its own)")
    if config.judge == "lexical":
        return row(INFO, "off: judge = lexical, every message is judged lexically")
    if config.embedding_model is None and not installed():
        return row(INFO, "the [semantic] extra is not installed: messages are judged lexically "
                         "(pip install 'memsift[semantic]' for the semantic judge)")
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
    from ..semantic.model import PACKAGED, model_files

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


def _scope_check(root: Path, dataset: str) -> Check:
    """Whose memory this project shares on the server: every clone with the same remote."""
    from .._fs.scope import identity

    project = identity(root)
    shared = ("this folder on this machine alone (no git remote)" if project.startswith("folder:")
              else f"every clone of {project}")
    return Check("services", "scope", INFO, f"dataset {dataset}: {shared}")


def _outbox_check(path: Path) -> Check:
    if not path.exists():
        return Check("services", "outbox", OK, f"{path} (none yet)")
    from .._keeping.outbox import Outbox

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
    from .._runtime.health import FILE_NAME

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
    """Each agent's routes (install, plugin, both), what is wrong with them, and the detached hooks' errors.

    An agent with no route is mentioned only when no agent has one, or (as ``info``) when its
    folder exists: a Codex-only user hears nothing about Claude Code.
    """
    found = {"claude-code": _claude_checks(environ, root), "codex": _codex_checks(environ, root)}
    anywhere = any(routes for _, routes in found.values())
    checks: list[Check] = []
    for agent, (rows, routes) in found.items():
        if routes:
            checks += [*rows, _route_check(agent, routes, environ)]
            continue
        checks += [row for row in rows if row.status != OK]  # a file that cannot be read, a misnamed command
        if not anywhere:
            checks.append(Check("hooks", agent, WARN, f"not installed ({_INSTALL[agent]})"))
        elif _agent_folder(agent, environ).is_dir():
            checks.append(Check("hooks", agent, INFO, f"no memsift hooks, if you use it: {_INSTALL[agent]}"))
    return checks + _hook_errors(default_home(environ))


_INSTALL = {"claude-code": "memsift install claude-code [--project DIR], or the plugin: docs/agents.md",
            "codex": "memsift install codex [--project DIR] [--trust], or the plugin: docs/agents.md"}
_PLUGIN_REMOVAL = {"claude-code": "claude plugin uninstall memsift@memsift",
                   "codex": "codex plugin remove memsift@memsift"}


@frozen
class Route:
    """One way memsift's hooks reach an agent: ``memsift install`` into a file, or the plugin."""

    kind: str  # "install" | "plugin"
    where: str
    events: tuple[str, ...]


def _route_check(agent: str, routes: list[Route], environ: Mapping[str, str]) -> Check:
    """Which route is in use; a warning when two run the same hook, or a plugin finds no memsift."""
    kinds = sorted({route.kind for route in routes})
    used = " and ".join(kinds) if len(kinds) > 1 else kinds[0]
    twice = sorted({event for event in TIMEOUTS if sum(event in route.events for route in routes) > 1})
    if twice:
        removal = (f"memsift uninstall {agent} or {_PLUGIN_REMOVAL[agent]}" if len(kinds) > 1
                   else "memsift uninstall with the --project of one of them")
        return Check("hooks", "route", WARN, f"{agent}: {used}: {len(routes)} of them run {', '.join(twice)} "
                     f"({'; '.join(route.where for route in routes)}). memsift answers each call once, but "
                     f"every hook starts twice: keep one ({removal})")
    if "plugin" in kinds:
        command = shutil.which("memsift", path=environ.get("PATH", os.defpath))
        if command is None:
            return Check("hooks", "route", WARN, f"{agent}: plugin: its hooks run the memsift on the PATH, and "
                         "there is none on this one: memory is off (pipx install . from a clone of memsift)")
        return Check("hooks", "route", OK, f"{agent}: plugin (its hooks run {command}, found on the PATH)")
    return Check("hooks", "route", OK, f"{agent}: {used} ({routes[0].where})")


def _agent_folder(agent: str, environ: Mapping[str, str]) -> Path:
    home = Path(environ.get("HOME", "~")).expanduser()
    if agent == "claude-code":
        return Path(environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    return Path(environ.get("CODEX_HOME") or home / ".codex")


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


def _claude_checks(environ: Mapping[str, str], root: Path) -> tuple[list[Check], list[Route]]:
    user_dir = _agent_folder("claude-code", environ)
    files = [("user", user_dir / "settings.json"), ("project", root / ".claude" / "settings.json"),
             ("project, local", root / ".claude" / "settings.local.json")]
    checks: list[Check] = []
    routes: list[Route] = []
    for scope, path in files:
        try:
            settings = _json_object(path)
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            checks.append(Check("hooks", "claude-code", WARN, f"{scope} settings {path} cannot be read: {exc}"))
            continue
        checks += _misnamed_checks("claude-code", f"{scope} settings {path}", _hooks_of(settings))
        events = sorted({event for event, _ in _memsift_handlers(_hooks_of(settings), "claude-code")})
        if events:
            checks.append(Check("hooks", "claude-code", _events_status(events),
                                f"{scope} settings {path}: {', '.join(events)}{_missing(events)}"))
            routes.append(Route("install", f"{scope} settings {path}", tuple(events)))
        plugins = settings.get("enabledPlugins")
        # The plugin brings the hooks itself: enabling it is installing them.
        enabled = [name for name, on in plugins.items() if name.startswith("memsift@") and on] \
            if isinstance(plugins, dict) else []
        if enabled:
            checks.append(Check("hooks", "claude-code", OK, f"{scope} settings {path}: plugin {enabled[0]} enabled"))
            routes.append(Route("plugin", f"plugin {enabled[0]} in {scope} settings", tuple(TIMEOUTS)))
    return checks, routes


def _codex_checks(environ: Mapping[str, str], root: Path) -> tuple[list[Check], list[Route]]:
    codex_home = _agent_folder("codex", environ)
    user_config = codex_home / "config.toml"
    try:
        config = _toml(user_config)
    except FileNotFoundError:
        config = {}
    except (OSError, ValueError) as exc:
        return [Check("hooks", "codex", WARN, f"{user_config} cannot be read: {exc}")], []
    trusted = {key: entry.get("trusted_hash") for key, entry in
               config.get("hooks", {}).get("state", {}).items() if isinstance(entry, dict)}
    project_trusted = (config.get("projects", {}).get(str(root), {}).get("trust_level") == "trusted")
    sources = [("user", codex_home / "hooks.json"), ("user", user_config),
               ("project", root / ".codex" / "hooks.json"), ("project", root / ".codex" / "config.toml")]
    checks: list[Check] = []
    routes: list[Route] = []
    for scope, path in sources:
        try:
            hooks = _hooks_of(_toml(path) if path.suffix == ".toml" else _json_object(path))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            checks.append(Check("hooks", "codex", WARN, f"{scope} {path} cannot be read: {exc}"))
            continue
        checks += _misnamed_checks("codex", f"{scope} {path}", hooks)
        check = _codex_file_check(f"{scope} {path}", path, hooks, trusted)
        if check is None:
            continue
        routes.append(Route("install", f"{scope} {path}",
                            tuple(sorted({event for event, _ in _memsift_handlers(hooks, "codex")}))))
        if check.status == OK and scope == "project" and not project_trusted:
            check = Check("hooks", "codex", WARN, f"{check.detail}; but the project {root} is not trusted "
                          "(Codex ignores its .codex/ folder: codex exec --trust, or trust it in the TUI)")
        checks.append(check)
    plugin = _codex_plugin_check(config, user_config)
    if plugin is not None:
        checks.append(plugin)
        routes.append(Route("plugin", f"plugin in {user_config}", tuple(TIMEOUTS)))
    return checks, routes


def _codex_plugin_check(config: Mapping[str, Any], path: Path) -> Check | None:
    """The memsift plugin, enabled in config.toml's ``[plugins."memsift@..."]``; None when it is not."""
    plugins = config.get("plugins", {})
    enabled = [name for name, entry in plugins.items() if name.startswith("memsift@")
               and isinstance(entry, dict) and entry.get("enabled", True)] if isinstance(plugins, dict) else []
    if not enabled:
        return None
    features = config.get("features", {})
    if isinstance(features, dict) and features.get("plugins") is False:
        return Check("hooks", "codex", WARN, f"{path}: plugin {enabled[0]} enabled, but [features] plugins = "
                     "false: Codex loads no plugin (remove that line)")
    # Codex keeps a plugin hook's trust under its own key, which doctor does not compute.
    return Check("hooks", "codex", OK, f"{path}: plugin {enabled[0]} enabled (Codex runs its hooks once "
                 "they are trusted in /hooks: docs/agents.md)")


def _codex_file_check(where: str, path: Path, hooks: Mapping[str, Any],
                      trusted: Mapping[str, object]) -> Check | None:
    """memsift's hooks in one Codex file, and whether each is trusted; None when it has none."""
    events = sorted({event for event, _ in _memsift_handlers(hooks, "codex")})
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


def _memsift_handlers(hooks: Mapping[str, Any], agent: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(event, handler) of every hook that runs ``memsift hook`` for *agent* and an event memsift knows."""
    for event, handler, command in _memsift_commands(hooks):
        if _command_problem(agent, command) is None:
            yield event, handler


def _memsift_commands(hooks: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any], str]]:
    """(event, handler, command) of every hook whose command runs ``memsift hook``."""
    for event, groups in hooks.items():
        if event == "state" or not isinstance(groups, list):
            continue  # Codex's config.toml keeps its trust entries under hooks.state
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                command = handler.get("command") if isinstance(handler, dict) else None
                if isinstance(command, str) and _MEMSIFT_HOOK.search(command):
                    yield event, handler, command


_HOOK_ARGS = re.compile(r"\bhook\b((?:\s+[^\s|;&]+){0,2})")


def _command_problem(agent: str, command: str) -> str | None:
    """What is wrong with a ``memsift hook AGENT EVENT`` command in *agent*'s settings, or None."""
    found = _HOOK_ARGS.search(command[_MEMSIFT_HOOK.search(command).start():])  # type: ignore[union-attr]
    args = found.group(1).split() if found else []
    if len(args) < 2:
        return "names no agent and event"
    if args[0] != agent:
        return f"names {'the other agent' if args[0] in AGENTS else 'an unknown agent'} {args[0]!r}"
    if args[1] not in TIMEOUTS:
        return f"names an unknown event {args[1]!r}"
    return None


def _misnamed_checks(agent: str, where: str, hooks: Mapping[str, Any]) -> list[Check]:
    """A hand-written ``memsift hook claude UserPromptSubmit``: the hook runs, and memory is off."""
    return [Check("hooks", agent, WARN, f"{where}: {event} runs `{command}`, which {problem}: memory is off "
                  f"there (write memsift hook {agent} {event if event in TIMEOUTS else 'EVENT'})")
            for event, _, command in _memsift_commands(hooks)
            if (problem := _command_problem(agent, command)) is not None]


# -- the text report ------------------------------------------------------------------

_MARK = {OK: "ok  ", INFO: "··  ", WARN: "warn", FAIL: "FAIL"}
_ALWAYS = ("home", "store", "decider")
# Shown when that service is configured.
_URLS = {"cognee": "cognee_url", "systemone": "decider_url", "openai": "decider_url", "anthropic": "decider_url"}


def format_report(report: Report) -> str:
    """The report as a person reads it."""
    out = [f"memsift doctor: {headline(report)}", "", f"configuration (home {report.home})"]
    # The services always, other settings when something changed them: --json has every one.
    services = {s.value for s in report.settings if s.name in ("store", "decider")}
    always = {*_ALWAYS, *(url for service, url in _URLS.items() if service in services)}
    shown = [s for s in report.settings if s.source != "default" or s.name in always]
    width = max((len(s.name) for s in shown), default=0)
    values = max((len(s.value) for s in shown), default=0)
    out += [f"  {s.name:<{width}}  {s.value:<{values}}  {s.source}" for s in shown]
    if len(report.settings) > len(shown):
        out.append(f"  ({len(report.settings) - len(shown)} more at their defaults: memsift doctor --json lists them)")
    names = max((len(check.name) for check in report.checks), default=0)
    for section in ("configuration", "project", "services", "hooks"):
        checks = [check for check in report.checks if check.section == section]
        if checks:
            out += ["", section] if section != "configuration" else []
            out += [_check_line(c, names) for c in checks]
    out += ["", f"last decisions ({len(report.decisions)}, oldest first)"]
    out += [line for entry in report.decisions for line in _decision_lines(entry)] or ["  none yet"]
    # Stored text (a note, a log line, a decision's notice, a path) reaches the terminal escaped.
    return terminal_safe("\n".join(out), lines=True)


def headline(report: Report) -> str:
    """What the report comes to: memory cannot work, works with things to fix, or works.

    >>> headline(report)
    'memory is on, 1 thing to fix (warn below)'
    """
    failed = sum(check.status == FAIL for check in report.checks)
    if failed:
        return f"MEMORY CANNOT WORK ({failed} failed)"
    warned = sum(check.status == WARN for check in report.checks)
    if warned:
        return f"memory is on, {warned} thing{'s' if warned > 1 else ''} to fix (warn below)"
    return "memory works"


def _check_line(check: Check, names: int) -> str:
    """One check, its name in a column *names* wide; a detail of several lines stays in its column."""
    head, *more = check.detail.split("\n")
    column = " " * (2 + 4 + 2 + names + 2)
    return "".join([f"  {_MARK[check.status]}  {check.name:<{names}}  {head}",
                    *(f"\n{column}{line.strip()}" for line in more)])


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
