"""One URL through the shared content cache: fresh hit, 304 revalidation, or a full GET.

Bodies are stored content-addressed (``cache/bodies/<sha256>``), so a page that did not
change costs no new blob, and two URLs serving the same bytes share one.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from lxml.html import HtmlElement

from .. import errors
from ..links import PageLinks, extract_links, tree_links
from ..models import (
    CacheEntry,
    CrawledPage,
    CrawlOptions,
    FetchResult,
    FrontierItem,
    PageRecord,
    PageStatus,
    Scope,
    UrlState,
)
from ..names import BlobPrefix
from ..ports import BlobStore, CrawlRequest
from ..urls import in_scope, normalize_url, url_hash

if TYPE_CHECKING:
    from .crawl import CrawlDeps

# Answers that say the URL is not there, cacheable by default (RFC 9111 4.2.2).
GONE_STATUSES = frozenset({404, 410})
_MAX_AGE_RE = re.compile(r"max-age\s*=\s*(\d+)", re.IGNORECASE)


def body_key(content_hash: str) -> str:
    return f"{BlobPrefix.CACHE_BODIES}{content_hash}"


def is_fresh(entry: CacheEntry, now: float, options: CrawlOptions) -> bool:
    """Fresh for the server (``fresh_until``) and young enough for this crawl's --max-age."""
    return now < entry.fresh_until and now - entry.fetched_at < options.max_age_s


def freshness_s(headers: dict[str, str], options: CrawlOptions) -> float:
    """How long the server says the page stays fresh; the crawl's max age when it is silent."""
    cache_control = headers.get("cache-control", "").lower()
    if "no-store" in cache_control or "no-cache" in cache_control:
        return 0.0
    match = _MAX_AGE_RE.search(cache_control)
    return float(match.group(1)) if match else options.max_age_s


async def fetch_page(
    request: CrawlRequest, item: FrontierItem, deps: CrawlDeps
) -> tuple[CrawledPage, tuple[str, ...]]:
    """The page (body stored) and its links, from the cache when we may, else the network."""
    options, now = request.options, deps.clock.now()
    entry = deps.cache.get(item.url_hash) if options.use_cache else None
    if entry is not None and entry.status in GONE_STATUSES:
        if is_fresh(entry, now, options):
            raise errors.HttpStatusError(entry.detail or f"{item.url}: HTTP {entry.status}",
                                         entry.status)
        entry = None  # a stale "gone" answer has nothing to revalidate against
    if entry is not None and not deps.blobs.exists(body_key(entry.content_hash)):
        entry = None  # the body blob is gone: the entry is useless
    if entry is not None and is_fresh(entry, now, options):
        await prejudge(entry.links, request.scope)
        return crawled_page(request.job_id, item, entry, from_cache=True), entry.links
    try:
        result = await deps.fetcher.fetch(
            item.url,
            etag=entry.etag if entry else None,
            last_modified=entry.last_modified if entry else None,
        )
    except errors.HttpStatusError as exc:
        if exc.status in GONE_STATUSES and options.use_cache:
            deps.cache.put(gone_entry(item, exc, now, options))
        raise
    if result.status == 304:
        if entry is None:
            raise errors.HttpStatusError(f"{item.url} answered 304 to a plain GET", 304)
        entry = _revalidated(entry, result, now, options)
        await prejudge(entry.links, request.scope)
        deps.cache.put(entry)
        return crawled_page(request.job_id, item, entry, from_cache=True), entry.links
    final_url = normalize_url(result.final_url) or result.final_url
    read = await deps.reader(request, item, result, final_url) if deps.reader else None
    if read is None:
        args = (result.body, final_url, request.scope, result.encoding)
        content_hash, links = None, await asyncio.to_thread(links_judged, *args)
    else:
        content_hash, links = read
        await prejudge(links, request.scope)
    entry = _store(item, result, now, options, deps, links, content_hash)
    return crawled_page(request.job_id, item, entry, from_cache=False), entry.links


def gone_entry(
    item: FrontierItem, exc: errors.HttpStatusError, now: float, options: CrawlOptions
) -> CacheEntry:
    """The cache entry of a URL the server says is not there: kept for the crawl's max
    age, as a page is, so a re-crawl does not ask again for every broken link of the
    site (77 of Django's 768 URLs); the error's text is kept so the URL ends with the
    same status and reason from the cache. (The fetcher's answer headers are not
    passed with an error, so a server's max-age on a 404 is not read: a page that
    comes back is seen after --max-age, or at once with --no-cache.)"""
    return CacheEntry(
        url_hash=item.url_hash,
        url=item.url,
        final_url=item.url,
        status=exc.status,
        content_type="",
        fetched_at=now,
        fresh_until=now + options.max_age_s,
        content_hash="",
        detail=str(exc),
    )


def _revalidated(
    entry: CacheEntry, result: FetchResult, now: float, options: CrawlOptions
) -> CacheEntry:
    return replace(
        entry,
        fetched_at=now,
        fresh_until=now + freshness_s(result.headers, options),
        etag=result.headers.get("etag", entry.etag),
        last_modified=result.headers.get("last-modified", entry.last_modified),
    )


def _store(
    item: FrontierItem,
    result: FetchResult,
    now: float,
    options: CrawlOptions,
    deps: CrawlDeps,
    links: tuple[str, ...],
    content_hash: str | None = None,
) -> CacheEntry:
    """The cache entry of a fetched page (its body stored first, unless a reader did)."""
    content_type = result.headers.get("content-type", "text/html")
    content_hash = content_hash or store_body(result.body, content_type, deps.blobs)
    final_url = normalize_url(result.final_url) or result.final_url
    entry = CacheEntry(
        url_hash=item.url_hash,
        url=item.url,
        final_url=final_url,
        status=result.status,
        content_type=result.content_type,
        fetched_at=now,
        fresh_until=now + freshness_s(result.headers, options),
        content_hash=content_hash,
        etag=result.headers.get("etag"),
        last_modified=result.headers.get("last-modified"),
        links=links,
        encoding=result.encoding,
    )
    deps.cache.put(entry)
    if final_url != item.url:  # a redirect: the target is now known (and fresh) too
        deps.cache.put(replace(entry, url_hash=url_hash(final_url), url=final_url))
    return entry


def store_body(body: bytes, content_type: str, blobs: BlobStore) -> str:
    """Store a body content-addressed (once: same bytes, same blob); its hash."""
    content_hash = hashlib.sha256(body).hexdigest()
    key = body_key(content_hash)
    if not blobs.exists(key):
        blobs.put(key, body, content_type)
    return content_hash


def links_judged(
    body: bytes, url: str, scope: Scope, encoding: str | None = None
) -> tuple[str, ...]:
    """``page_links``, with each link's scope judged (memoised by ``urls.in_scope``).
    Run in a worker thread: parsing a page and matching its links against the job's
    globs are CPU work that must not hold the event loop (in ``mdcrawl serve`` the API
    answers on it)."""
    links = page_links(body, url, encoding)
    judge_links(links, scope)
    return links


async def prejudge(links: tuple[str, ...], scope: Scope) -> None:
    """Judge the links' scope in a worker thread when the scope has globs (~50 µs a new
    link), so the orchestrator finds the answers memoised. Without globs a new link
    costs the orchestrator ~5 µs, less than the hop to a thread and back: it judges
    them itself."""
    if scope.include or scope.exclude:
        await asyncio.to_thread(judge_links, links, scope)


def judge_links(links: tuple[str, ...], scope: Scope) -> None:
    for link in links:
        in_scope(link, scope)


def page_links(body: bytes, url: str, encoding: str | None = None) -> tuple[str, ...]:
    """Normalised links in page order, the canonical URL first, without duplicates.

    ``extract_links`` already answers normalised URLs (and ``normalize_url`` is
    idempotent), so they are not normalised a second time: on a docs page with a few
    hundred navigation links that was a third of this step's CPU."""
    return _with_canonical(extract_links(body, url, encoding))


def tree_page_links(root: HtmlElement, url: str) -> tuple[str, ...]:
    """``page_links`` of a page already parsed (``pipeline/reading.py``)."""
    return _with_canonical(tree_links(root, url))


def _with_canonical(found: PageLinks) -> tuple[str, ...]:
    if not found.canonical:
        return found.links
    return tuple(dict.fromkeys((found.canonical, *found.links)))


def crawled_page(
    job_id: str, item: FrontierItem, entry: CacheEntry, from_cache: bool
) -> CrawledPage:
    """What the process step gets for a URL whose body the cache entry describes."""
    return CrawledPage(
        job_id=job_id,
        url=item.url,
        url_hash=item.url_hash,
        final_url=entry.final_url,
        content_hash=entry.content_hash,
        body_key=body_key(entry.content_hash),
        order=item.order,
        depth=item.depth,
        from_cache=from_cache,
        sitemap_rank=item.sitemap_rank,
        encoding=entry.encoding,
    )


def unconverted_record(job_id: str, item: FrontierItem, state: UrlState, reason: str) -> PageRecord:
    """The manifest line of a URL that never became a page: skipped (a URL left out on
    purpose) or failed (anything else, a lost one too), and why."""
    return PageRecord(
        job_id=job_id,
        url=item.url,
        url_hash=item.url_hash,
        status=PageStatus.SKIPPED if state is UrlState.SKIPPED else PageStatus.FAILED,
        order=item.order,
        reason=reason,
        sitemap_rank=item.sitemap_rank,
    )
