"""robots.txt kept in the local cache folder: one fetch per site per ``fresh_s``, not one
per crawl, as on AWS (``adapters/aws/robots.py``: a day there too; locally a crawl's
shorter ``--max-age`` shortens it, ``notes.fresh_for``).

A fetch that failed is kept as "" (allow all, as fetch.py decides), so it is not asked
for on every crawl either. ``--no-cache`` crawls use none (``use_cache``): robots.txt is
fetched again. The notes themselves: ``notes.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from ...models import CrawlOptions
from ...names import BlobPrefix
from .blobs import FileBlobStore
from .notes import FRESH_S, FreshNotes, fresh_for, note_key

__all__ = ["FRESH_S", "FileRobotsCache", "crawl_robots_cache", "robots_key"]


class FileRobotsCache:
    """``fetch.RobotsCache`` over the local blob store (blocking calls, atomic writes)."""

    def __init__(
        self, blobs: FileBlobStore, now: Callable[[], float], fresh_s: float = FRESH_S
    ) -> None:
        self._notes = FreshNotes(blobs, BlobPrefix.CACHE_ROBOTS, now, fresh_s)

    def get(self, origin: str) -> str | None:
        """The origin's robots.txt text while fresh; None when unknown, stale or unreadable."""
        text = self._notes.get(origin)
        return text if isinstance(text, str) else None

    def put(self, origin: str, text: str) -> None:
        self._notes.put(origin, text)


def crawl_robots_cache(
    options: CrawlOptions, blobs: FileBlobStore, now: Callable[[], float]
) -> FileRobotsCache | None:
    """A crawl's robots.txt cache: none when the crawl uses no cache (``--no-cache``)."""
    if not options.use_cache:
        return None
    return FileRobotsCache(blobs, now, fresh_for(options.max_age_s))


def robots_key(origin: str) -> str:
    return note_key(BlobPrefix.CACHE_ROBOTS, origin)
