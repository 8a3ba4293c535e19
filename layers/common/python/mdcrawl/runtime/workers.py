"""The local invoker and its conversion workers: crawl on the event loop, convert in a
process pool whose workers open their own stores on the same SQLite file."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from ..adapters.local import LocalStores, open_local_stores
from ..models import CrawledPage, PageRecord
from ..pipeline.crawl import CrawlDeps, crawl_batch
from ..pipeline.process import ProcessDeps, job_markdown_cache_key, process_page
from ..ports import CrawlRequest, CrawlResponse

log = logging.getLogger(__name__)

PARENT_CHECK_S = 1.0  # how often a worker looks whether its parent is still alive


def process_pool(root: Path) -> ProcessPoolExecutor:
    workers = os.cpu_count() or 1
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),  # no fork of a threaded process
        initializer=_init_worker,
        initargs=(str(root), os.getpid()),
    )
    for _ in range(workers):  # start them now: their imports overlap the first fetches
        pool.submit(_warm)
    return pool


def _warm() -> None:
    pass


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
        if self._inline is not None and self._cached(page, self._inline):
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

    @staticmethod
    def _cached(page: CrawledPage, deps: ProcessDeps) -> bool:
        return deps.blobs.exists(job_markdown_cache_key(page, deps.blobs, deps.jobs))

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


def _init_worker(root: str, parent: int) -> None:
    global _worker_stores
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    # The parent's pid comes from the parent: a worker still starting up when its parent
    # was killed would otherwise read getppid() == 1 and take init for its parent.
    _exit_with_parent(parent)
    _worker_stores = open_local_stores(Path(root))


def _exit_with_parent(parent: int) -> None:
    """A worker whose parent was killed (kill -9) would wait on its task queue forever:
    spawned workers hold both ends of that pipe, so they never see it close. Watch the
    parent instead, and leave with it (whatever was converted is already recorded)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _process_in_worker(page: CrawledPage) -> PageRecord:
    stores = _worker_stores
    assert stores is not None, "worker used without its initializer"
    deps = ProcessDeps(stores.blobs, stores.pages, stores.jobs, stores.events, stores.clock)
    return process_page(page, deps)
