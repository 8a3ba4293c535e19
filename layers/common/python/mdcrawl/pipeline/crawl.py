"""The crawl step: a batch of leased URLs -> fetched pages (bodies stored as blobs) + links.

Cache first: a fresh entry costs no request, a stale one with validators a conditional
GET (a 304 reuses the stored body). Every item ends as one ``CrawlOutcome``; a failing
page never stops the batch. Transient failures come back PENDING so the orchestrator
retries them (up to its cap); the others are final, with a reason for the manifest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Protocol

from .. import errors
from ..deadline import fetch_deadline
from ..models import FetchResult, FrontierItem, UrlState
from ..ports import (
    BlobStore,
    Clock,
    ContentCache,
    CrawlOutcome,
    CrawlRequest,
    CrawlResponse,
    Fetcher,
)
from .fetching import fetch_page

log = logging.getLogger(__name__)

# Fetch errors that end a URL for good, as "skipped": the page is not one we convert.
SKIP_ERRORS = (
    errors.NotHtml,
    errors.TooLarge,
    errors.OutOfScope,
    errors.RobotsDisallowed,
    errors.TooManyRedirects,
)
# Fetch errors that end a URL for good, as "failed": trying later cannot help (the
# budget is spent, or the server asked to wait longer than the crawl may).
FINAL_ERRORS = (errors.OutOfTime, errors.RateLimited)
# HTTP statuses worth another attempt later (the fetcher already retried with backoff).
TRANSIENT_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


class PageReader(Protocol):
    """Reads a fetched page elsewhere (locally: in a pool worker, converting it from the
    same parse, ``pipeline/reading.py``): its body stored, answers (content hash, links);
    None to read it here the usual way."""

    async def __call__(
        self, request: CrawlRequest, item: FrontierItem, result: FetchResult, final_url: str
    ) -> tuple[str, tuple[str, ...]] | None: ...


@dataclass(frozen=True)
class CrawlDeps:
    fetcher: Fetcher
    cache: ContentCache
    blobs: BlobStore
    clock: Clock
    reader: PageReader | None = None  # None: links read in a thread (the AWS crawler)


async def crawl_batch(request: CrawlRequest, deps: CrawlDeps) -> CrawlResponse:
    """Crawl every item of the batch concurrently (the fetcher enforces politeness), no
    request outliving the job's deadline."""
    with fetch_deadline(request.deadline):
        outcomes = await asyncio.gather(
            *(crawl_item(request, item, deps) for item in request.items)
        )
    return CrawlResponse(job_id=request.job_id, outcomes=tuple(outcomes))


async def crawl_item(request: CrawlRequest, item: FrontierItem, deps: CrawlDeps) -> CrawlOutcome:
    try:
        return await _crawl(request, item, deps)
    except errors.FetchError as exc:
        return failure_outcome(item, exc)
    except errors.StoreError as exc:
        # The page may be fine; storage hiccuped. Let the orchestrator try again later.
        log.warning("store error while crawling %s: %s", item.url, exc)
        return CrawlOutcome(item.url_hash, UrlState.PENDING, "store_error", detail=str(exc))


async def _crawl(request: CrawlRequest, item: FrontierItem, deps: CrawlDeps) -> CrawlOutcome:
    if request.options.respect_robots and not await deps.fetcher.allowed(item.url):
        raise errors.RobotsDisallowed(f"robots.txt disallows {item.url}")
    if item.depth != 0:
        page, links = await fetch_page(request, item, deps)
        return CrawlOutcome(item.url_hash, UrlState.DONE, page=page, links=links)
    # The start URL's outcome also carries the site's sitemap URLs (seeds), read while
    # the page is fetched and read: a fresh crawl's first links wait for both, so one
    # after the other cost it a round trip or more (a sitemap index and its children)
    # before any other page could be asked for. robots.txt is read first either way.
    seeds = asyncio.ensure_future(_sitemap_seeds(item, deps))
    try:
        page, links = await fetch_page(request, item, deps)
    except BaseException:
        await _dropped(seeds)
        raise
    return CrawlOutcome(item.url_hash, UrlState.DONE, page=page, links=links, sitemap=await seeds)


async def _sitemap_seeds(item: FrontierItem, deps: CrawlDeps) -> tuple[str, ...]:
    try:
        return tuple(await deps.fetcher.sitemap_urls(item.url))
    except errors.FetchError as exc:
        log.info("no sitemap for %s: %s", item.url, exc)
        return ()


async def _dropped(task: asyncio.Future[tuple[str, ...]]) -> None:
    """Cancel a sitemap read whose start page failed, and wait for it to stop."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


def failure_outcome(item: FrontierItem, exc: errors.FetchError) -> CrawlOutcome:
    """Map a fetch error to skipped (not for us), pending (try later) or failed."""
    detail = str(exc) or exc.reason
    if isinstance(exc, SKIP_ERRORS):
        return CrawlOutcome(item.url_hash, UrlState.SKIPPED, exc.reason, detail=detail)
    if isinstance(exc, FINAL_ERRORS):
        return CrawlOutcome(item.url_hash, UrlState.FAILED, exc.reason, detail=detail)
    if isinstance(exc, errors.HttpStatusError):
        reason = f"http_{exc.status}"
        state = UrlState.PENDING if exc.status in TRANSIENT_STATUSES else UrlState.FAILED
        return CrawlOutcome(item.url_hash, state, reason, detail=detail)
    # Connection refused, timeouts, DNS: the network's fault, maybe not for long.
    return CrawlOutcome(item.url_hash, UrlState.PENDING, exc.reason, detail=detail)
