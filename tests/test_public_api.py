"""The public API: a static ``__all__``, names a type checker sees, loaded only when used."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import memsift

INIT = Path(memsift.__file__)


def type_checking_imports() -> dict[str, str]:
    """Name -> module of what ``memsift/__init__.py`` imports under ``if TYPE_CHECKING:``."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    block = next(node for node in tree.body
                 if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    return {alias.name: f"memsift.{node.module}"
            for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}


def test_all_is_a_literal_a_checker_can_read():
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    assigned = next(node.value for node in tree.body
                    if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets))

    assert isinstance(assigned, ast.List)
    assert [ast.literal_eval(element) for element in assigned.elts] == memsift.__all__


def test_the_checker_sees_exactly_the_public_names():
    assert sorted(type_checking_imports()) == sorted(memsift.__all__)


def test_each_public_name_is_the_object_its_module_defines():
    for name, module in type_checking_imports().items():
        assert getattr(memsift, name) is getattr(importlib.import_module(module), name), name


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'recal'"):
        _ = memsift.recal


def test_importing_memsift_imports_none_of_its_modules():
    probe = "import sys, memsift; print(sorted(m for m in sys.modules if m.startswith('memsift.')))"

    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)

    assert done.stdout.strip() == "[]"
