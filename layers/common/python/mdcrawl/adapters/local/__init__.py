"""Local adapters: SQLite (one WAL database file) and files under the cache folder."""

from .blobs import FileBlobStore
from .cache import SqliteContentCache
from .clock import SystemClock
from .connections import SqliteConnectionStore
from .db import Database, open_database
from .events import SqliteEventLog
from .frontier import SqliteFrontier
from .jobs import SqliteJobStore
from .pages import SqlitePageStore
from .stores import LocalStores, open_local_stores

__all__ = [
    "Database",
    "FileBlobStore",
    "LocalStores",
    "SqliteConnectionStore",
    "SqliteContentCache",
    "SqliteEventLog",
    "SqliteFrontier",
    "SqliteJobStore",
    "SqlitePageStore",
    "SystemClock",
    "open_database",
    "open_local_stores",
]
