"""A Lambda function's handler module loaded from ``functions/<name>/handler.py``, as
Lambda imports it: the offline stack and the harness's worker processes both use this
(kept free of heavy imports: a worker's cold start is measured around it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_handler(name: str, module_name: str | None = None) -> ModuleType:
    """``module_name``: a fresh name gives a fresh module (its own globals, as a new
    execution environment has)."""
    path = ROOT / "functions" / name / "handler.py"
    spec = importlib.util.spec_from_file_location(module_name or f"mdcrawl_fn_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
