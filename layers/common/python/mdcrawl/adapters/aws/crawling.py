"""The crawler function's ports on AWS: a fetcher per batch behind the SSRF guard,
holding a shared per-host slot for every request (``hostlease``), the batch's bodies
stored as one pack (``packs``), and the answer spilled to S3 when it is over Lambda's
response limit (``spill``)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from ...fetch import HttpxFetcher
from ...netguard import AddressGuard
from ...pipeline.batch import crawl_within
from ...pipeline.crawl import CrawlDeps
from ...ports import CrawlRequest, CrawlResponse
from .hostlease import HostLeases, LeasedFetcher
from .robots import DynamoDbRobotsCache
from .spill import answer_of


@dataclass(frozen=True)
class CrawlerPorts:
    cache: Any
    blobs: Any
    clock: Any
    guard: AddressGuard
    leases: HostLeases | None = None
    # A fresh robots.txt cache per invocation (its memory), over the shared cache table.
    robots: Callable[[], DynamoDbRobotsCache] | None = None

    @contextlib.asynccontextmanager
    async def deps_for(self, request: CrawlRequest) -> AsyncIterator[CrawlDeps]:
        """A fetcher for this batch's options and scope (the httpx client belongs to one
        event loop: one per invocation); the job's concurrency holds across crawler
        invocations and jobs through the host's shared slots."""
        robots = self.robots() if self.robots and request.options.use_cache else None
        async with HttpxFetcher(
            request.options, scope=request.scope, guard=self.guard, robots_cache=robots
        ) as f:
            fetcher: Any = f
            if self.leases is not None:
                fetcher = LeasedFetcher(f, self.leases, request.options.concurrency, robots)
            yield CrawlDeps(fetcher, self.cache, self.blobs, self.clock)

    async def crawl(self, request: CrawlRequest, time_left_s: float | None = None) -> CrawlResponse:
        """The batch's outcomes, answered ``batch.CRAWL_STOP_MARGIN_S`` before the
        invocation's time (``time_left_s``) ends."""
        with _packing(self.blobs):  # the batch's bodies: one pack, stored before answering
            async with self.deps_for(request) as deps:
                return await crawl_within(request, deps, time_left_s)

    def answer(self, response: CrawlResponse) -> dict[str, Any]:
        return answer_of(response, self.blobs)


def _packing(blobs: Any) -> contextlib.AbstractContextManager[None]:
    packing = getattr(blobs, "packing", None)
    return packing() if packing is not None else contextlib.nullcontext()
