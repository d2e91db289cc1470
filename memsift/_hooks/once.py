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

The same folder holds what one session is told once (``first_call`` with the
notice's text: said again only when the text changes) and the notice a
SessionStart could not show, held for that session's next prompt:

>>> hold(Path("/tmp/m"), "s1", "memory off: ...")
True
>>> take_held(Path("/tmp/m"), "s1"), take_held(Path("/tmp/m"), "s1")
('memory off: ...', None)
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from .._fs.files import checksum

FOLDER = "calls"
KEPT_SECONDS = 2 * 24 * 3600  # a duplicate invocation comes within seconds; two days is plenty


def first_call(home: Path, parts: Sequence[str]) -> bool:
    """True for the first invocation with these *parts*, False for any other (fail open: True)."""
    path = home / FOLDER / checksum(parts)
    for _ in range(2):
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return True
        except FileExistsError:
            return False
        except FileNotFoundError:  # the first call ever: the folder is made, then tried again
            from .._fs.files import private_folder

            try:
                private_folder(path.parent)
            except OSError:
                return True
        except OSError:  # a read-only home: run, as before there were markers
            return True
    return True




def hold(home: Path, session: str, notice: str) -> bool:
    """Keep *notice* for *session*'s next prompt (``take_held``), after any held before; False when
    the home takes no write (never raises)."""
    from .._fs.files import write_atomically

    notice = "; ".join(filter(None, (take_held(home, session), notice)))
    try:
        write_atomically(home / FOLDER / checksum([session], "held-"), notice)
    except OSError:
        return False
    return True


def take_held(home: Path, session: str) -> str | None:
    """The notice held for *session*, taken (it is given once); None when there is none: one ``open``."""
    path = home / FOLDER / checksum([session], "held-")
    try:
        with open(path, encoding="utf-8", errors="replace") as held:
            notice = held.read(4096)
        os.unlink(path)
    except OSError:
        return None
    return notice or None


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
