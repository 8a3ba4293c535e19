"""mdcrawl: a documentation site to clean, LLM-ready markdown.

The core (everything except ``fetch.py``, ``adapters/``, ``runtime/`` and ``cli.py``)
knows nothing of AWS, SQLite, sockets or environment variables.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``from mdcrawl import crawl`` (the Python API, ``mdcrawl.api``), imported on first
    use: importing the core must not pull in the local runtime."""
    if name == "crawl":
        from .api import crawl

        return crawl
    raise AttributeError(f"module 'mdcrawl' has no attribute {name!r}")
