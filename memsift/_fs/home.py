"""Where memsift keeps its files: ``MEMSIFT_HOME``, else the platform's data folder.

>>> default_home({"MEMSIFT_HOME": "/tmp/m"})
PosixPath('/tmp/m')
>>> default_home({})
PosixPath('/home/u/.local/share/memsift')

Apart from ``config.py`` (which re-exports it) because a hook's quiet path
finds the settings file without paying for attrs.
"""

from __future__ import annotations

import os
import sys
import zlib
from collections.abc import Mapping
from pathlib import Path


def default_home(environ: Mapping[str, str]) -> Path:
    if environ.get("MEMSIFT_HOME"):
        return Path(environ["MEMSIFT_HOME"])
    # platformdirs' answer, which importing platformdirs (tempfile, random, ...) would add to
    # every hook: the XDG data folder on Linux and the BSDs, Application Support on macOS.
    if sys.platform == "darwin":
        return Path(os.path.expanduser("~/Library/Application Support/memsift"))
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        data = environ.get("XDG_DATA_HOME", "").strip()
        return Path(data if os.path.isabs(data) else os.path.expanduser("~/.local/share"), "memsift")
    import platformdirs

    return Path(platformdirs.user_data_dir("memsift", appauthor=False))


def project_folder(home: Path, root: str | os.PathLike[str]) -> Path:
    """The folder of one project's notes and embedded store: ``Config.project_dir``, without attrs.

    >>> project_folder(Path("/tmp/m"), "/src/shop")
    PosixPath('/tmp/m/projects/shop-a2b65832')
    """
    resolved = Path(root).resolve()
    digest = f"{zlib.crc32(str(resolved).encode()):08x}"  # zlib: hashlib costs an import here
    return home / "projects" / f"{resolved.name or 'root'}-{digest}"


SERVE_FOLDER = "serve"  # the model server's folder in the home (``semantic/_serve.py``)
SERVE_SOCKET = "embed.sock"  # the only place it listens


def server_socket(home: Path) -> Path:
    """Where the model server listens: a path only, so that a hook asks whether one runs for one stat.

    >>> server_socket(Path("/tmp/m"))
    PosixPath('/tmp/m/serve/embed.sock')
    """
    return home / SERVE_FOLDER / SERVE_SOCKET
