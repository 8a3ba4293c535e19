"""The laptop's composition root: SQLite + files under a cache folder, all steps in-process.

Fetching runs on asyncio (one shared HttpxFetcher); converting runs in a process pool
(one worker per core, each with its own stores on the same folder), so the two overlap
fully. Resume: the job id follows from (start URL, options, output folder), so the same
command finds its job again after Ctrl-C or kill -9 and carries on from the frontier.
Environment variables are read here and nowhere else in the library.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, Protocol
from urllib.parse import urlsplit

from .. import stored
from ..adapters.local import LocalStores, open_local_stores
from ..adapters.local.chunks import ChunkCache
from ..adapters.local.outputs import FileOutputMemo
from ..adapters.local.parallel import forked_page_map
from ..adapters.local.private import content_cache_for
from ..adapters.local.robots import crawl_robots_cache
from ..adapters.local.sitemaps import crawl_sitemap_cache
from ..assemble import PageMap
from ..fetch import HttpxFetcher
from ..library import Library
from ..library.record import Recorded, kept_chunks, record_crawl
from ..models import CrawlOptions, EventType, Job, JobStatus, PageRecord
from ..native import fetch_twins, probe_site_files, with_native_twins
from ..netguard import AddressGuard, start_guard
from ..pipeline.crawl import CrawlDeps
from ..pipeline.finalize import FinalizeDeps, final_records, finalize, records_owed
from ..pipeline.jobs import JobDeps, create_job, fail, get_job, resume_job
from ..pipeline.orchestrate import OrchestratorDeps, orchestrate
from ..pipeline.process import process_page
from ..pipeline.recover import RecoverDeps, recover_unrecorded
from ..ports import ContentCache
from ..urls import scope_for, url_hash, validate_start_url
from .recorder import LibraryRecorder
from .workers import LocalInvoker, process_deps, process_pool, start_workers

log = logging.getLogger(__name__)
OUT_ROOT = Path("mdcrawl-out")
REPORT_EVERY_S = 0.2


class Reporter(Protocol):
    def update(self, job: Job) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class LocalRun:
    """One `mdcrawl crawl` invocation, as the CLI parsed it."""

    url: str
    options: CrawlOptions
    out_dir: Path | None = None
    cache_dir: Path | None = None
    label: str | None = None  # the version's name in the library (default: detected)
    auth: tuple[str, str] | None = None  # from the URL's user:password@, kept out of the job
    fence: AddressGuard | None = None  # serve's guard (MCP crawls): replaces start_guard


@dataclass(frozen=True)
class RunResult:
    job: Job
    out_dir: Path
    resumed: bool
    pages: int = 0
    words: int = 0
    tokens: int = 0
    recorded: Recorded | None = None  # the library snapshot and what changed
    quality: dict[str, Any] = field(default_factory=dict)  # job.completed's warning sums


def cache_root(cache_dir: Path | None, environ: dict[str, str] | None = None) -> Path:
    """``--cache-dir``, else ``$XDG_CACHE_HOME/mdcrawl``, else ``~/.cache/mdcrawl``."""
    if cache_dir is not None:
        return cache_dir
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mdcrawl"


def default_out_dir(url: str) -> Path:
    """``./mdcrawl-out/<host-and-path>``: one folder per site (and docs version)."""
    parts = urlsplit(url)
    slug = re.sub(r"[^A-Za-z0-9._]+", "-", f"{parts.netloc}{parts.path}").strip("-.")
    return OUT_ROOT / (slug or "site")


def run_key(url: str, options: CrawlOptions, out_dir: Path) -> str:
    """Same command, same key: what makes a re-run find the interrupted job."""
    text = json.dumps([url, options.to_dict(), str(out_dir.resolve())], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_crawl(run: LocalRun, reporter: Reporter) -> RunResult:
    """Crawl (or resume) to completion and write the outputs. InvalidInput for a bad URL;
    KeyboardInterrupt propagates with the state kept for the next run."""
    url = validate_start_url(run.url)
    out_dir = run.out_dir or default_out_dir(url)
    root = cache_root(run.cache_dir)
    root.mkdir(parents=True, exist_ok=True)
    with open_local_stores(root) as stores:
        job, resumed = _find_or_create(url, run.options, out_dir, stores)
        fetching = FetchSetup(run.fence or start_guard(url), run.auth)
        cache = content_cache_for(stores.cache, root, run.auth)  # signed in: its own
        job = asyncio.run(_crawl(job, stores, cache, root, reporter, fetching))
        if job.status.terminal:
            return _result(job, out_dir, resumed, stores)
        if job.options.prefer_native:
            asyncio.run(_native_sources(job, stores, fetching))
        # The library records the crawl while its outputs are assembled (recorder.py),
        # committing only once the job has completed
        recorder = LibraryRecorder(root, out_dir, run.label)
        try:
            _finish(job, stores, cache, out_dir, recorder)
            final = get_job(job.job_id, stores.jobs)

            def here() -> Recorded | None:  # no process recorded it: the pages finalize gave
                return _record(root, final, stores, out_dir, run.label, recorder.records)

            recorded = recorder.finish(final, here)
        finally:
            recorder.abandon()  # interrupted or failed: nothing of the crawl is recorded
        return replace(_result(final, out_dir, resumed, stores), recorded=recorded)


def _find_or_create(
    url: str, options: CrawlOptions, out_dir: Path, stores: LocalStores
) -> tuple[Job, bool]:
    """The latest job of this command if it is unfinished (resume), else a new one."""
    key, deps = run_key(url, options, out_dir), _job_deps(stores)
    number, latest = 1, None
    while (job := stores.jobs.get(f"{key}-{number}")) is not None:
        latest, number = job, number + 1
    if latest is not None and not latest.status.terminal:
        return resume_job(latest.job_id, deps), True
    return create_job(url, options, "local", deps, job_id=f"{key}-{number}"), False


def _job_deps(stores: LocalStores) -> JobDeps:
    return JobDeps(stores.jobs, stores.frontier, stores.events, stores.clock)


@dataclass(frozen=True)
class FetchSetup:
    """How this run's fetcher reaches the site: the address guard (``start_guard``: a
    public start stays on public addresses) and the start URL's credentials."""

    guard: AddressGuard | None = None
    auth: tuple[str, str] | None = None


async def _crawl(
    job: Job,
    stores: LocalStores,
    cache: ContentCache,
    root: Path,
    reporter: Reporter,
    fetching: FetchSetup,
) -> Job:
    watcher = asyncio.ensure_future(_report(job.job_id, stores, reporter))
    pool: ProcessPoolExecutor | None = None

    def workers() -> ProcessPoolExecutor:
        """The pool, started when a page first needs converting: a re-crawl whose pages
        are all in the markdown cache starts no worker at all."""
        nonlocal pool
        if pool is None:
            pool = process_pool(root)
        return pool

    # robots.txt and the sitemap seeds are kept in the cache folder (a re-crawl asks for
    # neither), but not what a crawl with credentials read: a site may answer a signed-in
    # reader otherwise, and a later crawl without them must not inherit it
    kept, now = fetching.auth is None, stores.clock.now
    if cache.get(url_hash(job.url)) is None:
        # A start page the cache has never seen: this crawl converts pages, so the
        # workers' forkserver (an interpreter start and the converter's imports, ~0.4 s)
        # starts now, beside robots.txt and the first fetch, rather than once the first
        # page has arrived. A re-crawl starts it only when a page needs converting.
        start_workers()
    try:
        scope = scope_for(job.url, job.options.include, job.options.exclude)
        async with HttpxFetcher(
            job.options,
            scope=scope,
            guard=fetching.guard,
            auth=fetching.auth,
            robots_cache=crawl_robots_cache(job.options, stores.blobs, now) if kept else None,
            sitemap_cache=crawl_sitemap_cache(job.options, stores.blobs, now) if kept else None,
        ) as fetcher:
            invoker = LocalInvoker(
                CrawlDeps(fetcher, cache, stores.blobs, stores.clock),
                workers,
                process_deps(stores),
            )
            for page in recover_unrecorded(
                job.job_id, RecoverDeps(stores.frontier, stores.pages, cache)
            ):
                invoker.process(page)
            deps = OrchestratorDeps(
                stores.jobs,
                stores.frontier,
                stores.events,
                stores.pages,
                invoker,
                stores.clock,
                stores.db.batch,  # one transaction per batch of outcomes
            )
            await orchestrate(job.job_id, deps, stop_at=float("inf"))
        await invoker.drain()
        # Every page is converted: let the workers exit while the outputs are assembled
        # (joining them first cost ~0.2 s of wall on each run, fresh or cached).
        if pool is not None:
            pool.shutdown(wait=False)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)  # interrupted: stop and join them
        watcher.cancel()
        reporter.update(get_job(job.job_id, stores.jobs))
    return get_job(job.job_id, stores.jobs)


async def _report(job_id: str, stores: LocalStores, reporter: Reporter) -> None:
    while True:
        reporter.update(get_job(job_id, stores.jobs))
        await asyncio.sleep(REPORT_EVERY_S)


def _finish(
    job: Job,
    stores: LocalStores,
    cache: ContentCache,
    out_dir: Path,
    recorder: LibraryRecorder | None = None,
) -> None:
    """Process in this process whatever the pool left undone (a worker died), then
    assemble the outputs; fail the job if records are still missing. ``recorder`` is
    started with the final records before the assembly, and takes a core from it."""
    deps = process_deps(stores)
    for page in recover_unrecorded(job.job_id, RecoverDeps(stores.frontier, stores.pages, cache)):
        process_page(page, deps)
    owed = records_owed(job.job_id, stores.frontier, stores.pages)
    if owed > 0:
        fail(job.job_id, deps, f"{owed} fetched pages could not be converted or recorded")
        return
    fin = _finalize_deps(stores)
    # The memo clears stale page files itself, unless the last assembly of this folder
    # stands as it is (an unchanged re-crawl): then nothing but the manifest is written.
    memo = FileOutputMemo(stores.blobs, out_dir)
    opener = memo.opener(lambda name: _open_output(out_dir, name))
    chunks = ChunkCache(stores.blobs)  # made by the pool workers: no page chunked twice
    locate = lambda name: str(out_dir / name)  # noqa: E731
    # The pool has gone: the pages' rendering takes every core the record does not
    # (adapters/local/parallel.py), each page's file written where it is rendered (the
    # memo learns them from the result)
    pages = lambda name: _open_output(out_dir, name)  # noqa: E731
    page_map = _page_map(recorder)
    ready = recorder.start if recorder is not None else None
    finalize(job.job_id, fin, opener, locate, memo, chunks.lines, page_map, pages, ready)


def _page_map(recorder: LibraryRecorder | None) -> PageMap:
    """Render on every core but the one the library's record takes (if it runs)."""

    def page_map(render: Callable[[int], Any], pages: int) -> Iterator[Any]:
        taken = recorder.cores if recorder is not None else 0
        return forked_page_map(max(1, (os.cpu_count() or 1) - taken))(render, pages)

    return page_map


def _finalize_deps(stores: LocalStores) -> FinalizeDeps:
    return FinalizeDeps(
        stores.jobs, stores.frontier, stores.pages, stores.blobs, stores.events, stores.clock
    )


async def _native_sources(job: Job, stores: LocalStores, fetching: FetchSetup) -> None:
    """--prefer-native: the site's own markdown (native.py): whether it publishes
    llms.txt / llms-full.txt, and the twins of the converted pages. Only when asked: a
    probe is a GET without validators, which a cached re-crawl must not make."""
    scope = scope_for(job.url, job.options.include, job.options.exclude)
    guard, auth = fetching.guard, fetching.auth  # the crawl's own address rule and auth
    async with HttpxFetcher(job.options, scope=scope, guard=guard, auth=auth) as fetcher:
        await probe_site_files(job, fetcher, stores.blobs)
        await fetch_twins(job, stores.pages.list(job.job_id), fetcher, stores.blobs)


def _record(
    root: Path,
    job: Job,
    stores: LocalStores,
    out_dir: Path,
    label: str | None,
    final: list[PageRecord] | None = None,
) -> Recorded | None:
    """A completed crawl joins the docs library (search, MCP) and writes changes.md.
    ``final``: the pages as finalize gave them to the outputs, if it did."""
    if job.status is not JobStatus.COMPLETED:
        return None
    # The pages as the outputs hold them, not each page's first record (converted before
    # the site's template settled: the chrome and title a timing chose). A page settled
    # late is read from the markdown cache a second time here (finalize read it first).
    pages = final
    if pages is None:
        pages = final_records(job.job_id, _finalize_deps(stores))
        if job.options.prefer_native:
            pages = with_native_twins(pages, stores.blobs)
    read = lambda key: stored.read_markdown(stores.blobs, key)  # noqa: E731
    cache = ChunkCache(stores.blobs)
    chunker, version = kept_chunks(cache), stores.blobs.version
    return record_crawl(Library(root), job, pages, read, out_dir, label, chunker, version)


@contextlib.contextmanager
def _open_output(out_dir: Path, name: str) -> Iterator[BinaryIO]:
    path = out_dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as stream:
        yield stream


def _result(job: Job, out_dir: Path, resumed: bool, stores: LocalStores) -> RunResult:
    completed = [
        e
        for e in stores.events.after(job.job_id, 0, limit=100_000)
        if e.type is EventType.JOB_COMPLETED
    ]
    data = completed[-1].data if completed else {}
    quality = {k: data[k] for k in ("pages_with_warnings", "warnings") if k in data}
    return RunResult(
        job,
        out_dir,
        resumed,
        data.get("pages", 0),
        data.get("words", 0),
        data.get("tokens", 0),
        quality=quality,
    )
