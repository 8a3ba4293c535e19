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
import multiprocessing
import os
import re
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol
from urllib.parse import urlsplit

from ..adapters.local import LocalStores, open_local_stores
from ..fetch import HttpxFetcher
from ..models import CrawledPage, CrawlOptions, EventType, Job, PageRecord
from ..pipeline.crawl import CrawlDeps, crawl_batch
from ..pipeline.finalize import FinalizeDeps, fail, finalize, records_owed
from ..pipeline.jobs import JobDeps, create_job, get_job, resume_job
from ..pipeline.orchestrate import OrchestratorDeps, orchestrate
from ..pipeline.process import ProcessDeps, markdown_cache_key, process_page
from ..pipeline.recover import RecoverDeps, recover_unrecorded
from ..ports import CrawlRequest, CrawlResponse
from ..urls import scope_for, validate_start_url

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


@dataclass(frozen=True)
class RunResult:
    job: Job
    out_dir: Path
    resumed: bool
    pages: int = 0
    words: int = 0
    tokens: int = 0


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
        job = asyncio.run(_crawl(job, stores, root, reporter))
        if job.status.terminal:
            return _result(job, out_dir, resumed, stores)
        _finish(job, stores, out_dir)
        return _result(get_job(job.job_id, stores.jobs), out_dir, resumed, stores)


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


async def _crawl(job: Job, stores: LocalStores, root: Path, reporter: Reporter) -> Job:
    watcher = asyncio.ensure_future(_report(job.job_id, stores, reporter))
    pool: ProcessPoolExecutor | None = None

    def workers() -> ProcessPoolExecutor:
        """The pool, started when a page first needs converting: a re-crawl whose pages
        are all in the markdown cache starts no worker at all."""
        nonlocal pool
        if pool is None:
            pool = _pool(root)
        return pool

    try:
        scope = scope_for(job.url, job.options.include, job.options.exclude)
        async with HttpxFetcher(job.options, scope=scope) as fetcher:
            invoker = LocalInvoker(
                CrawlDeps(fetcher, stores.cache, stores.blobs, stores.clock),
                workers,
                ProcessDeps(stores.blobs, stores.pages, stores.jobs, stores.events, stores.clock),
            )
            for page in recover_unrecorded(
                job.job_id, RecoverDeps(stores.frontier, stores.pages, stores.cache)
            ):
                invoker.process(page)
            deps = OrchestratorDeps(
                stores.jobs, stores.frontier, stores.events, stores.pages, invoker, stores.clock
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


def _pool(root: Path) -> ProcessPoolExecutor:
    workers = os.cpu_count() or 1
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),  # no fork of a threaded process
        initializer=_init_worker,
        initargs=(str(root),),
    )
    for _ in range(workers):  # start them now: their imports overlap the first fetches
        pool.submit(_warm)
    return pool


def _warm() -> None:
    pass


def _finish(job: Job, stores: LocalStores, out_dir: Path) -> None:
    """Process in this process whatever the pool left undone (a worker died), then
    assemble the outputs; fail the job if records are still missing."""
    deps = ProcessDeps(stores.blobs, stores.pages, stores.jobs, stores.events, stores.clock)
    for page in recover_unrecorded(
        job.job_id, RecoverDeps(stores.frontier, stores.pages, stores.cache)
    ):
        process_page(page, deps)
    owed = records_owed(job.job_id, stores.frontier, stores.pages)
    if owed > 0:
        fail(job.job_id, deps, f"{owed} fetched pages could not be converted or recorded")
        return
    _clear_pages(out_dir)
    fin = FinalizeDeps(
        stores.jobs, stores.frontier, stores.pages, stores.blobs, stores.events, stores.clock
    )
    finalize(
        job.job_id, fin, lambda name: _open_output(out_dir, name), lambda name: str(out_dir / name)
    )


def _clear_pages(out_dir: Path) -> None:
    """Page files of an earlier run would linger next to the new ones (other names)."""
    for stale in (out_dir / "pages").glob("*.md"):
        stale.unlink()


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
    return RunResult(
        job, out_dir, resumed, data.get("pages", 0), data.get("words", 0), data.get("tokens", 0)
    )


class LocalInvoker:
    """Invoker in one process: crawl on this event loop, process in the worker pool.

    ``pool`` is the pool or a function making it on first use. With ``inline`` deps, a
    page whose markdown is already in the markdown cache is processed right here (read
    the cached JSON, write the page blob, record it: no conversion, so no worker and no
    pickling of the page there and back)."""

    def __init__(
        self,
        crawl_deps: CrawlDeps,
        pool: ProcessPoolExecutor | Callable[[], ProcessPoolExecutor],
        inline: ProcessDeps | None = None,
    ) -> None:
        self._deps, self._inline = crawl_deps, inline
        self._pool = pool if isinstance(pool, ProcessPoolExecutor) else None
        self._make_pool = None if isinstance(pool, ProcessPoolExecutor) else pool
        self._pending: set[Future[PageRecord]] = set()
        self._broken = False

    async def crawl(self, request: CrawlRequest) -> CrawlResponse:
        return await crawl_batch(request, self._deps)

    def process(self, page: CrawledPage) -> None:
        if self._inline is not None and self._inline.blobs.exists(markdown_cache_key(page)):
            try:
                process_page(page, self._inline)
            except Exception as exc:  # noqa: BLE001 - a store hiccup: the recovery pass retries
                log.warning("processing %s failed: %r", page.url, exc)
            return
        if self._broken:
            return  # left for the recovery pass at the end
        try:
            if self._pool is None:
                assert self._make_pool is not None
                self._pool = self._make_pool()
            future = self._pool.submit(_process_in_worker, page)
        except BrokenProcessPool:
            self._broken = True
            return
        self._pending.add(future)
        future.add_done_callback(self._done)

    def _done(self, future: Future[PageRecord]) -> None:
        self._pending.discard(future)
        if not future.cancelled() and future.exception() is not None:
            log.warning("processing failed in a worker: %r", future.exception())

    async def drain(self) -> None:
        """Wait until every page handed over has been processed."""
        while self._pending:
            await asyncio.wait([asyncio.wrap_future(f) for f in list(self._pending)])


# Each pool worker opens its own stores once, in the initializer; a module global is the
# only place a ProcessPoolExecutor lets per-process state live.
_worker_stores: LocalStores | None = None


def _init_worker(root: str) -> None:
    global _worker_stores
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _worker_stores = open_local_stores(Path(root))


def _process_in_worker(page: CrawledPage) -> PageRecord:
    stores = _worker_stores
    assert stores is not None, "worker used without its initializer"
    deps = ProcessDeps(stores.blobs, stores.pages, stores.jobs, stores.events, stores.clock)
    return process_page(page, deps)
