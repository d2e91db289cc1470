"""``memsift install|uninstall claude-code|codex``: memsift's hooks in an agent's settings.

Install merges four hooks (SessionStart, UserPromptSubmit, Stop, SessionEnd)
into the agent's settings file, beside whatever hooks are there, and writes
nothing when they are already in place. Each hook runs this very
interpreter on the ``memsift`` console script beside it, by absolute path:
no shell shim, no ``uvx``, no PATH lookup on every message.

>>> install("claude-code", home=Path.home())        # ~/.claude/settings.json
>>> install("codex", project=Path("/src/shop"))      # /src/shop/.codex/hooks.json
>>> uninstall("claude-code", home=Path.home())      # the file as it was, byte for byte

Uninstall removes exactly what install added. Install keeps the file's text
from before in ``<memsift home>/installs/``; when the file is still as install
left it, uninstall puts that text back byte for byte (or removes the file it
created). A file edited since keeps every other change: only memsift's hooks
are taken out, and the JSON is written back with two-space indents.

Codex runs a hook only once the user trusts it (``/hooks`` in its TUI), and
any change to a hook needs trusting again. ``trust=True`` writes the trust
entries the TUI would write into ``$CODEX_HOME/config.toml``: the same as
trusting these four commands by hand.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys
import sysconfig
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from ..errors import ConfigurationError

AGENTS = ("claude-code", "codex")
SKILL = "memsift-search"
# Seconds. memsift's own deadlines end a recall first; SessionEnd only forks (Codex caps it at 3 s).
TIMEOUTS = {"SessionStart": 10, "UserPromptSubmit": 20, "Stop": 10, "SessionEnd": 2}
_OURS = re.compile(r"\bhook (?:claude-code|codex) (?:" + "|".join(TIMEOUTS) + r")\s*$")

Settings = dict[str, Any]


@frozen
class Outcome:
    """What install or uninstall did, in a few lines for the user."""

    path: Path
    lines: tuple[str, ...] = ()

    def __str__(self) -> str:
        return "\n".join(self.lines)


def hook_command(agent: str, event: str) -> str:
    """The command a hook runs: this interpreter, the ``memsift`` script beside it, by absolute path.

    >>> hook_command("codex", "Stop")
    '/home/u/.venv/bin/python /home/u/.venv/bin/memsift hook codex Stop'
    """
    return shlex.join([*memsift_command(), "hook", agent, event])


def memsift_command() -> list[str]:
    """This interpreter and the ``memsift`` script beside it (``-m memsift`` when not installed as a script).

    >>> memsift_command()
    ['/home/u/.venv/bin/python', '/home/u/.venv/bin/memsift']
    """
    script = Path(sysconfig.get_path("scripts")) / "memsift"
    return [sys.executable, *([str(script)] if script.is_file() else ["-m", "memsift"])]


def settings_path(agent: str, *, home: Path, project: Path | None = None,
                  environ: Mapping[str, str] = os.environ) -> Path:
    """Where the agent reads hooks: the user's settings, or the project's."""
    return _folder(agent, home, project, environ) / ("settings.json" if agent == "claude-code" else "hooks.json")


def skill_path(agent: str, *, home: Path, project: Path | None = None,
               environ: Mapping[str, str] = os.environ) -> Path:
    """Where the agent finds the ``memsift-search`` skill: the user's skills, or the project's."""
    folder = _folder(agent, home, project, environ)
    if agent == "codex" and project is not None:
        folder = folder.with_name(".agents")  # Codex reads a project's skills from .agents/skills
    return folder / "skills" / SKILL / "SKILL.md"


def codex_home(home: Path, environ: Mapping[str, str] = os.environ) -> Path:
    return Path(environ.get("CODEX_HOME") or home / ".codex")


def _folder(agent: str, home: Path, project: Path | None, environ: Mapping[str, str]) -> Path:
    """The agent's own folder: the user's (``~/.claude``, ``$CODEX_HOME``) or the project's."""
    _known(agent)
    if project is not None:
        return Path(os.path.abspath(project)) / (".claude" if agent == "claude-code" else ".codex")
    if agent == "claude-code":
        return Path(environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    return codex_home(home, environ)


def install(agent: str, *, home: Path, memsift_home: Path, project: Path | None = None,
            trust: bool = False, environ: Mapping[str, str] = os.environ) -> Outcome:
    """Add memsift's four hooks to the agent's settings (and, for Codex with *trust*, trust them)."""
    path = settings_path(agent, home=home, project=project, environ=environ)
    before = _read(path)
    settings = _parse(path, before)
    wanted = {event: hook_command(agent, event) for event in TIMEOUTS}
    merged = _with_ours(_without_ours(settings), wanted)
    changed = merged != settings
    record = Record(memsift_home, path)
    if changed:
        after = _edited(before, merged)
        record.save_file(before, after, has_ours=_has_ours(settings), created=_first_missing(path.parent))
        _write(path, after)
    lines = [f"memsift hooks {'written to' if changed else 'already in'} {path}",
             _install_skill(skill_path(agent, home=home, project=project, environ=environ), record)]
    if agent == "codex":
        lines += _codex_trust(path, merged, record, home=home, trust=trust, project=project,
                              environ=environ)
    return Outcome(path, tuple(lines))


def uninstall(agent: str, *, home: Path, memsift_home: Path, project: Path | None = None,
              environ: Mapping[str, str] = os.environ) -> Outcome:
    """Take out what install added: the file as it was when nothing else changed since."""
    path = settings_path(agent, home=home, project=project, environ=environ)
    record = Record(memsift_home, path)
    saved = record.load()
    lines = []
    if trust := saved.get("trust"):  # first: the folder install created may hold both files
        lines.append(_undo(Path(trust["path"]), trust, lambda text: _without_lines(text, trust["added"])))
    if skill := saved.get("skill"):  # before the settings: it may sit in a folder install created for them
        lines.append(_undo(Path(skill["path"]), skill, None))
    lines.append(_undo(path, saved, lambda text: _edited(text, _without_ours(_parse(path, text)))))
    record.forget()
    return Outcome(path, tuple(line for line in lines if line))


def skill_text() -> str:
    """The skill as install writes it: the plugins' own, naming the command by its absolute path.

    The plugins' copy runs ``memsift search`` from the PATH; a venv install is
    not on the PATH, so the copy install writes runs this very install's command.
    """
    from importlib.resources import files

    text = files("memsift_adapters").joinpath("skills", SKILL, "SKILL.md").read_text(encoding="utf-8")
    command = shlex.join(_skill_command())
    return re.sub(r"(?<![\w/-])memsift (search|notes|show)\b", lambda m: f"{command} {m.group(1)}", text)


def _skill_command() -> list[str]:
    """What the skill runs: the console script by its path (its own shebang names the interpreter)."""
    command = memsift_command()
    return command[1:] if command[1:2] != ["-m"] else command


def _install_skill(path: Path, record: Record) -> str:
    """Copy the skill that tells the agent to run ``memsift search`` (the plugins carry it too)."""
    text = skill_text()
    before = _read(path)
    if before == text:
        return f"the {SKILL} skill already in {path.parent}"
    record.save_part("skill", path, before, text)
    _write(path, text)
    return (f"the {SKILL} skill (run {shlex.join(_skill_command())} search when the user refers to earlier "
            f"work) written to {path.parent}")


# -- the settings file ---------------------------------------------------------------

def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _parse(path: Path, text: str | None) -> Settings:
    if text is None or not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except ValueError as exc:
        raise ConfigurationError(f"{path} is not JSON ({exc}); nothing changed") from None
    if not isinstance(settings, dict) or not isinstance(settings.get("hooks", {}), dict):
        raise ConfigurationError(f"{path} is not a settings object with a 'hooks' object; nothing changed")
    return settings


def _dump(settings: Settings) -> str:
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def _edited(text: str | None, wanted: Settings) -> str:
    """*text* turned into *wanted* by taking out memsift's hooks and appending the new ones, the rest
    of the text as the user wrote it (indentation, key order, arrays on one line); a new file, or one
    the edit cannot reach, is written whole with two-space indents."""
    from . import json_text as _json_text

    if text is None or not text.strip():
        return _dump(wanted) if wanted else ""
    try:
        edited = _text_without_ours(text)
        hooks = json.loads(edited).get("hooks")
        for event, groups in wanted.get("hooks", {}).items():
            ours = [group for group in groups if any(_is_ours(h) for h in group.get("hooks", []))]
            if not ours:
                continue
            if not isinstance(hooks, dict):
                edited = _json_text.append(edited, [], {event: ours}, key="hooks")
                hooks = {event: ours}
            elif isinstance(hooks.get(event), list):
                for group in ours:
                    edited = _json_text.append(edited, ["hooks", event], group)
            else:
                edited = _json_text.append(edited, ["hooks"], ours, key=event)
                hooks[event] = ours
        if json.loads(edited) == wanted:
            return edited
    except (ValueError, KeyError, AttributeError):  # a layout the edit does not follow: written whole
        pass
    return _dump(wanted)


def _text_without_ours(text: str) -> str:
    """The settings text without memsift's handlers, and without the groups and events that left empty."""
    from . import json_text as _json_text

    while (path := _first_of_ours(json.loads(text))) is not None:
        text = _json_text.remove(text, path)
        hooks = json.loads(text)["hooks"]
        if len(path) == 3 and hooks[path[1]] == []:  # its last group went: the event goes too
            text = _json_text.remove(text, path[:2])
            if len(hooks) == 1:  # and it was the only one: so does "hooks"
                text = _json_text.remove(text, path[:1])
    return text


def _first_of_ours(settings: Settings) -> list[str | int] | None:
    """Where the first of memsift's handlers is: its group when the group holds only memsift's."""
    hooks = settings.get("hooks")
    for event, groups in (hooks.items() if isinstance(hooks, dict) else ()):
        for g, group in enumerate(groups if isinstance(groups, list) else ()):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                continue
            mine = [h for h, handler in enumerate(handlers) if _is_ours(handler)]
            if mine and len(mine) == len(handlers):
                return ["hooks", event, g]
            if mine:
                return ["hooks", event, g, "hooks", mine[0]]
    return None


def _write(path: Path, text: str) -> None:
    """Replace the file atomically, keeping its permissions (a new one gets the umask's)."""
    from .._fs.files import write_atomically

    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    write_atomically(path, text)
    os.chmod(path, mode)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _is_ours(handler: object) -> bool:
    return (isinstance(handler, dict) and isinstance(handler.get("command"), str)
            and "memsift" in handler["command"] and bool(_OURS.search(handler["command"])))


def _has_ours(settings: Settings) -> bool:
    return any(_is_ours(handler) for groups in settings.get("hooks", {}).values() if isinstance(groups, list)
               for group in groups if isinstance(group, dict)
               for handler in group.get("hooks", []) if isinstance(group.get("hooks"), list))


def _without_ours(settings: Settings) -> Settings:
    """The settings with memsift's handlers taken out, and the groups and events left empty by it."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return settings
    kept: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            kept[event] = groups
            continue
        left = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not any(_is_ours(h) for h in handlers):
                left.append(group)
            elif others := [h for h in handlers if not _is_ours(h)]:
                left.append({**group, "hooks": others})
        if left or not groups:
            kept[event] = left
    out = {**settings, "hooks": kept}
    if not kept:
        del out["hooks"]
    return out


def _with_ours(settings: Settings, commands: Mapping[str, str]) -> Settings:
    hooks = dict(settings.get("hooks", {}))
    for event, command in commands.items():
        group = {"hooks": [{"type": "command", "command": command, "timeout": TIMEOUTS[event]}]}
        hooks[event] = [*hooks.get(event, []), group]
    return {**settings, "hooks": hooks}


def _undo(path: Path, saved: Mapping[str, Any], strip: Callable[[str], str] | None) -> str:
    """Put *path* back as it was before install, or strip what install added when it changed since
    (a file install wrote whole, *strip* None, is then left as it is)."""
    current = _read(path)
    if current is None:
        return f"{path} is gone: nothing to remove"
    if saved and current == saved.get("after") and saved.get("known"):
        if saved["before"] is None:
            path.unlink()
            _remove_empty(path.parent, saved.get("created"))
            return f"removed {path} (install had created it)"
        _write(path, saved["before"])
        return f"{path} restored as it was before install"
    if strip is None:
        return f"{path} changed since install: left as it is"
    stripped = strip(current)
    if stripped == current:
        return f"nothing of memsift's in {path}"
    _write(path, stripped)
    return f"memsift's entries removed from {path} (it changed since install: the rest is kept)"


def _first_missing(folder: Path) -> Path | None:
    """The outermost folder on the way to *folder* that does not exist yet: install creates it."""
    missing = None
    while not folder.exists():
        missing, folder = folder, folder.parent
    return missing


def _remove_empty(folder: Path, created: str | None) -> None:
    """Remove the folders install created, from *folder* up to *created*, while they are empty."""
    if not created or not (folder == Path(created) or Path(created) in folder.parents):
        return
    while True:
        try:
            folder.rmdir()
        except OSError:  # not empty: someone else's files are there now
            return
        if folder == Path(created):
            return
        folder = folder.parent


class Record:
    """What install changed in one settings file, kept under memsift's home for uninstall."""

    def __init__(self, memsift_home: Path, path: Path) -> None:
        self.path = memsift_home / "installs" / f"{path.parent.name}-{zlib.crc32(str(path).encode()):08x}.json"

    def load(self) -> dict[str, Any]:
        try:
            found = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def save_file(self, before: str | None, after: str, *, has_ours: bool, created: Path | None) -> None:
        """Remember the text from before install: the first install's, while the file is as we left it."""
        old = self.load()
        if old and old.get("after") == before:
            known, before, made = old.get("known", False), old.get("before"), old.get("created")
        else:  # a fresh start, or the file changed since: the text is "before" only if it has no hooks of ours
            known, made = not has_ours, str(created) if created else None
        self._save({**old, "after": after, "before": before, "known": known, "created": made})

    def save_part(self, part: str, path: Path, before: str | None, after: str, **more: Any) -> None:
        """Remember another file install changed (``trust``, ``skill``): its first text from before,
        while it is as install left it, and the folder install created for it."""
        old = self.load().get(part)
        kept = old if old and old.get("after") == before else {"before": before,
                                                                   "created": _first_missing(path.parent)}
        created = kept.get("created")
        self._save({**self.load(), part: {"path": str(path), "before": kept["before"], "after": after,
                                          "known": True, "created": str(created) if created else None, **more}})

    def forget(self) -> None:
        self.path.unlink(missing_ok=True)

    def _save(self, record: dict[str, Any]) -> None:
        _write(self.path, json.dumps(record))


# -- Codex's trust -------------------------------------------------------------------

def trust_entries(hooks_file: Path, settings: Settings) -> dict[str, str]:
    """The ``[hooks.state]`` key and trusted hash of each memsift handler, as Codex computes them.

    The key is ``<hooks.json path>:<event in snake case>:<group index>:<handler index>``;
    the hash, sha256 of the handler's canonical JSON (sorted keys, no spaces,
    the timeout Codex would use), so any edit of the hook needs trusting again.
    """
    out: dict[str, str] = {}
    for event, groups in settings.get("hooks", {}).items():
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()
        for g, group in enumerate(groups):
            for h, handler in enumerate(group.get("hooks", [])):
                if not _is_ours(handler):
                    continue
                identity = {"event_name": snake, "hooks": [{
                    "type": "command", "command": handler["command"],
                    "timeout": max(1, int(handler.get("timeout", 600))), "async": bool(handler.get("async"))}]}
                canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                out[f"{os.path.abspath(hooks_file)}:{snake}:{g}:{h}"] = (
                    "sha256:" + hashlib.sha256(canonical.encode()).hexdigest())
    return out


def _codex_trust(hooks_file: Path, settings: Settings, record: Record, *, home: Path, trust: bool,
                 project: Path | None, environ: Mapping[str, str]) -> list[str]:
    config = codex_home(home, environ) / "config.toml"
    entries = trust_entries(hooks_file, settings)
    lines = []
    if not trust and _trusted(config, entries):
        lines.append(f"the memsift hooks are already trusted in {config}")
    elif not trust:
        lines.append(f"one step left: Codex runs these {len(entries)} hooks only once you trust them. "
                     "Start codex, type /hooks and trust the memsift hooks; or run this again with "
                     f"--trust to write the same trust entries into {config} yourself")
    else:
        lines.append(_write_trust(config, entries, record))
    if project is not None:
        lines.append(f"Codex also runs a project's hooks only in a trusted project: accept {project} "
                     "when codex first asks (or `codex exec --trust` there)")
    return lines


def _trusted(config: Path, entries: Mapping[str, str]) -> bool:
    """Does config.toml already trust every one of these hooks, with these very hashes?"""
    import tomllib

    try:
        state = tomllib.loads(_read(config) or "").get("hooks", {}).get("state", {})
    except tomllib.TOMLDecodeError:
        return False
    return all(isinstance(state.get(key), dict) and state[key].get("trusted_hash") == digest
               for key, digest in entries.items())


def _write_trust(config: Path, entries: Mapping[str, str], record: Record) -> str:
    """Append the trust entries missing from config.toml; replace a stale hash of ours in place."""
    import tomllib

    before = _read(config)
    text = before or ""
    try:
        state = tomllib.loads(text).get("hooks", {}).get("state", {})
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{config} is not TOML ({exc}); hooks written, not trusted") from None
    added: list[str] = []
    for key, digest in entries.items():
        known = state.get(key, {}).get("trusted_hash") if isinstance(state.get(key), dict) else None
        if known == digest:
            continue
        line = f'trusted_hash = "{digest}"'
        header = f'[hooks.state.{json.dumps(key)}]'
        if known is None:
            piece = ("" if not text else "\n" if text.endswith("\n") else "\n\n") + f"{header}\n{line}\n"
            text += piece
            added.append(piece)
            continue
        stale = re.compile(rf'^({re.escape(header)}\s*\n(?:(?!\[).*\n)*?)trusted_hash\s*=\s*"[^"]*"',
                           re.MULTILINE)
        text, found = stale.subn(lambda m: m.group(1) + line, text, count=1)  # noqa: B023 (used at once)
        if not found:
            raise ConfigurationError(f"{config}: cannot update the trust of {key}; trust it in /hooks")
        added.append(line + "\n")
    if text == (before or ""):
        return f"the memsift hooks are already trusted in {config}"
    old = record.load().get("trust") or {}
    record.save_part("trust", config, before, text, added=[*old.get("added", []), *added])
    _write(config, text)
    return (f"trusted: {len(entries)} hooks in {config} (as /hooks would: Codex now runs these exact "
            "commands without asking; any change to them needs trusting again)")


def _without_lines(text: str, added: list[str]) -> str:
    """config.toml with the trust tables install appended taken out (those still there as written)."""
    for piece in added:
        if "[hooks.state." in piece and piece in text:
            text = text.replace(piece, "", 1)
    return text


def _known(agent: str) -> None:
    if agent not in AGENTS:
        raise ConfigurationError(f"unknown agent {agent!r}: {' or '.join(AGENTS)}")
