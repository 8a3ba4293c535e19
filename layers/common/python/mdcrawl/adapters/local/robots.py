"""robots.txt kept in the local cache folder: one fetch per site per ``fresh_s``, not one
per crawl, as on AWS (``adapters/aws/robots.py``, the same freshness).

A re-crawl answered from the content cache otherwise sent one request, robots.txt's, and
built an HTTP client for it. A document ``cache/robots/<sha256 of the origin>.json`` in the
blob store holds the origin, the text and when it was fetched; a fetch that failed is
kept as "" (allow all, as fetch.py decides), so it is not asked for on every crawl either.
``--no-cache`` crawls use none (``use_cache``): robots.txt is fetched again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from ...models import CrawlOptions
from ...names import BlobPrefix
from .blobs import FileBlobStore

FRESH_S = 86400.0  # as long as the big crawlers keep a robots.txt (RFC 9309 says 24 h)


class FileRobotsCache:
    """``fetch.RobotsCache`` over the local blob store (blocking calls, atomic writes)."""

    def __init__(
        self, blobs: FileBlobStore, now: Callable[[], float], fresh_s: float = FRESH_S
    ) -> None:
        self._blobs, self._now, self._fresh_s = blobs, now, fresh_s

    def get(self, origin: str) -> str | None:
        """The origin's robots.txt text while fresh; None when unknown, stale or unreadable."""
        data = self._blobs.get(robots_key(origin))
        if data is None:
            return None
        try:
            doc = json.loads(data)
            fetched_at, text = float(doc["fetched_at"]), doc["text"]
        except (ValueError, KeyError, TypeError):
            return None  # a damaged note: fetched again and written over
        age = self._now() - fetched_at
        if doc.get("origin") != origin or not 0 <= age < self._fresh_s or not isinstance(text, str):
            return None
        return text

    def put(self, origin: str, text: str) -> None:
        doc = {"origin": origin, "fetched_at": self._now(), "text": text}
        self._blobs.put(robots_key(origin), json.dumps(doc).encode(), "application/json")


def crawl_robots_cache(
    options: CrawlOptions, blobs: FileBlobStore, now: Callable[[], float]
) -> FileRobotsCache | None:
    """A crawl's robots.txt cache: none when the crawl uses no cache (``--no-cache``)."""
    return FileRobotsCache(blobs, now) if options.use_cache else None


def robots_key(origin: str) -> str:
    return f"{BlobPrefix.CACHE_ROBOTS}{hashlib.sha256(origin.encode()).hexdigest()}.json"
