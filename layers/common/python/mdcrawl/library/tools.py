"""What the MCP tools do, without MCP: crawl into the library, list, search, read, and
look after crawl jobs. ``mcp_server.py`` wraps each method in a tool (stdio, and HTTP
inside ``serve``); the CLI and tests can call them directly.

Every failure the caller can act on is a ``MdcrawlError`` with a message written for the
agent that will read it (unknown URL, unknown job, bad start URL…).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..adapters.local import open_local_stores
from ..errors import CrawlFailed, InvalidInput
from ..models import CrawlOptions, Job, JobStatus
from ..options import OptionLimits, Profile
from ..pipeline.jobs import JobDeps, cancel_job, get_job
from ..runtime.local import LocalRun, RunResult, default_out_dir, run_crawl
from .store import Library

OUTPUTS_DIR = "library-out"  # under the cache folder: where crawls asked for by agents go
DEFAULT_LIMIT, MAX_LIMIT = 5, 50


@dataclass(frozen=True)
class CrawlRequest:
    url: str
    max_pages: int | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    label: str | None = None


class _Progress:
    """A ``runtime.local.Reporter`` that forwards each change of the counters."""

    def __init__(self, send: Callable[[Job], None]) -> None:
        self._send = send
        self._last: tuple[int, ...] | None = None

    def update(self, job: Job) -> None:
        c = job.counters
        now = (c.discovered, c.crawled, c.processed, c.failed)
        if now != self._last:
            self._last = now
            self._send(job)

    def close(self) -> None:
        pass


class DocsTools:
    """The library in ``root`` (the cache folder) and crawls into it. ``check_url`` (serve's
    host allow-list) vets every start URL before a crawl; ``page_cap`` is the server's page
    cap (``mdcrawl serve --max-pages``; served without one: the serve profile's)."""

    def __init__(
        self,
        root: Path,
        check_url: Callable[[str], None] | None = None,
        page_cap: int | None = None,
    ) -> None:
        self.root = root
        self.library = Library(root)
        self._check_url = check_url  # serve's host allow-list; raises InvalidInput
        if page_cap is None and check_url is not None:
            page_cap = int(OptionLimits.of(Profile.SERVE).caps["max_pages"])
        self._page_cap = page_cap

    def crawl(self, request: CrawlRequest, progress: Callable[[Job], None]) -> dict[str, object]:
        options = CrawlOptions(
            max_pages=self._max_pages(request.max_pages),
            include=tuple(request.include),
            exclude=tuple(request.exclude),
        )
        if self._check_url is not None:
            self._check_url(request.url)
        out_dir = self.root / OUTPUTS_DIR / default_out_dir(request.url).name
        # serve's StartUrlCheck carries its AddressGuard: every request of the crawl obeys it.
        fence = getattr(self._check_url, "guard", None)
        run = LocalRun(request.url, options, out_dir, self.root, request.label, fence=fence)
        result = run_crawl(run, _Progress(progress))
        return crawl_summary(result)

    def _max_pages(self, asked: int | None) -> int:
        """The CLI's default on stdio; served to others (serve's /mcp, which passes
        ``check_url``), the hosted page cap, as POST /jobs has it: no unbounded crawl."""
        cap = self._page_cap
        default = min(CrawlOptions.max_pages, cap) if cap is not None else CrawlOptions.max_pages
        pages = asked if asked is not None else default
        if pages < 1:
            raise InvalidInput("max_pages must be at least 1")
        if cap is not None and pages > cap:
            raise InvalidInput(f"max_pages must be at most {cap} on this server")
        return pages

    def list_docs(self) -> list[dict[str, object]]:
        return [s.to_dict() for s in self.library.snapshots()]

    def search(
        self, query: str, site: str | None, version: str | None, limit: int | None
    ) -> list[dict[str, object]]:
        if not query.strip():
            raise InvalidInput("the query is empty")
        count = min(max(limit or DEFAULT_LIMIT, 1), MAX_LIMIT)
        hits = self.library.search(query, site, version, count)
        keys = ("site", "version", "title", "heading_path", "url", "anchor", "link", "text")
        return [{k: h.to_dict()[k] for k in keys} for h in hits]

    def read_page(self, url: str, section: str | None) -> dict[str, str]:
        page = self.library.read_page(url, section)
        if page is None:
            what = f"no section {section!r} in {url}" if section else f"no page {url}"
            raise InvalidInput(f"{what} in the library (list_docs shows what is there)")
        return {"url": page.url, "title": page.title, "markdown": page.markdown}

    def get_job(self, job_id: str) -> dict[str, object]:
        with open_local_stores(self.root) as stores:
            return job_summary(get_job(job_id, stores.jobs))

    def cancel_job(self, job_id: str) -> dict[str, object]:
        with open_local_stores(self.root) as stores:
            deps = JobDeps(stores.jobs, stores.frontier, stores.events, stores.clock)
            return job_summary(cancel_job(job_id, deps))


def job_summary(job: Job) -> dict[str, object]:
    return {
        "job_id": job.job_id,
        "url": job.url,
        "status": str(job.status),
        "counters": job.counters.to_dict(),
        "truncated": job.truncated,
        "error": job.error,
        "cancel_requested": job.cancel_requested,
    }


def crawl_summary(result: RunResult) -> dict[str, object]:
    job = result.job
    if job.status is not JobStatus.COMPLETED:
        raise CrawlFailed(f"the crawl {job.job_id} ended {job.status}: {job.error or 'no output'}")
    recorded = result.recorded
    return {
        "job_id": job.job_id,
        "site": recorded.snapshot.site if recorded else None,
        "version": recorded.snapshot.version if recorded else None,
        "pages": result.pages,
        "tokens": result.tokens,
        "out_dir": str(result.out_dir),
        "changes": recorded.changes.to_dict() if recorded else None,
        "warnings": warnings(result),
    }


def warnings(result: RunResult) -> Sequence[str]:
    job, c = result.job, result.job.counters
    found = []
    if job.truncated:
        found.append(f"truncated by the budget or page cap: {job.left} URLs left")
    if c.failed:
        found.append(f"{c.failed} URLs failed (see manifest.jsonl)")
    if result.pages == 0:
        found.append("no page was converted")
    return found
