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

Hook processes may write at the same moment; the last writer wins. Every
change is idempotent, so a lost write costs at most a repeated notice or
one extra probe, never a wrong state for long.
"""

from __future__ import annotations

import json
import pathlib
import time
from collections.abc import Callable
from typing import Any

from .files import write_atomically

FILE_NAME = "health.json"
_REMEMBERED_SESSIONS = 200  # sessions told about a service; older ones are forgotten
# One service's state. "since": when it last opened or closed; "retry_at": when
# the next probe may go; "told": session -> [since, open] of what it last heard.
_CLOSED: dict[str, Any] = {"open": False, "since": 0.0, "reason": "", "retry_at": 0.0, "told": {}}


REFUSED = "refused us"  # how a failure reason starts when the service refused our settings


class Health:
    """The breakers of the remote services, one per service name."""

    def __init__(self, home: pathlib.Path, *, cooldown: float = 30.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.path = pathlib.Path(home) / FILE_NAME
        self.cooldown = cooldown
        self.clock = clock

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

    def failed(self, service: str, reason: str) -> None:
        """Open the breaker (or keep it open) and start a new cool-down."""
        now = self.clock()

        def open_(state: dict[str, Any]) -> dict[str, Any]:
            since = state["since"] if state["open"] else now
            return {**state, "open": True, "since": since, "reason": reason,
                    "retry_at": now + self.cooldown}

        self._update(service, open_)

    def succeeded(self, service: str) -> None:
        """Close the breaker."""
        if not self._read().get(service, {}).get("open"):
            return  # the common case: nothing to write
        now = self.clock()
        self._update(service, lambda s: {**s, "open": False, "since": now, "reason": "",
                                         "retry_at": 0.0})

    def notice(self, service: str, session: str) -> str | None:
        """The line to show the agent about *service*, once per session and state."""
        state = self._read().get(service)
        if state is None:
            return None
        heard = state["told"].get(session)  # [since, open] of the last state told, or None
        if heard is not None and heard[0] == state["since"]:
            return None  # this session already heard about the current state
        if not state["open"] and not (heard and heard[1]):
            return None  # it did not hear of a pause: a recovery is no news to it
        self._update(service, lambda s: {
            **s, "told": _remember(s["told"], session, [s["since"], s["open"]])})
        if state["open"]:
            since = time.strftime("%H:%M", time.localtime(state["since"]))
            # A refusal (bad key, wrong URL) is not an outage: say which, so the fix is obvious.
            what = ("refuses memsift's settings (check its key and URL)"
                    if state["reason"].startswith(REFUSED) else "unreachable")
            return f"memory paused: {service} {what} since {since}; reminders are off"
        return f"memory resumed: {service} answers again; reminders are on"

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # missing or torn: every service counts as healthy (fail open)
        if not isinstance(data, dict):
            return {}
        return {name: {**_CLOSED, **state} for name, state in data.items() if isinstance(state, dict)}

    def _update(self, service: str,
                change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        services = self._read()
        services[service] = change(services.get(service, _CLOSED))
        write_atomically(self.path, json.dumps(services))


def _remember(told: dict[str, list], session: str, heard: list) -> dict[str, list]:
    told = {key: value for key, value in told.items() if key != session}
    told[session] = heard  # newest last, so trimming drops the oldest
    return dict(list(told.items())[-_REMEMBERED_SESSIONS:])
