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


def branch(root: str | os.PathLike[str]) -> str:
    """The branch checked out in the work tree at *root* ('' when none: not a repository, a detached
    HEAD), read from ``.git/HEAD`` (a worktree's ``.git`` file names its own git folder).

    >>> branch("/src/shop")
    'feature/photo-upload'
    """
    from .files import read_regular

    git = Path(root) / ".git"
    try:
        if git.is_file():  # a worktree or a submodule: "gitdir: <its git folder>"
            pointed = read_regular(git, 4096).decode("utf-8", "replace").strip()
            if not pointed.startswith("gitdir:"):
                return ""
            git = (Path(root) / pointed.removeprefix("gitdir:").strip()).resolve()
        head = read_regular(git / "HEAD", 4096).decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        return ""
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else ""
