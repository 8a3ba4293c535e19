"""The local adapters, registered for the contract suites (see conftest.py for the shape)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from mdcrawl.adapters.local import FileBlobStore, open_local_stores


@contextmanager
def sqlite_adapter(tmp_path: Path, attribute: str) -> Iterator[Any]:
    """One port of a fresh local store set (a new database under ``tmp_path``)."""
    stores = open_local_stores(tmp_path / "cache")
    try:
        yield getattr(stores, attribute)
    finally:
        stores.close()


@contextmanager
def file_blobs(tmp_path: Path) -> Iterator[FileBlobStore]:
    yield FileBlobStore(tmp_path / "blobs")


FACTORIES = {
    "jobstore": {"sqlite": partial(sqlite_adapter, attribute="jobs")},
    "frontier": {"sqlite": partial(sqlite_adapter, attribute="frontier")},
    "cache": {"sqlite": partial(sqlite_adapter, attribute="cache")},
    "pages": {"sqlite": partial(sqlite_adapter, attribute="pages")},
    "events": {"sqlite": partial(sqlite_adapter, attribute="events")},
    "connections": {"sqlite": partial(sqlite_adapter, attribute="connections")},
    "blobs": {"files": file_blobs},
}
