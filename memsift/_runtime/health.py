"""Whether a remote service is worth calling: a breaker that every hook process shares.

Each hook runs in a new process, so the breaker lives in a small JSON file
under memsift's home, replaced atomically on every change. A failure opens
it; while it is open and the cool-down has not passed, ``allows`` says no
and recall adds nothing; after the cool-down the next caller is let through
as the one probe (the others keep waiting), and its success closes it.

    >>> health = Health(home, cooldown=30)
    >>> health.failed("Cognee at http://127.0.0.1:8011", "connection refused")
    >>> health.allows("Cognee at http://127.0.0.1:8011")
    False
    >>> health.notice("Cognee at http://127.0.0.1:8011", session="s1")
    'memory paused: Cognee at http://127.0.0.1:8011 unreachable since 14:02; reminders are off'
    >>> health.notice("Cognee at http://127.0.0.1:8011", session="s1") is None   # told once
    True

A session whose last notice was a pause is told once when the service is
back: "memory resumed: Cognee at http://127.0.0.1:8011 answers again;
reminders are on". A session that never saw the pause hears nothing.

The same file says when memory is off for a reason of memsift's own (a
settings file it cannot read, a stage that fails): ``broken`` opens such an
entry, told the same way ("memory off: memsift's settings: .../config.toml:
store must be 'embedded' or 'cognee', not 'mongo'; reminders are off"), and
``succeeded`` closes it ("memory back on"). A stage that failed in one
session's call is that session's news alone (``broken(..., session=...)``): no
other session hears of it. A file memsift found damaged and set aside is news
to each session once, for a day (``damaged``). Service names never carry the
credentials of a URL: ``public_name`` strips them.

Hook processes and threads take turns to change the file (a lock beside
it); should the lock not be had (a home that cannot be written), every
change is idempotent, so a lost write costs at most a repeated notice or
one extra probe, never a wrong state for long.
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import re
import time
from collections.abc import Callable, Sequence

from .._fs.files import locked, read_regular, set_aside, write_atomically

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    from typing import Any

FILE_NAME = "health.json"
_REMEMBERED_SESSIONS = 200  # sessions told about a service; older ones are forgotten
# One service's state. "since": when it last opened or closed; "retry_at": when
# the next probe may go; "told": session -> [since, open] of what it last heard.
# "kind": "down" for a service, "broken" for memsift's own trouble, "event" for news told once.
# "session": the one session the entry is news to ('' for every session).
_CLOSED: dict[str, Any] = {"open": False, "since": 0.0, "reason": "", "retry_at": 0.0, "told": {},
                           "kind": "down", "session": ""}
_TYPES: dict[str, type | tuple[type, ...]] = {
    "open": bool, "since": (int, float), "reason": str, "retry_at": (int, float), "told": dict, "kind": str,
    "session": str}
_EVENT_NEWS_FOR = 24 * 3600.0  # a file set aside is news to the sessions of the day it happened
_REASON_CHARS = 200


REFUSED = "refused us"  # how a failure reason starts when the service refused our settings
FAILING = "failing"  # ... when it answered with an error of its own: "failing 500: ..."


def _what_failed(reason: str) -> str:
    """A refusal (bad key, wrong URL) or a server error is not an outage: say which, so the fix is obvious."""
    if reason.startswith(REFUSED):
        return "refuses memsift's settings (check its key and URL)"
    status = re.match(rf"{FAILING} (\d+):", reason)
    if status:
        return f"answers with a server error ({status[1]})"
    return "unreachable"


class Health:
    """The breakers of the remote services, one per service name."""

    def __init__(self, home: pathlib.Path, *, cooldown: float = 30.0,
                 clock: Callable[[], float] = time.time, listening: bool = True) -> None:
        self.path = pathlib.Path(home) / FILE_NAME
        self.cooldown = cooldown
        self.clock = clock
        self.listening = listening  # False in a detached process: what it sees is news for the next prompt

    def unheard(self) -> Health:
        """The same file, for a process nobody listens to (the detached Stop and SessionEnd work):
        it records what it sees, and tells no session, so the session's next prompt does.

        >>> Health(home).unheard().notice("Cognee at http://127.0.0.1:8011", session="s1") is None
        True
        """
        return Health(self.path.parent, cooldown=self.cooldown, clock=self.clock, listening=False)

    def allows(self, service: str) -> bool:
        """True when *service* may be called: closed, or open past its cool-down (a probe)."""
        state = self._read().get(service)
        if state is None or not state["open"]:
            return True
        now = self.clock()
        if now < state["retry_at"]:
            return False
        # This caller is the probe: the others wait one more cool-down for its verdict.
        self._update(service, lambda s: {**s, "retry_at": now + self.cooldown})
        return True

    def failed(self, service: str, reason: str, *, kind: str = "down", session: str = "") -> None:
        """Open the breaker (or keep it open) and start a new cool-down; news to ``session`` alone
        when one is given."""
        now = self.clock()
        reason = one_line(reason)

        def open_(state: dict[str, Any]) -> dict[str, Any]:
            unchanged = state["open"] and state["kind"] == kind and (kind == "down" or state["reason"] == reason)
            since = state["since"] if unchanged else now  # a new reason is news again
            return {**state, "open": True, "since": since, "reason": reason, "kind": kind,
                    "retry_at": now + self.cooldown, "session": session}

        self._update(service, open_)

    def broken(self, what: str, reason: str, *, session: str = "") -> str:
        """Memory is off because of *what* (a settings file, a stage of memsift's own): for every
        session, or with ``session`` for that one alone (a stage failed in one of its calls).
        Returns the entry's name, which ``succeeded`` closes."""
        name = for_session(what, session)
        self.failed(name, reason, kind="broken", session=session)
        return name

    def damaged(self, path: pathlib.Path, aside: pathlib.Path) -> None:
        """A file memsift owns was damaged, set aside as *aside* and started afresh: news once."""
        now = self.clock()
        reason = f"was damaged: set aside as {aside.name} and started afresh"
        name = str(path.relative_to(self.path.parent)) if path.is_relative_to(self.path.parent) else str(path)
        self._update(name, lambda s: {**s, "open": False, "since": now, "reason": reason,
                                           "kind": "event", "retry_at": 0.0})

    def news(self, session: str, services: Sequence[str] = ()) -> str | None:
        """The first line this session has not heard yet, or None: about the remote *services*
        in use, and about memsift's own troubles (whatever their name)."""
        if not self.listening:
            return None
        for name, state in self._read().items():  # read once: each entry's notice is judged on it
            if state["kind"] == "down" and name not in services:
                continue  # a service this configuration does not use (any more)
            line = self._notice(name, state, session)
            if line:
                return line
        return None

    def broken_names(self, session: str = "") -> set[str]:
        """The names that ``broken`` opened (for every session, or for ``session``) and nothing closed yet."""
        return {name for name, state in self._read().items()
                if state["open"] and state["kind"] == "broken" and state["session"] == session}

    def succeeded(self, service: str) -> None:
        """Close the breaker."""
        if not self._read().get(service, {}).get("open"):
            return  # the common case: nothing to write
        now = self.clock()
        self._update(service, lambda s: {**s, "open": False, "since": now, "reason": "",
                                         "retry_at": 0.0})

    def notice(self, service: str, session: str) -> str | None:
        """The line to show the agent about *service*, once per session and state."""
        state = self._read().get(service) if self.listening else None
        return None if state is None else self._notice(service, state, session)

    def _notice(self, service: str, state: dict[str, Any], session: str) -> str | None:
        if state["session"] not in ("", session):
            return None
        heard = state["told"].get(session)  # [since, open] of the last state told, or None
        if heard is not None and heard[0] == state["since"]:
            return None  # this session already heard about the current state
        event = state["kind"] == "event"
        if event and self.clock() - state["since"] > _EVENT_NEWS_FOR:
            return None
        if not state["open"] and not event and not (heard and heard[1]):
            return None  # it did not hear of a pause: a recovery is no news to it
        self._update(service, lambda s: {
            **s, "told": _remember(s["told"], session, [s["since"], s["open"]])})
        service = service.removesuffix(for_session("", state["session"]))  # the session hearing it knows
        if event:
            return f"memory: {service} {state['reason']}"
        if state["kind"] == "unkept":  # exchanges cannot be written where memsift keeps them
            return unkept_line(service, state["reason"], state["open"])
        if state["kind"] == "broken":
            if state["open"]:
                return f"memory off: {service}: {state['reason']}; reminders are off"
            return f"memory back on: {service} works again; reminders are on"
        if state["open"]:
            since = time.strftime("%H:%M", time.localtime(state["since"]))
            return f"memory paused: {service} {_what_failed(state['reason'])} since {since}; reminders are off"
        return f"memory resumed: {service} answers again; reminders are on"

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(read_regular(self.path))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            data = None  # torn, junk, or not a file at all
        services = _valid(data)
        if services is None:  # every service counts as healthy (fail open); the file is kept aside
            try:
                aside = set_aside(self.path)
            except OSError:
                return {}
            services = {str(self.path.name): {**_CLOSED, "since": self.clock(), "kind": "event",
                                               "reason": f"was damaged: set aside as {aside.name} "
                                                         "and started afresh"}}
            self._write(services)
        return services

    def _update(self, service: str,
                change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        with contextlib.ExitStack() as turn:
            # Threads sharing one set of services change it together: a lost write would lose a
            # session its notice. A home that cannot be written gives no lock, and takes no write.
            with contextlib.suppress(OSError):
                turn.enter_context(locked(self.path))
            services = self._read()
            services[service] = change(services.get(service, _CLOSED))
            self._write(_trimmed(services))

    def _write(self, services: dict[str, dict[str, Any]]) -> None:
        # A home that cannot be written: the notice is said again (_keeping/spool.py).
        with contextlib.suppress(OSError):
            write_atomically(self.path, json.dumps(services))


def unkept_line(service: str, reason: str, is_open: bool) -> str:
    """The notice of an entry ``failed(..., kind="unkept")`` opened: exchanges cannot be kept."""
    return f"memory not kept: {service}: {reason}" if is_open else \
        f"memory kept again: {service} can be written; nothing waits"


def _valid(data: object) -> dict[str, dict[str, Any]] | None:
    """The services of a health file with every field of the type expected, or None."""
    if not isinstance(data, dict):
        return None
    services: dict[str, dict[str, Any]] = {}
    for name, state in data.items():
        if not isinstance(state, dict):
            return None
        merged = {**_CLOSED, **state}
        if any(not isinstance(merged[key], kind) or (kind is not bool and isinstance(merged[key], bool))
               for key, kind in _TYPES.items()):
            return None
        if not all(isinstance(heard, list) and len(heard) == 2 for heard in merged["told"].values()):
            return None
        services[name] = merged
    return services


def one_line(reason: str) -> str:
    """A reason as a notice shows it: one short line, no credentials of a URL."""
    folded = " ".join(public_name(reason).split())
    return folded if len(folded) <= _REASON_CHARS else folded[: _REASON_CHARS - 1] + "…"


_URL_USER = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,20}://)[^\s/@]*@")


def public_name(text: str) -> str:
    """``text`` with the user and password of each URL in it left out.

    >>> public_name("Cognee at http://admin:hunter2@127.0.0.1:8011")
    'Cognee at http://127.0.0.1:8011'
    """
    return _URL_USER.sub(r"\1", text) if "@" in text else text


def for_session(what: str, session: str) -> str:
    """The name of an entry about *what* for one session alone ('' : for every session)."""
    return f"{what} in session {session}" if session else what


def _trimmed(services: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The entries, less the oldest of those for one session past ``_REMEMBERED_SESSIONS``."""
    own = sorted((state["since"], name) for name, state in services.items() if state["session"])
    gone = {name for _, name in own[: max(0, len(own) - _REMEMBERED_SESSIONS)]}
    return {name: state for name, state in services.items() if name not in gone} if gone else services


def _remember(told: dict[str, list[Any]], session: str, heard: list[Any]) -> dict[str, list[Any]]:
    told = {key: value for key, value in told.items() if key != session}
    told[session] = heard  # newest last, so trimming drops the oldest
    return dict(list(told.items())[-_REMEMBERED_SESSIONS:])
