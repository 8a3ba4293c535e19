"""Ports: the small interfaces the core is written against.

Each has a local adapter (SQLite, files, in-process) and an AWS adapter (DynamoDB, S3,
Lambda, API Gateway), and one contract-test suite in tests/contract runs against both.
Every method is synchronous except the network-bound ``Fetcher`` and ``Invoker.crawl``.
Adapters raise ``errors.StoreError`` for storage failures, never a library's own error.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Protocol

from .models import (
    CacheEntry,
    Counters,
    CrawledPage,
    CrawlOptions,
    Event,
    EventType,
    FetchResult,
    FrontierItem,
    Job,
    JobStatus,
    PageRecord,
    Scope,
    UrlState,
)


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch."""
        ...


class JobStore(Protocol):
    def create(self, job: Job) -> bool:
        """Store a new job; False (and nothing written) if the id exists."""
        ...

    def get(self, job_id: str) -> Job | None: ...

    def transition(
        self, job_id: str, allowed: Collection[JobStatus], to: JobStatus, **fields: Any
    ) -> bool:
        """Move to ``to`` only if the status is one of ``allowed`` (a conditional write),
        setting ``fields`` (any Job attribute but counters) in the same write."""
        ...

    def update(self, job_id: str, **fields: Any) -> None:
        """Set Job attributes (heartbeat, deadline, truncated, left, result_keys...)."""
        ...

    def add_counters(self, job_id: str, **deltas: int) -> Counters:
        """Atomically add to counters; returns the counters after the addition."""
        ...

    def list_for_owner(self, owner: str, limit: int = 100) -> list[Job]:
        """The owner's jobs, newest first."""
        ...


class Frontier(Protocol):
    """A job's URL queue. Adding is idempotent by url_hash; the frontier is the crawl state."""

    def add(self, job_id: str, items: Sequence[FrontierItem]) -> list[FrontierItem]:
        """Add the items whose url_hash is new to the job, in the given order; returns them
        as stored, with ``order`` assigned increasing across calls (the caller's ignored)."""
        ...

    def claim(self, job_id: str, limit: int, lease_s: float, now: float) -> list[FrontierItem]:
        """Lease up to ``limit`` pending items, lowest ``order`` first."""
        ...

    def finish(
        self, job_id: str, url_hash: str, state: UrlState, reason: str | None = None
    ) -> bool:
        """Leased item -> done/failed/skipped. False if it was not leased (a duplicate)."""
        ...

    def release(self, job_id: str, url_hash: str, max_attempts: int, reason: str) -> UrlState:
        """Give a leased item back after a failed attempt: pending with attempts+1, or
        failed once attempts reach ``max_attempts``. Returns the new state."""
        ...

    def reclaim_expired(self, job_id: str, now: float, max_attempts: int) -> int:
        """Leases that expired (their worker died) go back as if released; returns count."""
        ...

    def counts(self, job_id: str) -> dict[UrlState, int]: ...

    def items(self, job_id: str) -> list[FrontierItem]:
        """Every item of the job, in ``order``."""
        ...

    def note_overflow(self, job_id: str, url_hashes: Sequence[str]) -> None:
        """Remember in-scope URLs found past the page cap (never added, never crawled):
        a set, so a URL met again, by a later run of the job too, counts once."""
        ...

    def overflow(self, job_id: str) -> int:
        """How many distinct URLs ``note_overflow`` has remembered for the job."""
        ...


class ContentCache(Protocol):
    """URL -> what was last fetched there; shared by every job (and every user on AWS)."""

    def get(self, url_hash: str) -> CacheEntry | None: ...

    def put(self, entry: CacheEntry) -> None: ...


class BlobStore(Protocol):
    """Bytes by key (S3 bucket, or files under the local cache folder)."""

    def put(
        self, key: str, data: bytes, content_type: str = "application/octet-stream"
    ) -> None: ...

    def get(self, key: str) -> bytes | None:
        """The bytes, or None if there is no such key."""
        ...

    def exists(self, key: str) -> bool: ...

    def writer(
        self, key: str, content_type: str = "text/markdown; charset=utf-8"
    ) -> AbstractContextManager[BinaryIO]:
        """Stream a large object in parts (S3 multipart): memory stays flat."""
        ...

    def link(self, key: str, expires_s: int = 900, filename: str | None = None) -> str:
        """A URL the user can download from (pre-signed on S3, file:// locally)."""
        ...


class PageStore(Protocol):
    def put(self, page: PageRecord) -> bool:
        """Record a page once; False (nothing written) if the job already has it."""
        ...

    def get(self, job_id: str, url_hash: str) -> PageRecord | None: ...

    def list(self, job_id: str) -> list[PageRecord]:
        """All the job's pages, in ``order``."""
        ...


class EventLog(Protocol):
    def append(self, job_id: str, type: EventType, data: dict[str, Any], ts: float) -> Event:
        """Store an event with the job's next seq (1, 2, 3... without gaps)."""
        ...

    def after(self, job_id: str, seq: int = 0, limit: int = 1000) -> list[Event]:
        """Events with seq > ``seq``, oldest first."""
        ...


class ConnectionStore(Protocol):
    """WebSocket connections and what each is subscribed to."""

    def add(self, connection_id: str, owner: str, ts: float) -> None: ...

    def subscribe(self, connection_id: str, job_id: str) -> None: ...

    def owner(self, connection_id: str) -> str | None: ...

    def for_job(self, job_id: str) -> list[str]: ...

    def remove(self, connection_id: str) -> None: ...


class Pusher(Protocol):
    def push(self, connection_id: str, message: dict[str, Any]) -> bool:
        """Send one message; False if the connection is gone (the caller removes it)."""
        ...


class Fetcher(Protocol):
    """The one network port. Implemented by fetch.HttpxFetcher for both runtimes."""

    async def fetch(
        self, url: str, etag: str | None = None, last_modified: str | None = None
    ) -> FetchResult:
        """GET (conditional when validators are given). Raises errors.FetchError."""
        ...

    async def allowed(self, url: str) -> bool:
        """Whether robots.txt lets us fetch ``url`` (True when robots are ignored)."""
        ...

    async def sitemap_urls(self, start_url: str) -> list[str]:
        """URLs listed by the site's sitemaps (robots ``Sitemap:`` lines, /sitemap.xml)."""
        ...


@dataclass(frozen=True)
class CrawlRequest:
    """Orchestrator -> crawler: a batch of leased URLs (ids and urls, never bodies)."""

    job_id: str
    scope: Scope
    options: CrawlOptions
    items: tuple[FrontierItem, ...]
    deadline: float | None = None  # the job's (clock time): no request may outlive it


@dataclass(frozen=True)
class CrawlOutcome:
    """Crawler's answer for one URL."""

    url_hash: str
    state: UrlState  # DONE, FAILED, SKIPPED, or PENDING to retry later
    reason: str | None = None
    page: CrawledPage | None = None
    links: tuple[str, ...] = ()  # absolute, normalised, in page order (not yet scoped)
    # Added by the pipeline: the sitemap's URLs (start URL only), and a human-readable
    # cause for a failure (the manifest keeps ``reason``; the CLI shows ``detail``).
    sitemap: tuple[str, ...] = ()
    detail: str = ""
    # A cached page whose conversion is cached too: the record the process step would
    # write, built by the crawler (AWS: ``adapters/aws/cachedpages.py``), so the
    # orchestrator records it with no processor invocation.
    record: PageRecord | None = None


@dataclass(frozen=True)
class CrawlResponse:
    job_id: str
    outcomes: tuple[CrawlOutcome, ...] = field(default_factory=tuple)


class Invoker(Protocol):
    """How the orchestrator reaches the other two steps (in-process, or Lambda invoke)."""

    async def crawl(self, request: CrawlRequest) -> CrawlResponse:
        """Run the crawl step on a batch and wait for its answer."""
        ...

    def process(self, page: CrawledPage) -> None:
        """Hand a fetched page to the process step without waiting (async invoke)."""
        ...


def iter_chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """Split a sequence into batches (DynamoDB's 25-item writes, crawl batches)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
