"""The sitemap's seed URLs of a start URL, kept in the local cache folder for a day, as
robots.txt is (``robots.py``): a re-crawl answered from the content cache sends no
sitemap request either. Only a settled answer is kept (sitemaps read, or missing for
good: a 404); a timeout or a 5xx is asked again next crawl. ``--no-cache`` crawls use
none, and ``--max-age`` shortens the day (``notes.fresh_for``)."""

from __future__ import annotations

from collections.abc import Callable

from ...models import CrawlOptions
from ...names import BlobPrefix
from .blobs import FileBlobStore
from .notes import FRESH_S, FreshNotes, fresh_for


class FileSitemapCache:
    """``fetch.SitemapCache`` over the local blob store (blocking calls, atomic writes)."""

    def __init__(
        self, blobs: FileBlobStore, now: Callable[[], float], fresh_s: float = FRESH_S
    ) -> None:
        self._notes = FreshNotes(blobs, BlobPrefix.CACHE_SITEMAPS, now, fresh_s)

    def get(self, start_url: str) -> list[str] | None:
        """The seeds found for ``start_url`` while fresh; None when unknown or stale."""
        urls = self._notes.get(start_url)
        if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
            return None
        return urls

    def put(self, start_url: str, urls: list[str]) -> None:
        self._notes.put(start_url, urls)


def crawl_sitemap_cache(
    options: CrawlOptions, blobs: FileBlobStore, now: Callable[[], float]
) -> FileSitemapCache | None:
    """A crawl's sitemap cache: none when the crawl uses no cache (``--no-cache``)."""
    if not options.use_cache:
        return None
    return FileSitemapCache(blobs, now, fresh_for(options.max_age_s))
