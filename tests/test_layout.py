"""The layout shows the architecture: no import circles, and every module public or plainly private.

A circle is two modules that import each other, directly or through others,
at module level or inside a function: the shared part belongs in a third
module below both (STYLE.md).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def modules(package: str, root: Path = REPO) -> dict[str, Path]:
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that ``name`` imports anywhere in its source (its own packages aside)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            out |= {t for t in (target, *(f"{target}.{a.name}" for a in node.names)) if t in known}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
    return {t for t in out if t != name and not name.startswith(t + ".")}


def circles(known: dict[str, Path]) -> list[list[str]]:
    graph = {name: imports(name, path, known) for name, path in known.items()}
    found, seen = [], set()

    def walk(name: str, trail: list[str]) -> None:
        for target in sorted(graph[name]):
            if target in trail:
                circle = trail[trail.index(target):]
                key = frozenset(circle)
                if key not in seen:
                    seen.add(key)
                    found.append([*circle, target])
            elif len(trail) < 12:
                walk(target, [*trail, target])

    for name in sorted(graph):
        walk(name, [name])
    return found


@pytest.mark.parametrize("package", ["memsift", "memsift_adapters"])
def test_no_module_imports_itself_through_others(package):
    known = modules("memsift") | modules("memsift_adapters")

    assert [c for c in circles(known) if c[0].split(".")[0] == package] == []


def test_the_public_modules_are_the_ones_docs_pipelines_names():
    """A module without a leading underscore is public: docs/pipelines.md's table names it."""
    table = (REPO / "docs" / "pipelines.md").read_text(encoding="utf-8").split("## The public surface", 1)[1]
    named = set(re.findall(r"`(memsift(?:\.\w+)*)`", table.split("\n## ", 1)[0]))
    public = {name for name in modules("memsift")
              if not any(part.startswith("_") for part in name.split("."))}

    # A package's row covers its modules; ``memsift``'s own row (the top level) covers none.
    undocumented = {name for name in public
                    if not any(name == n or (n != "memsift" and name.startswith(n + ".")) for n in named)}
    assert undocumented == set()


def test_the_detector_finds_a_circle_through_a_lazy_import(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from .b import helper\n")
    (tmp_path / "pkg" / "b.py").write_text("def helper():\n    from . import c\n")
    (tmp_path / "pkg" / "c.py").write_text("from pkg.a import helper\n")

    assert circles(modules("pkg", tmp_path)) == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]
