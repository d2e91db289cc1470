"""Once per hook call: when two routes run the same hook (the plugin and ``memsift install``), the
second invocation of one event does nothing.

An agent runs every matching hook, concurrently. Each invocation claims a
marker named by what identifies the call (agent, event, session, turn, the
payload's text); creating it is atomic (``O_CREAT | O_EXCL``), so exactly one
of two invocations started together goes on.

>>> first_call(Path("/tmp/m"), ("claude-code", "UserPromptSubmit", "s1", "p1", "why Stripe?"))
True
>>> first_call(Path("/tmp/m"), ("claude-code", "UserPromptSubmit", "s1", "p1", "why Stripe?"))
False

One ``open`` on the hook's path. Markers live in ``<memsift home>/calls/``;
``forget_old`` (run at SessionStart) removes those older than two days.
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

FOLDER = "calls"
KEPT_SECONDS = 2 * 24 * 3600  # a duplicate invocation comes within seconds; two days is plenty


def first_call(home: Path, parts: Sequence[str]) -> bool:
    """True for the first invocation with these *parts*, False for any other (fail open: True)."""
    data = "\0".join(parts).encode("utf-8", "surrogatepass")
    # Two 32-bit checksums: zlib is already loaded, hashlib would cost an import on every message.
    name = f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"
    path = home / FOLDER / name
    for _ in range(2):
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return True
        except FileExistsError:
            return False
        except FileNotFoundError:  # the first call ever: the folder is made, then tried again
            from ._files import private_folder

            try:
                private_folder(path.parent)
            except OSError:
                return True
        except OSError:  # a read-only home: run, as before there were markers
            return True
    return True


def forget_old(home: Path, now: float | None = None) -> None:
    """Remove the markers older than two days (never fails)."""
    cutoff = (time.time() if now is None else now) - KEPT_SECONDS
    try:
        entries = list(os.scandir(home / FOLDER))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
        except OSError:
            continue
