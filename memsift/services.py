"""What a path talks to, bundled once: decider, store, notes, reviser, redactor.

>>> services = open_services(load_config(), project_root=".")
>>> recall(Message("why did we drop Mollie?"), services).text
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from attrs import frozen

from .config import Config
from .files import locked, write_atomically
from .notes import NotesFile
from .revise import DuplicateReviser
from .types import Decider, Notebook, Redactor, Reviser, Store

if TYPE_CHECKING:
    from .health import Health
    from .outbox import Outbox


@frozen
class Services:
    decider: Decider
    notebook: Notebook
    redactor: Redactor
    reviser: Reviser
    config: Config
    store: Store | None = None
    health: Health | None = None  # only with a remote service: the embedded ones do not fail
    outbox: Outbox | None = None  # only for a remote store: a local write needs none
    session_log: SessionLog | None = None
    # Files the agent loads into its context itself (CLAUDE.md, AGENTS.md): what they state is not added.
    loaded_files: tuple[Path, ...] = ()


class SessionLog:
    """Which items this session was already given, so it is not given them twice."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, session: str) -> Path:
        return self.folder / (re.sub(r"[^A-Za-z0-9._-]", "_", session)[:120] + ".json")

    def given(self, session: str) -> set[str]:
        if not session:
            return set()
        try:
            return set(json.loads(self._path(session).read_text(encoding="utf-8")))
        except (FileNotFoundError, ValueError):
            return set()

    def record(self, session: str, ids: Iterable[str]) -> None:
        if not session:
            return
        path = self._path(session)
        with locked(path):  # two hooks of one session finishing together must not lose ids
            write_atomically(path, json.dumps(sorted(self.given(session) | set(ids))))


def open_services(config: Config, project_root: str | os.PathLike[str] = ".") -> Services:
    """The services the config names, embedded ones by default."""
    from .redact import PatternRedactor

    folder = config.project_dir(project_root)
    remote = config.store == "cognee" or _remote_decider(config)
    common = dict(
        decider=_decider(config),
        notebook=NotesFile(folder / "notes.md"),
        redactor=PatternRedactor(),
        reviser=DuplicateReviser(),
        config=config,
        session_log=SessionLog(config.home / "sessions"),
    )
    if remote:
        from .health import Health

        common["health"] = Health(config.home, cooldown=config.breaker_cooldown)
    if config.store == "cognee":
        from .outbox import Outbox
        from .stores.cognee import CogneeStore

        return Services(store=CogneeStore.from_config(config), outbox=Outbox(config.home / "outbox.sqlite"),
                        **common)
    from .stores.sqlite import SQLiteStore

    return Services(store=SQLiteStore(folder / "store.sqlite"), **common)


def _decider(config: Config) -> Decider:
    if not _remote_decider(config):
        from .decider.embedded import EmbeddedDecider

        return EmbeddedDecider.load()
    from .decider.backends import decider_for

    return decider_for(config)


def _remote_decider(config: Config) -> bool:
    """Whether any question goes to a remote backend (the plain embedded default reads nothing more)."""
    return config.decider != "embedded" or bool(config.decider_by_task)
