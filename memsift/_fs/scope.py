"""Which project a shared store's items belong to: the same repository on every machine.

A store shared by a team (one Cognee server) keeps each project apart. A
project is named by its repository's remote, read from ``.git/config`` (no
``git`` subprocess), so two clones of one repository share their memory
whatever their folders are called:

>>> identity(Path("/src/shop"))           # remote "origin" is git@github.com:Acme/shop.git
'github.com/acme/shop'
>>> identity(Path("/tmp/scratch"))        # no remote: this folder on this machine only
'folder:build-7:/tmp/scratch'
>>> scope_name(Path("/src/shop"))
'shop-5c1e4f0a92d7'

A folder's name alone is not enough (every team has an ``api``): without a
remote a project shares its memory with no other folder, here or elsewhere.

What a store reports of an item's scope is compared whole, as a set of exact
names (``identifiers``), never as a substring.
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path
from typing import Any

_SECTION = re.compile(r'^\s*\[\s*remote\s+"(?P<name>[^"]+)"\s*\]')
_URL = re.compile(r"^\s*url\s*=\s*(?P<url>.+?)\s*$")
_SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")  # git@host:owner/repo


def identity(root: Path) -> str:
    """What names the project at *root* on every machine: its remote, normalised; else this folder."""
    url = remote_url(root)
    if url is not None:
        return normalised_remote(url)
    import socket  # only here: most projects have a remote

    return f"folder:{socket.gethostname()}:{root.resolve()}"


def scope_name(root: Path) -> str:
    """A short name for the project's scope, safe as a Cognee dataset name (no dots, no spaces).

    The last part of its identity for the reader, then a digest of the whole,
    which is what keeps two projects of the same name apart.
    """
    import hashlib

    whole = identity(root)
    digest = hashlib.sha256(whole.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    last = re.sub(r"[^a-z0-9_-]+", "-", whole.rstrip("/").rsplit("/", 1)[-1].lower()).strip("-")
    return f"{last[:40] or 'project'}-{digest}"


def remote_url(root: Path) -> str | None:
    """The URL of the repository's remote ``origin`` (else its first remote), or None."""
    remotes: dict[str, str] = {}
    section = None
    for line in _git_config(root).splitlines():
        if line.lstrip().startswith("["):
            found = _SECTION.match(line)
            section = found["name"] if found else None
        elif section is not None and section not in remotes and (url := _URL.match(line)):
            remotes[section] = url["url"].strip('"')
    if not remotes:
        return None
    return remotes.get("origin") or remotes[min(remotes)]


def normalised_remote(url: str) -> str:
    """One spelling for the ways a remote is written: no scheme, user, password, port or ``.git``.

    >>> normalised_remote("https://ci:s3cret@GitHub.com:443/Acme/Shop.git/")
    'github.com/acme/shop'
    >>> normalised_remote("git@github.com:acme/shop.git")
    'github.com/acme/shop'
    """
    scp = None if "://" in url else _SCP.match(url)
    if scp:
        host, path = scp["host"], scp["path"]
    else:
        parts = urllib.parse.urlsplit(url)
        host, path = parts.hostname or "", parts.path if parts.scheme else url
    path = path.strip().rstrip("/").removesuffix(".git").strip("/")
    return f"{host}/{path}".lower() if host else path.lower()


def _git_config(root: Path) -> str:
    """The repository's config file: ``.git/config``, or a worktree's common folder's."""
    dot_git = root / ".git"
    try:
        if dot_git.is_file():  # a worktree or a submodule: "gitdir: <path>"
            gitdir = Path(dot_git.read_text(errors="replace").split("gitdir:", 1)[1].strip())
            gitdir = gitdir if gitdir.is_absolute() else root / gitdir
            common = gitdir / "commondir"
            if common.is_file():
                gitdir = gitdir / common.read_text(errors="replace").strip()
            dot_git = gitdir
        return (dot_git / "config").read_text(errors="replace")
    except (OSError, IndexError):  # no repository, or one we cannot read: no remote
        return ""


def identifiers(value: Any) -> frozenset[str]:
    """A scope field as a set of whole names: a list of strings as they are, one string as itself, anything
    else as none. Membership is then exact: `"memsift:shop-extra"` does not hold `"memsift:shop"`.

    >>> "memsift:shop" in identifiers("memsift:shop-extra"), "memsift:shop" in identifiers(["memsift:shop"])
    (False, True)
    """
    if isinstance(value, str):
        return frozenset((value,))
    if isinstance(value, list | tuple):
        return frozenset(v for v in value if isinstance(v, str))
    return frozenset()
