"""What a set of settings comes to, checked once and remembered: SessionStart says what it must
without loading them.

Loading the settings imports attrs, which alone costs a hook more than the
rest of its work (``python -X importtime``; benchmarks/bench_hook.py times
the whole). The settings seldom change between sessions, so what SessionStart
needs of them (whether they load, and why not; the names that are no setting;
the remote services in use, whose breakers concern the session; the files a
retain writes) is kept in ``<home>/settings.checked.json`` under a key of
everything they come from: each ``MEMSIFT_*`` variable, ``config.toml`` as it
is on disk (device, inode, size, change time) and this install of memsift.
A changed file, variable or install is a new key, checked afresh.

>>> checked({"MEMSIFT_HOME": "/tmp/m", "MEMSIFT_STORE": "redis"}, "/src/shop")
Verdict(error="MEMSIFT_STORE: store must be 'embedded' or 'cognee', not 'redis'", unknown=[], in_use=[],
        keeps=[])
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from .._fs.home import default_home

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    from typing import Any

FILE_NAME = "settings.checked.json"
KEPT = 8  # sets of settings remembered (a user with two agents, each its environment, needs two)


class Verdict:
    """What the settings come to: ``error`` (why they do not load, '' when they do), the lines
    naming what is no setting (``config.unknown_settings``), the names of the remote services in
    use (their breakers), and the files a retain writes in the project's folder (notes, outbox)."""

    __slots__ = ("error", "in_use", "keeps", "unknown")

    def __init__(self, error: str, unknown: list[str], in_use: list[str], keeps: list[str]) -> None:
        self.error, self.unknown, self.in_use, self.keeps = error, unknown, in_use, keeps

    def as_json(self) -> dict[str, Any]:
        return {"error": self.error, "unknown": self.unknown, "in_use": self.in_use, "keeps": self.keeps}

    def __repr__(self) -> str:
        return f"Verdict({', '.join(f'{k}={v!r}' for k, v in self.as_json().items())})"


def checked(environ: Mapping[str, str], project_root: str | os.PathLike[str]) -> Verdict:
    """The verdict on the settings *environ* names: remembered, or checked now and remembered
    (the project's root only helps open the services once; nothing of it is kept)."""
    home = default_home(environ)
    key = settings_key(environ, home)
    path = home / FILE_NAME
    try:
        kept = json.loads(path.read_bytes())
        return Verdict(**kept[key])
    except (OSError, ValueError, KeyError, TypeError):  # none yet, another key, or junk: check again
        kept = None
    verdict = _check(environ, project_root)
    _keep(path, key, verdict, kept if isinstance(kept, dict) else {})
    return verdict


SETTINGS_SOURCE = Path(__file__).parents[1] / "config.py"  # what this install reads settings with


def settings_key(environ: Mapping[str, str], home: Path) -> str:
    """A key of everything the settings come from (values checksummed, never written down)."""
    from .._fs.files import checksum, stamp

    parts = [str(home), *(f"{name}={value}" for name, value in sorted(environ.items()) if name.startswith("MEMSIFT_"))]
    # The file, and this install.
    return checksum([*parts, *(stamp(file) for file in (home / "config.toml", SETTINGS_SOURCE))])


def _check(environ: Mapping[str, str], project_root: str | os.PathLike[str]) -> Verdict:
    """Load the settings and open the services, as a hook's path does, and say what they came to."""
    from ..config import load_config, unknown_settings
    from ..errors import MemsiftError
    from ..services import open_services
    from ..stages import is_remote

    try:
        config = load_config(environ)
        services = open_services(config, project_root, served_wait=0.0)
    except Exception as exc:  # as open_guarded words it
        error = str(exc) if isinstance(exc, MemsiftError) else f"{type(exc).__name__}: {exc}"
        return Verdict(error, unknown_settings(environ), [], [])
    with services:
        in_use = [service.name for service in (services.decider, services.store)
                  if service is not None and is_remote(service)]
        folder = config.project_dir(project_root)
        written = [getattr(services.notebook, "path", None), getattr(services.outbox, "path", None)]
        keeps = [os.path.relpath(path, folder) for path in written if path is not None]
    return Verdict("", unknown_settings(environ), in_use, keeps)


def _keep(path: Path, key: str, verdict: Verdict, kept: dict[str, Any]) -> None:
    from .._fs.files import write_atomically

    kept = {name: value for name, value in kept.items() if name != key}
    kept[key] = verdict.as_json()  # newest last, so trimming drops the oldest
    with contextlib.suppress(OSError):  # a home that takes no write: the next hook checks again
        write_atomically(path, json.dumps(dict(list(kept.items())[-KEPT:])))
