"""What a path talks to, bundled once: decider, store, notes, reviser, redactor.

>>> services = open_services(load_config(), project_root=".")
>>> recall(Message("why did we drop Mollie?"), services).text
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import frozen

from .config import Config
from ._files import locked, read_regular, set_aside, write_atomically
from .notes import NotesFile
from .revise import DuplicateReviser
from .types import Decider, Embedder, Notebook, Redactor, Reviser, Store

if TYPE_CHECKING:
    from ._health import Health
    from ._outbox import Outbox


@frozen
class Services:
    decider: Decider
    notebook: Notebook
    redactor: Redactor
    reviser: Reviser
    config: Config
    store: Store | None = None
    health: Health | None = None  # breakers of remote services, and memsift's own troubles
    outbox: Outbox | None = None  # what the store has yet to confirm
    session_log: SessionLog | None = None
    # Files the agent loads into its context itself (CLAUDE.md, AGENTS.md): what they state is not added.
    loaded_files: tuple[Path, ...] = ()
    embedder: Embedder | None = None  # the semantic judge's model; None: judged lexically


OnDamage = Callable[[Path, Path], None]
"""Told that a file memsift owns was damaged: its path, and the name it was set aside as."""


class SessionLog:
    """Which items this session was already given, so it is not given them twice; and how often
    recall gave each item to any session (``asked``), which the session brief prefers."""

    def __init__(self, folder: Path, on_damage: OnDamage | None = None) -> None:
        self.folder = folder
        self.on_damage = on_damage

    def _path(self, session: str) -> Path:
        return self.folder / (re.sub(r"[^A-Za-z0-9._-]", "_", session)[:120] + ".json")

    def given(self, session: str) -> set[str]:
        """The ids (and pointers) of what this session was given, by recall or by its brief."""
        return {entry.removeprefix(BRIEFED) for entry in self._entries(session)}

    def briefed(self, session: str) -> set[str]:
        """Those its brief showed: still in the agent's context, so never given again."""
        return {entry.removeprefix(BRIEFED) for entry in self._entries(session) if entry.startswith(BRIEFED)}

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
        counts = self._read(self.folder / ASKED, lambda data: isinstance(data, dict)
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
            counts_path = self.folder / ASKED
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


ASKED = "asked.json"  # beside the sessions' files: how often recall gave each item
BRIEFED = "brief:"  # an id the session's brief showed, as a session's file records it
ASKED_KEPT = 10_000  # items counted at most: the least recently counted are forgotten first


def open_services(config: Config, project_root: str | os.PathLike[str] = ".", *,
                  served_wait: float | None = None) -> Services:
    """The services the config names, embedded ones by default. ``served_wait``: see ``embedder_for``."""
    from ._health import Health
    from ._outbox import Outbox
    from .redact import PatternRedactor

    folder = config.project_dir(project_root)
    health = Health(config.home, cooldown=config.breaker_cooldown)  # reads nothing until asked
    embedder = embedder_for(config, served_wait=served_wait, folder=folder)
    decider = _decider(config, embedder)
    store: Store
    if config.store == "cognee":
        from . import _project
        from .stores.cognee import CogneeStore

        # The project's own dataset, and its own outbox: a drain sends only this project's items.
        store = CogneeStore.from_config(config, _project.project_root(project_root))
        outbox = Outbox(folder / "cognee-outbox.sqlite", on_damage=health.damaged)
    else:
        from .stores.sqlite import SQLiteStore

        # The embedded store has an outbox too: an exchange kept while its write failed goes in later.
        store = SQLiteStore(folder / "store.sqlite", on_damage=health.damaged)
        outbox = Outbox(folder / "outbox.sqlite", on_damage=health.damaged)
    return Services(
        decider=decider, notebook=NotesFile(folder / "notes.md"), redactor=PatternRedactor(),
        reviser=DuplicateReviser(), config=config, store=store, health=health, outbox=outbox,
        session_log=SessionLog(config.home / "sessions", health.damaged), embedder=embedder,
    )


def embedder_for(config: Config, *, served_wait: float | None = None,
                 folder: Path | None = None) -> Embedder | None:
    """The semantic judge's model as ``judge`` says: "semantic", or "auto" with the [semantic] extra installed.

    ``served_wait`` None: the model loaded in this process (the library, ``memsift
    bench``). A number: the warm server's (hooks: a cold process must not pay the
    load), waiting up to that many seconds for one just started (0 on the agent's
    path). With a project's ``folder``, behind its vector cache (``vectors.sqlite``):
    a text is embedded once.
    """
    if config.judge == "lexical":
        return None
    from .semantic.model import installed

    if config.embedding_model is None and not installed():  # without the extra, memsift judges lexically
        return None
    embedder: Embedder
    if served_wait is not None:
        from .semantic.embedder import ServerEmbedder

        embedder = ServerEmbedder(config.home, config.embedding_model, wait=served_wait)
    else:
        from .semantic.embedder import InProcessEmbedder

        embedder = InProcessEmbedder(config.embedding_model)
    if folder is None:
        return embedder
    from .semantic._vectors import VectorCache
    from .semantic.embedder import CachedEmbedder

    return CachedEmbedder(embedder, VectorCache(folder / "vectors.sqlite"))


def _decider(config: Config, embedder: Embedder | None = None) -> Decider:
    """The decider the config names; the embedded one with the semantic judge over it when there is an
    embedder (its head is calibrated on the embedded judge's probabilities, not a remote one's)."""
    if not _remote_decider(config):
        from .decider.embedded import EmbeddedDecider

        if embedder is None:
            return EmbeddedDecider.load()
        from .semantic.judge import SemanticDecider

        return SemanticDecider(EmbeddedDecider.load(), embedder)
    from .decider.backends import decider_for

    return decider_for(config)


def _remote_decider(config: Config) -> bool:
    """Whether any question goes to a remote backend (the plain embedded default reads nothing more)."""
    return config.decider != "embedded" or bool(config.decider_by_task)
