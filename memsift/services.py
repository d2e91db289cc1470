"""What a path talks to, bundled once: decider, store, notes, reviser, redactor.

>>> with open_services(load_config(), project_root=".") as services:
...     recall(Message("why did we drop Mollie?"), services).text

One ``Services`` may be shared by threads and asyncio tasks: each call is
charged and told only what is its own. It holds files, sockets and threads
until ``close`` (or the end of ``with`` / ``async with``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from attrs import field, frozen

from ._runtime.budget import Workers
from .config import Config
from ._notes.sessions import ASKED
from ._notes.sessions import OnDamage as OnDamage
from ._notes.sessions import SessionLog as SessionLog
from .notes import NotesFile
from .revise import DuplicateReviser
from .types import Decider, Embedder, Notebook, Redactor, Reviser, Store

if TYPE_CHECKING:
    from ._runtime.health import Health
    from ._keeping.outbox import Outbox


@frozen
class Services:
    """What the stages of a path call, read and write; ``open_services`` builds the set a config names.

    ``decider``: answers the stages' questions (``types.Decider``). ``notebook``: the project's
    notes (``types.Notebook``). ``redactor``: removes credentials before anything leaves the
    process. ``reviser``: names the lines of the notes to replace or remove after lines were added.
    ``config``: the settings (thresholds, deadlines, memsift's home). ``store``: the long-term
    store of passages; None, and the store is never searched nor written. ``health``: the breakers
    of remote services and the notices of memsift's own troubles, shared through a file in the
    home (None: no breaker, and a failure is told on its call's result alone). ``outbox``: what
    retain keeps for the store until it confirms it (None: sent at once, lost if the store is
    away). ``session_log``: which items each session was given, so none is given twice (None:
    each message is judged afresh). ``loaded_files``: the files the agent puts in its context
    itself (CLAUDE.md, AGENTS.md): what they say is not added again. ``embedder``: the semantic
    judge's model (None: judged by words).

    Change one with ``attrs.evolve(services, store=MyStore())``: the services evolved share the
    threads, and the parts, of those they come from; close one of them, once.
    """

    decider: Decider
    notebook: Notebook
    redactor: Redactor
    reviser: Reviser
    config: Config
    store: Store | None = None
    health: Health | None = None
    outbox: Outbox | None = None
    session_log: SessionLog | None = None
    loaded_files: tuple[Path, ...] = ()
    embedder: Embedder | None = None
    _workers: Workers = field(factory=Workers, alias="_workers", repr=False, eq=False)

    def close(self) -> None:
        """Release what these services hold: the store's, the outbox's and the vector cache's files,
        a remote decider's or store's connections, and the worker threads (each ends now, or when
        the call it runs, given up on, returns). A part without ``close`` has nothing to release.
        Idempotent; a path run on closed services raises RuntimeError.

        >>> services.close()
        """
        self._workers.closed = True  # no new call from here: what runs finishes against closed parts
        self._close_parts()
        self._workers.close()
        self._close_parts()  # whatever a call finishing meanwhile opened again

    def _close_parts(self) -> None:
        parts = (self.decider, self.store, self.outbox, self.embedder, self.notebook, self.reviser,
                 self.redactor, self.session_log)
        failed: list[Exception] = []
        for part in {id(part): part for part in parts if part is not None}.values():
            close = getattr(part, "close", None)
            try:
                if callable(close):
                    close()
            except Exception as exc:  # the other parts are closed all the same
                failed.append(exc)
        if failed:
            raise failed[0]

    def __enter__(self) -> Services:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Services:
        return self

    async def __aexit__(self, *exc: object) -> None:
        import asyncio

        await asyncio.to_thread(self.close)  # it may wait for threads: never on the loop




def open_services(config: Config, project_root: str | os.PathLike[str] = ".", *,
                  served_wait: float | None = None, clock: Callable[[], float] | None = None) -> Services:
    """The services the config names for the project at ``project_root``, embedded ones by default.

    ``served_wait``: the semantic judge's model through the warm server, waiting up to that many
    seconds for one just started (see ``embedder_for``); None, loaded in this process.
    ``clock``: what the breakers and the outbox read the time from (``time.time``;
    ``memsift.testing.Clock`` in tests). Close them when done (``close``, ``with``).

    >>> with open_services(load_config(), project_root="/src/shop") as services:
    ...     recall(Message("why Stripe?"), services)
    """
    import time

    from ._runtime.health import Health
    from ._keeping.outbox import Outbox
    from .redact import PatternRedactor

    now = clock or time.time
    folder = config.project_dir(project_root)
    health = Health(config.home, cooldown=config.breaker_cooldown, clock=now)  # reads nothing until asked
    embedder = embedder_for(config, served_wait=served_wait, folder=folder)
    decider = _decider(config, embedder)
    store: Store
    if config.store == "cognee":
        from ._fs import project as _project
        from .stores.cognee import CogneeStore

        # The project's own dataset, and its own outbox: a drain sends only this project's items.
        store = CogneeStore.from_config(config, _project.project_root(project_root))
        outbox = Outbox(folder / "cognee-outbox.sqlite", on_damage=health.damaged, clock=now)
    else:
        from .stores.sqlite import SQLiteStore

        # The embedded store has an outbox too: an exchange kept while its write failed goes in later.
        store = SQLiteStore(folder / "store.sqlite", on_damage=health.damaged)
        outbox = Outbox(folder / "outbox.sqlite", on_damage=health.damaged, clock=now)
    return Services(
        decider=decider, notebook=NotesFile(folder / "notes.md"), redactor=PatternRedactor(),
        reviser=DuplicateReviser(), config=config, store=store, health=health, outbox=outbox,
        session_log=SessionLog(config.home / "sessions", health.damaged, asked_file=folder / ASKED),
        embedder=embedder,
    )


def embedder_for(config: Config, *, served_wait: float | None = None,
                 folder: Path | None = None) -> Embedder | None:
    """The semantic judge's model as ``config.judge`` says: "semantic", or "auto" with the [semantic]
    extra installed.

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
