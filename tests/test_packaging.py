"""What a user installing memsift gets: the wheel and the sdist, built as a release builds them.

Slow (a build in an isolated environment, then the sdist's own test run):
``pytest -m slow`` runs it, as .ci/run does.
"""

from __future__ import annotations

import email
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHIPPED_FOLDERS = [  # what the sdist's tests read
    ".agents", ".claude-plugin", ".codex-plugin", "benchmarks", "docs", "hooks", "memsift_adapters", "tests",
    "training",
]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel, built from this repository."""
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
                   check=True, capture_output=True, timeout=900)
    return {"sdist": next(out.glob("*.tar.gz")), "wheel": next(out.glob("*.whl"))}


def source_files(folder: str) -> set[str]:
    """The files of a folder a checkout holds (caches and bytecode aside)."""
    return {path.relative_to(REPO).as_posix() for path in (REPO / folder).rglob("*")
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"}


def test_the_wheel_holds_the_license_the_weights_and_the_typed_marker(built):
    names = set(zipfile.ZipFile(built["wheel"]).namelist())

    assert {"memsift/py.typed", "memsift/decider/model.bin", "memsift-0.1.0.dist-info/licenses/LICENSE",
            "memsift_adapters/hook.py", "memsift_adapters/py.typed",
            "memsift_adapters/skills/memsift-search/SKILL.md"} <= names


def test_the_wheel_metadata_names_the_license_pythons_systems_and_urls(built):
    with zipfile.ZipFile(built["wheel"]) as wheel:
        metadata = email.message_from_bytes(wheel.read("memsift-0.1.0.dist-info/METADATA"))

    assert metadata["License-Expression"] == "Apache-2.0"
    classifiers = metadata.get_all("Classifier")
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in (11, 12, 13)} <= set(classifiers)
    assert "Operating System :: POSIX" in classifiers
    assert {url.split(",")[0] for url in metadata.get_all("Project-URL")} >= {"Repository", "Documentation"}


def test_the_sdist_holds_everything_its_tests_read(built):
    with tarfile.open(built["sdist"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}

    expected = {"LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "memsift/py.typed"}
    expected |= {name for folder in SHIPPED_FOLDERS for name in source_files(folder)}
    assert expected - names == set()


def test_the_sdists_own_tests_pass(built, tmp_path):
    with tarfile.open(built["sdist"]) as sdist:
        sdist.extractall(tmp_path, filter="data")
    (unpacked,) = tmp_path.iterdir()
    # Its own memsift first on the path, not this checkout's editable install.
    env = {**os.environ, "PYTHONPATH": str(unpacked)}

    done = subprocess.run([sys.executable, "-m", "pytest", "-m", "not cognee", "-q", "-p", "no:cacheprovider"],
                          cwd=unpacked, env=env, capture_output=True, text=True, timeout=1800)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout.splitlines()[-1]
