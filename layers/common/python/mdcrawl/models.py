"""The core's value types: frozen dataclasses, no I/O.

Pydantic models live at the edges (API input, env settings); inside, these plain
records travel between the pipeline steps and the ports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .options import core_defaults

# Bumped whenever extraction or markdown output changes, so the markdown cache
# (keyed by content hash + this) never serves output of an older converter.
CONVERTER_VERSION = "8"


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINALIZING = "finalizing"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED)


class UrlState(StrEnum):
    PENDING = "pending"
    LEASED = "leased"
    DONE = "done"  # fetched (or served from cache); processing follows
    FAILED = "failed"
    SKIPPED = "skipped"  # not HTML, robots, out of scope after redirect, duplicate...


class PageStatus(StrEnum):
    OK = "ok"
    FAILED = "failed"
    SKIPPED = "skipped"


# The defaults of what a person or a client can set come from options.py (the one
# declaration of the crawl options, their bounds and help); the rest are internal.
_DEFAULT = core_defaults()


@dataclass(frozen=True)
class CrawlOptions:
    """What one crawl runs with (CLI flags and POST /jobs body alike, via options.py)."""

    max_pages: int = _DEFAULT["max_pages"]
    max_depth: int = _DEFAULT["max_depth"]
    budget_s: float = _DEFAULT["budget_s"]
    concurrency: int = _DEFAULT["concurrency"]  # per host
    include: tuple[str, ...] = _DEFAULT["include"]
    exclude: tuple[str, ...] = _DEFAULT["exclude"]
    max_age_s: float = _DEFAULT["max_age_s"]  # a cached page younger than this is not fetched
    use_cache: bool = _DEFAULT["use_cache"]
    respect_robots: bool = _DEFAULT["respect_robots"]
    max_page_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 10
    timeout_s: float = 20.0
    retries: int = 3
    max_tokens: int | None = _DEFAULT["max_tokens"]  # also write docs-001.md… parts
    prefer_native: bool = _DEFAULT["prefer_native"]  # use a page's markdown twin (page.md)
    # Off: no per-generator rule from selectors.py; the site's learned template and the
    # generic cascade alone find every page's content.
    generator_rules: bool = _DEFAULT["generator_rules"]

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CrawlOptions:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        for key in ("include", "exclude"):
            if key in known:
                known[key] = tuple(known[key])
        return cls(**known)


@dataclass(frozen=True)
class Scope:
    """Which URLs belong to a crawl: one host, a path prefix, optional path globs."""

    scheme: str
    host: str  # netloc as normalised (host[:port])
    path_prefix: str
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True)
class Counters:
    discovered: int = 0
    crawled: int = 0  # fetched from the network or served from cache
    cached: int = 0  # of those, served from cache (fresh or 304)
    failed: int = 0
    skipped: int = 0
    processed: int = 0  # converted to markdown (ok) or recorded as failed conversion
    words: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Job:
    job_id: str
    url: str
    options: CrawlOptions
    owner: str = "local"
    status: JobStatus = JobStatus.QUEUED
    counters: Counters = field(default_factory=Counters)
    created_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    deadline: float | None = None  # wall-clock time when the budget runs out
    heartbeat: float | None = None
    truncated: bool = False
    left: int = 0  # URLs still pending when the budget or page cap cut the crawl
    error: str | None = None
    cancel_requested: bool = False
    result_keys: dict[str, str] = field(default_factory=dict)
    # Where the job's end is POSTed, signed (webhook.py; the AWS stack sends it), and
    # how that went: {"ok", "attempts", "status", "error", "event", "at"}.
    webhook: str | None = None
    webhook_delivery: dict[str, Any] | None = None


def stored_job_value(name: str, value: Any) -> Any:
    """A Job attribute as both stores keep it: options as a plain dict, status as its
    string, everything else as it is."""
    if name == "options":
        return value.to_dict()
    if name == "status":
        return str(JobStatus(value))
    return value


@dataclass(frozen=True)
class FrontierItem:
    """One URL in a job's queue. ``order`` is the discovery sequence number."""

    url: str
    url_hash: str
    depth: int = 0
    parent: str | None = None
    order: int = 0
    state: UrlState = UrlState.PENDING
    attempts: int = 0
    lease_expires: float | None = None
    reason: str | None = None
    sitemap_rank: int | None = None  # position in sitemap.xml, when it came from there


@dataclass(frozen=True)
class CacheEntry:
    """What the shared URL content cache knows about one URL (the body is a blob)."""

    url_hash: str
    url: str
    final_url: str
    status: int
    content_type: str
    fetched_at: float
    fresh_until: float
    content_hash: str  # sha256 of the body; the body blob key derives from it
    etag: str | None = None
    last_modified: str | None = None
    links: tuple[str, ...] = ()  # absolute, normalised links found on the page
    title: str | None = None
    encoding: str | None = None  # charset from the response headers, for conversion
    detail: str | None = None  # a "gone" answer's (404, 410) error text, no body


@dataclass(frozen=True)
class FetchResult:
    """The answer to one GET (or conditional GET), after redirects."""

    url: str  # what was asked
    final_url: str  # after redirects
    status: int  # 200, or 304 for a revalidated page
    headers: dict[str, str]
    body: bytes = b""
    encoding: str | None = None  # charset from the headers, if any

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


@dataclass(frozen=True)
class CrawledPage:
    """What the crawl step hands to the process step: ids and keys, never the body."""

    job_id: str
    url: str
    url_hash: str
    final_url: str
    content_hash: str
    body_key: str
    order: int
    depth: int
    from_cache: bool
    sitemap_rank: int | None = None
    encoding: str | None = None  # charset from the response headers, if any


@dataclass(frozen=True)
class ConvertedPage:
    """Pure output of extraction + conversion for one HTML document."""

    title: str
    markdown: str  # the page body, starting with its own heading; links absolute
    words: int
    nav: tuple[str, ...] = ()  # the site's navigation links in order (absolute urls)
    description: str = ""  # one line for llms.txt
    quality: float = 1.0  # extractor's confidence; readability fallback lowers it
    extractor: str = ""  # which rule picked the content region, for debugging
    # element id -> (text, occurrence) of the heading that holds it (("", 0): the page's
    # top): where a link to page.html#id lands (anchors.py)
    anchors: dict[str, tuple[str, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class PageRecord:
    """One line of the manifest: a page that was converted, failed or skipped."""

    job_id: str
    url: str
    url_hash: str
    status: PageStatus
    order: int = 0
    title: str = ""
    words: int = 0
    markdown_key: str | None = None
    from_cache: bool = False
    reason: str | None = None
    nav: tuple[str, ...] = ()
    description: str = ""
    sitemap_rank: int | None = None
    content_hash: str | None = None
    native: str | None = None  # "md_twin": the markdown is the site's own twin (native.py)
    encoding: str | None = None  # the response's charset: finalize may convert again
    template: str = ""  # id of the site template the markdown was converted with


class EventType(StrEnum):
    JOB_STARTED = "job.started"
    JOB_PROGRESS = "job.progress"
    PAGE_DONE = "page.done"
    PAGE_FAILED = "page.failed"
    JOB_COMPLETED = "job.completed"
    JOB_FAILED = "job.failed"
    JOB_CANCELLED = "job.cancelled"

    @property
    def terminal(self) -> bool:
        return self in (EventType.JOB_COMPLETED, EventType.JOB_FAILED, EventType.JOB_CANCELLED)


@dataclass(frozen=True)
class Event:
    type: EventType
    job_id: str
    seq: int
    ts: float
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": str(self.type),
            "job_id": self.job_id,
            "seq": self.seq,
            "ts": self.ts,
            "data": self.data,
        }
