"""Every third-party package the library imports directly is pinned with == in
pyproject.toml: a deploy installs what the tests ran with, not what a resolver picked."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "layers" / "common" / "python" / "mdcrawl"
HANDLERS = ROOT / "functions"


def imported_top_modules(folder: Path) -> set[str]:
    names: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"mdcrawl", "handler"}


def pinned_distributions() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs.extend(extra)
    pins: dict[str, str] = {}
    for spec in specs:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*(.*)", spec.strip())
        assert match, spec
        pins[match.group(1).lower().replace("_", "-")] = match.group(2)
    return pins


def test_every_directly_imported_package_is_pinned_exactly() -> None:
    owners = packages_distributions()
    pins = pinned_distributions()
    loose = {}
    for module in sorted(imported_top_modules(LIBRARY) | imported_top_modules(HANDLERS)):
        for dist in owners.get(module, [module]):
            name = dist.lower().replace("_", "-")
            if not pins.get(name, "").startswith("=="):
                loose[module] = (name, pins.get(name))
    assert not loose, f"imported but not pinned with ==: {loose}"


def test_the_check_sees_an_unpinned_import(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import bs4\nimport json\nfrom . import x\n")
    assert imported_top_modules(tmp_path) == {"bs4"}
