"""memsift's home without MEMSIFT_HOME: where platformdirs puts it, found without importing it."""

from __future__ import annotations

import os

import platformdirs
import pytest

from memsift._fs.home import default_home


@pytest.mark.parametrize("xdg", [None, "", "   ", "/srv/data", "relative/data"])
def test_the_default_home_is_platformdirs_user_data_dir(xdg, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MEMSIFT_HOME", raising=False)
    if xdg is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", xdg)

    assert str(default_home(os.environ)) == platformdirs.user_data_dir("memsift", appauthor=False)


def test_memsift_home_wins(tmp_path):
    assert default_home({"MEMSIFT_HOME": str(tmp_path), "XDG_DATA_HOME": "/srv/data"}) == tmp_path
