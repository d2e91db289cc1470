"""The session brief, remembered: a session starts with it without the settings or the pipeline loaded,
when nothing it depends on changed since it was made.

A brief follows from the project's notes and their keys, from how often recall gave each fact
(the project's ``asked.json``), from what is in play (the branch), from the files the agent loads itself,
from the settings (``_checked.settings_key``) and from this install. Its key holds each of them (a
file by its device, inode, size and change time), so a changed one is a new key and the brief is made
anew, by the path that makes it (``memsift.brief``). What is kept is the brief as made, screened
and rendered, and the ids it showed, which the session is then recorded as given.

>>> remember(folder, key, "Project memory ...", ["note-1a2b", "ex-3f2a9c1b"])
>>> remembered(folder, key)
('Project memory ...', ['note-1a2b', 'ex-3f2a9c1b'])
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

FILE_NAME = "brief.json"  # in the project's folder
CHOOSER = Path(__file__).parents[1] / "stages" / "brief.py"  # this install's way of choosing


def brief_key(environ: Mapping[str, str], home: Path, folder: Path, focus: str, loaded: Sequence[Path]) -> str:
    """A key of everything a brief of the project whose folder is *folder* follows from."""
    from .._fs.files import checksum, stamp
    from .checked import settings_key

    files = (folder / "notes.md", folder / "notes.keys", folder / "asked.json", *loaded, CHOOSER)
    return checksum([settings_key(environ, home), focus, *(f"{file}={stamp(file)}" for file in files)])


def remembered(folder: Path, key: str) -> tuple[str, list[str]] | None:
    """The brief kept under *key* and the ids it showed; None when none is (or not under this key)."""
    with contextlib.suppress(OSError, ValueError):
        kept = json.loads((folder / FILE_NAME).read_bytes())
        if isinstance(kept, dict) and kept.get("key") == key and isinstance(kept.get("text"), str) \
                and isinstance(kept.get("given"), list) and all(isinstance(i, str) for i in kept["given"]):
            return kept["text"], kept["given"]
    return None


def remember(folder: Path, key: str, text: str, given: Sequence[str]) -> None:
    """Keep the brief just made under *key*; a folder that cannot be written keeps nothing (the next
    session makes it again)."""
    from .._fs.files import write_atomically

    with contextlib.suppress(OSError):
        write_atomically(folder / FILE_NAME, json.dumps({"key": key, "text": text, "given": list(given)}))

