"""Where memsift keeps its files: ``MEMSIFT_HOME``, else the platform's data folder.

>>> default_home({"MEMSIFT_HOME": "/tmp/m"})
PosixPath('/tmp/m')
>>> default_home({})
PosixPath('/home/u/.local/share/memsift')

Apart from ``config.py`` (which re-exports it) because a hook's quiet path
finds the settings file without paying for attrs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def default_home(environ: Mapping[str, str]) -> Path:
    if environ.get("MEMSIFT_HOME"):
        return Path(environ["MEMSIFT_HOME"])
    import platformdirs  # only when no home is given: it costs an import

    return Path(platformdirs.user_data_dir("memsift", appauthor=False))
