"""Functions a test runs in a pool worker (a worker imports them by name)."""

from __future__ import annotations

import sys


def loaded(module: str) -> bool:
    """Is ``module`` imported in this process?"""
    return module in sys.modules


def frozen_objects() -> int:
    """How many objects this process's garbage collector never scans (``gc.freeze``)."""
    import gc

    return gc.get_freeze_count()
