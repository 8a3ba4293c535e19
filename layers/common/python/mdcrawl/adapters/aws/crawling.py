"""The crawler function's ports on AWS: a fetcher per batch behind the SSRF guard,
holding a shared per-host slot for every request (``hostlease``), the batch's bodies
stored as one pack (``packs``), and the answer spilled to S3 when it is over Lambda's
response limit (``spill``)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ...fetch import HttpxFetcher
from ...netguard import AddressGuard
from ...pipeline.batch import crawl_within
from ...pipeline.crawl import CrawlDeps
from ...pipeline.fetching import body_key
from ...ports import CrawlRequest, CrawlResponse
from .hostlease import HostLeases, LeasedFetcher
from .robots import DynamoDbRobotsCache
from .spill import answer_of

if TYPE_CHECKING:  # built by the runtime; it imports the process step's modules
    from .cachedpages import CachedBatch, CachedPages


@dataclass(frozen=True)
class CrawlerPorts:
    cache: Any
    blobs: Any
    clock: Any
    guard: AddressGuard
    leases: HostLeases | None = None
    # A fresh robots.txt cache per invocation (its memory), over the shared cache table.
    robots: Callable[[], DynamoDbRobotsCache] | None = None
    # A cached page's record built here when its conversion is cached (cachedpages.py).
    cached_pages: CachedPages | None = None

    @contextlib.asynccontextmanager
    async def deps_for(self, request: CrawlRequest) -> AsyncIterator[CrawlDeps]:
        """A fetcher for this batch's options and scope (the httpx client belongs to one
        event loop: one per invocation); the job's concurrency holds across crawler
        invocations and jobs through the host's shared slots."""
        robots = self.robots() if self.robots and request.options.use_cache else None
        async with HttpxFetcher(
            request.options, scope=request.scope, guard=self.guard, robots_cache=robots
        ) as f:
            if self.leases is None:
                yield CrawlDeps(f, self.cache, self.blobs, self.clock)
                return
            leased = LeasedFetcher(f, self.leases, request.options.concurrency, robots)
            try:
                yield CrawlDeps(leased, self.cache, self.blobs, self.clock)
            finally:
                await leased.aclose()  # slots handed over and left untaken

    async def crawl(self, request: CrawlRequest, time_left_s: float | None = None) -> CrawlResponse:
        """The batch's outcomes, answered ``batch.CRAWL_STOP_MARGIN_S`` before the
        invocation's time (``time_left_s``) ends."""
        with _packing(self.blobs):  # the batch's bodies: one pack, stored before answering
            cached = self.cached_pages.batch(request) if self.cached_pages else None
            async with self.deps_for(request) as deps:
                deps = self._prefetched(request, deps, cached)
                response = await crawl_within(request, deps, time_left_s)
            return cached.recorded(response) if cached is not None else response

    def _prefetched(
        self, request: CrawlRequest, deps: CrawlDeps, cached: CachedBatch | None = None
    ) -> CrawlDeps:
        """The batch's cache entries in one request, and where their bodies (and their
        conversions, for ``cached``) are in another, instead of two requests per URL."""
        get_many = getattr(self.cache, "get_many", None)
        if not request.options.use_cache or get_many is None:
            return deps
        entries = get_many([item.url_hash for item in request.items])
        locate = getattr(self.blobs, "prefetch_locations", None)
        if locate is not None:
            keys = [body_key(e.content_hash) for e in entries.values() if e and e.content_hash]
            locate(keys + (cached.markdown_keys(entries) if cached is not None else []))
        return replace(deps, cache=PrefetchedCache(self.cache, entries))

    def answer(self, response: CrawlResponse) -> dict[str, Any]:
        return answer_of(response, self.blobs)


class PrefetchedCache:
    """The content cache with some entries already read (None: known to be absent)."""

    def __init__(self, inner: Any, entries: dict[str, Any]) -> None:
        self._inner, self._entries = inner, entries

    def get(self, url_hash: str) -> Any:
        if url_hash in self._entries:
            return self._entries[url_hash]
        return self._inner.get(url_hash)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _packing(blobs: Any) -> contextlib.AbstractContextManager[None]:
    packing = getattr(blobs, "packing", None)
    return packing() if packing is not None else contextlib.nullcontext()
