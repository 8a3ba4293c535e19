"""The local composition of every storage port: one SQLite file plus a blob folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from .blobs import FileBlobStore
from .cache import SqliteContentCache
from .clock import SystemClock
from .connections import SqliteConnectionStore
from .db import Database, open_database
from .events import SqliteEventLog
from .frontier import SqliteFrontier
from .jobs import SqliteJobStore
from .pages import SqlitePageStore

DB_NAME = "mdcrawl.sqlite3"
BLOBS_DIR = "blobs"


@dataclass
class LocalStores:
    """Adapters sharing one connection. Open one set per process (workers included)."""

    jobs: SqliteJobStore
    frontier: SqliteFrontier
    cache: SqliteContentCache
    pages: SqlitePageStore
    events: SqliteEventLog
    connections: SqliteConnectionStore
    blobs: FileBlobStore
    clock: SystemClock
    db: Database

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> LocalStores:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_local_stores(root: Path) -> LocalStores:
    """Open (creating on first use) the stores of the cache folder ``root``:
    the database at ``root/mdcrawl.sqlite3``, blobs under ``root/blobs/``."""
    db = open_database(root / DB_NAME)
    return LocalStores(
        jobs=SqliteJobStore(db),
        frontier=SqliteFrontier(db),
        cache=SqliteContentCache(db),
        pages=SqlitePageStore(db),
        events=SqliteEventLog(db),
        connections=SqliteConnectionStore(db),
        blobs=FileBlobStore(root / BLOBS_DIR),
        clock=SystemClock(),
        db=db,
    )
