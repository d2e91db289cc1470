"""Which project a folder belongs to: the git work tree around it, else the folder itself.

A session started in ``src/worker`` shares its repository's notes:

>>> project_root("/src/shop/src/worker")   # /src/shop/.git exists
PosixPath('/src/shop')
>>> project_root("/tmp/scratch")           # no .git above it
PosixPath('/tmp/scratch')

It looks for ``.git`` (a folder, or the file a worktree or submodule has)
with a few ``stat`` calls: no ``git`` subprocess on a hook's hot path. A
``.git`` another user owns is passed over, as git refuses one ("dubious
ownership"): someone else's ``/tmp/.git`` does not make ``/tmp`` a project
that every folder under it shares.
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root(folder: str | os.PathLike[str]) -> Path:
    """The root of the git work tree holding *folder*, or *folder* when there is none."""
    start = Path(os.path.abspath(folder))
    uid = os.getuid()
    for candidate in (start, *start.parents):
        try:
            owner = os.stat(os.path.join(candidate, ".git")).st_uid
        except (OSError, ValueError):  # none here (ValueError: a NUL in the path)
            continue
        if owner == uid:  # another user's .git is no project of this user's, as git has it (safe.directory)
            return candidate
    return start
