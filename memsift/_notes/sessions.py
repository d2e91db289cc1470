"""What each session was given, and how often recall gave each item: ``SessionLog``.

Apart from ``services.py`` (which names it) because a hook's SessionStart
records what a remembered brief showed without importing attrs.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from .._fs.files import locked, read_regular, set_aside, write_atomically

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: SessionStart reads this module
if TYPE_CHECKING:
    from typing import Any


OnDamage = Callable[[Path, Path], None]
"""Told that a file memsift owns was damaged: its path, and the name it was set aside as."""


class SessionLog:
    """Which items each session was already given, so it is not given them twice (by recall, or by
    its brief): a file per session in ``folder``; and how often recall gave each item to any session
    (``asked``), which the session brief prefers, in ``asked_file`` (the project's, so that a recall
    in one project changes no other project's brief; ``folder / "asked.json"`` when None).
    ``on_damage(path, aside)`` is told when a file was found damaged and set aside.

    >>> log = SessionLog(home / "sessions")
    >>> log.record("s1", ["ex-3f2a9c1b"])
    >>> log.given("s1")
    {'ex-3f2a9c1b'}
    """

    def __init__(self, folder: Path, on_damage: OnDamage | None = None, *, asked_file: Path | None = None) -> None:
        self.folder = folder
        self.on_damage = on_damage
        self.asked_file = asked_file if asked_file is not None else folder / ASKED

    def _path(self, session: str) -> Path:
        return self.folder / (re.sub(r"[^A-Za-z0-9._-]", "_", session)[:120] + ".json")

    def given(self, session: str) -> set[str]:
        """The ids (and pointers) of what this session was given, by recall or by its brief."""
        return self.given_and_briefed(session)[0]

    def briefed(self, session: str) -> set[str]:
        """Those its brief showed: still in the agent's context, so never given again."""
        return self.given_and_briefed(session)[1]

    def given_and_briefed(self, session: str) -> tuple[set[str], set[str]]:
        """``given`` and ``briefed`` from one read of the session's file."""
        entries = self._entries(session)
        return ({entry.removeprefix(BRIEFED) for entry in entries},
                {entry.removeprefix(BRIEFED) for entry in entries if entry.startswith(BRIEFED)})

    def forget(self, session: str) -> None:
        """The session's context was cleared or compacted: what it was given is no longer in it."""
        if session:
            with contextlib.suppress(OSError), locked(self._path(session)):
                self._path(session).unlink(missing_ok=True)

    def _entries(self, session: str) -> set[str]:
        if not session:
            return set()
        ids = self._read(self._path(session), lambda data: isinstance(data, list)
                         and all(isinstance(i, str) for i in data))
        return set(ids) if ids is not None else set()

    def asked(self) -> dict[str, int]:
        """How many times recall gave each item (by id or pointer), over every session."""
        counts = self._read(self.asked_file, lambda data: isinstance(data, dict)
                            and all(isinstance(n, int) for n in data.values()))
        return counts if counts is not None else {}

    def record(self, session: str, ids: Iterable[str], *, asked: bool = True) -> None:
        """``ids`` were given to ``session``; ``asked``: because a message asked for them (recall),
        not because they were shown unasked (the session brief)."""
        if not session:
            return
        ids = list(ids)
        path = self._path(session)
        entries = {f"{BRIEFED}{i}" for i in ids} if not asked else set(ids)
        # A home that cannot be written (full, read-only): the items are still given, maybe twice.
        with contextlib.suppress(OSError), locked(path):  # two hooks of one session must not lose ids
            write_atomically(path, json.dumps(sorted(self._entries(session) | entries)))
        if asked and ids:
            counts_path = self.asked_file
            with contextlib.suppress(OSError), locked(counts_path):
                counts = self.asked()
                for item_id in ids:
                    counts[item_id] = counts.pop(item_id, 0) + 1  # last: the most recently counted
                kept = dict(list(counts.items())[-ASKED_KEPT:])  # the oldest entries go first
                write_atomically(counts_path, json.dumps(kept))

    def _read(self, path: Path, valid: Callable[[Any], bool]) -> Any:
        """The JSON of ``path`` if it is ``valid``; None when missing; junk is set aside (kept for
        whoever wants to look) and counts as missing."""
        try:
            data = json.loads(read_regular(path))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            data = None
        if data is not None and valid(data):
            return data
        aside = set_aside(path)
        if self.on_damage is not None:
            self.on_damage(path, aside)
        return None


ASKED = "asked.json"  # how often recall gave each item: in the project's folder
BRIEFED = "brief:"  # an id the session's brief showed, as a session's file records it
ASKED_KEPT = 10_000  # items counted at most: the least recently counted are forgotten first
