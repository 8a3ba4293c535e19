"""The local invoker and its conversion workers: crawl on the event loop, convert in a
process pool whose workers open their own stores on the same SQLite file."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path

from .. import stored
from ..adapters.local import FileBlobStore, LocalStores, open_local_stores
from ..adapters.local.chunks import ChunkCache
from ..agent_outputs import page_markdown
from ..models import CrawledPage, FetchResult, FrontierItem, PageRecord, PageStatus
from ..pipeline import templating
from ..pipeline.crawl import CrawlDeps, crawl_batch
from ..pipeline.fetching import body_key
from ..pipeline.process import ProcessDeps, needs_no_converter, process_page
from ..pipeline.reading import Fetched, read_fetched
from ..ports import CrawlRequest, CrawlResponse

log = logging.getLogger(__name__)

PARENT_CHECK_S = 1.0  # how often a worker looks whether its parent is still alive
WARM_URL = "http://127.0.0.1/"


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

    ``pool`` is the pool or a function making it on first use. A page fetched from the
    network is read by a worker (``pipeline/reading.py``): its body stored, its links
    and its markdown from one parse. With ``inline`` deps and no pool running yet, a
    page whose markdown is already in the markdown cache is read and processed right
    here (no conversion, so no worker: a re-crawl of an unchanged site starts none)."""

    def __init__(
        self,
        crawl_deps: CrawlDeps,
        pool: ProcessPoolExecutor | Callable[[], ProcessPoolExecutor],
        inline: ProcessDeps | None = None,
    ) -> None:
        reader = crawl_deps.reader or self._read
        self._deps, self._inline = replace(crawl_deps, reader=reader), inline
        self._pool = pool if isinstance(pool, ProcessPoolExecutor) else None
        self._make_pool = None if isinstance(pool, ProcessPoolExecutor) else pool
        self._pending: set[Future[PageRecord]] = set()
        self._ready: Future[None] | None = None  # done once a worker has started
        self._broken = False

    async def crawl(self, request: CrawlRequest) -> CrawlResponse:
        return await crawl_batch(request, self._deps)

    async def _read(
        self, request: CrawlRequest, item: FrontierItem, result: FetchResult, final_url: str
    ) -> tuple[str, tuple[str, ...]] | None:
        """The page read by a worker; None (read on this side) when no worker is needed
        or none can be had."""
        fetched = Fetched(
            request.job_id,
            item,
            final_url,
            result.body,
            result.headers.get("content-type", "text/html"),
            result.encoding,
        )
        if self._pool is None and self._inline is not None and self._converted(fetched):
            return None
        pool = self._ensure_pool()
        if pool is None or self._ready is None or not self._ready.done():
            return None  # workers still starting (spawn, imports): no page waits for them
        try:
            return await asyncio.wrap_future(pool.submit(_read_in_worker, fetched))
        except BrokenProcessPool:
            self._broken = True
        except Exception as exc:  # noqa: BLE001 - a store hiccup in the worker: read here
            log.warning("reading %s in a worker failed: %r", final_url, exc)
        return None

    def _converted(self, fetched: Fetched) -> bool:
        """Is this fetch's markdown already cached (then no worker is needed for it)?"""
        assert self._inline is not None
        content_hash = hashlib.sha256(fetched.body).hexdigest()
        page = CrawledPage(
            fetched.job_id,
            fetched.item.url,
            fetched.item.url_hash,
            fetched.final_url,
            content_hash,
            body_key(content_hash),
            fetched.item.order,
            fetched.item.depth,
            from_cache=False,
            encoding=fetched.encoding,
        )
        return self._cached(page, self._inline)

    def _ensure_pool(self) -> ProcessPoolExecutor | None:
        if self._broken:
            return None
        if self._pool is None:
            assert self._make_pool is not None
            self._pool = self._make_pool()
        if self._ready is None:
            self._ready = self._pool.submit(_warm)
        return self._pool

    def process(self, page: CrawledPage) -> None:
        # Inline only while no pool runs: once workers exist, recording a page (a blob
        # copy, three writes) is their work, not the event loop's.
        if self._pool is None and self._inline is not None and self._cached(page, self._inline):
            try:
                process_page(page, self._inline)
            except Exception as exc:  # noqa: BLE001 - a store hiccup: the recovery pass retries
                log.warning("processing %s failed: %r", page.url, exc)
            return
        try:
            pool = self._ensure_pool()
            if pool is None:
                return  # left for the recovery pass at the end
            future = pool.submit(_process_in_worker, page)
        except BrokenProcessPool:
            self._broken = True
            return
        self._pending.add(future)
        future.add_done_callback(self._done)

    @staticmethod
    def _cached(page: CrawledPage, deps: ProcessDeps) -> bool:
        return needs_no_converter(page, deps)

    def _done(self, future: Future[PageRecord]) -> None:
        self._pending.discard(future)
        if not future.cancelled() and future.exception() is not None:
            log.warning("processing failed in a worker: %r", future.exception())

    async def drain(self) -> None:
        """Wait until every page handed over has been processed."""
        while self._pending:
            await asyncio.wait([asyncio.wrap_future(f) for f in list(self._pending)])


# Each pool worker opens its own stores once, in the initializer; a module global is the
# only place a ProcessPoolExecutor lets per-process state live. Its ProcessDeps too: they
# keep what the worker learnt of each job (``process.JobFacts``) from page to page.
_worker_stores: LocalStores | None = None
_worker_deps: ProcessDeps | None = None


def _init_worker(root: str, parent: int) -> None:
    global _worker_stores, _worker_deps
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    # The parent's pid comes from the parent: a worker still starting up when its parent
    # was killed would otherwise read getppid() == 1 and take init for its parent.
    _exit_with_parent(parent)
    _worker_stores = open_local_stores(Path(root))
    _worker_deps = process_deps(_worker_stores)
    _warm_up()


def _warm_up() -> None:
    """What the first page would pay for, paid before it arrives: readability (imported
    lazily by the extractor) and the generator rules' selectors, compiled once."""
    import readability  # noqa: F401

    from ..convert import convert_html

    convert_html(b"<html><head><title>warm</title></head><body><p>up</p></body></html>", WARM_URL)


def _exit_with_parent(parent: int) -> None:
    """A worker whose parent was killed (kill -9) would wait on its task queue forever:
    spawned workers hold both ends of that pipe, so they never see it close. Watch the
    parent instead, and leave with it (whatever was converted is already recorded)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def process_deps(stores: LocalStores) -> ProcessDeps:
    """The process step's ports in the local runtime. A record points at the markdown
    cache's document (``job_copy=False``, as on AWS): the markdown is in the cache anyway,
    so a copy per job only cost two file writes a page, fresh or cached, and the disk
    space of the whole site on every re-crawl. A page's record, counters and event go in
    one SQLite transaction."""
    s = stores
    batch = s.db.batch
    return ProcessDeps(s.blobs, s.pages, s.jobs, s.events, s.clock, job_copy=False, batch=batch)


def _read_in_worker(fetched: Fetched) -> tuple[str, tuple[str, ...]]:
    deps = _worker_deps
    assert deps is not None, "worker used without its initializer"
    return read_fetched(fetched, deps)


def _process_in_worker(page: CrawledPage) -> PageRecord:
    stores, deps = _worker_stores, _worker_deps
    assert stores is not None and deps is not None, "worker used without its initializer"
    record = process_page(page, deps)
    _chunk(record, stores.blobs)
    return record


def _chunk(record: PageRecord, blobs: FileBlobStore) -> None:
    """The page's chunks, made here, in parallel with the crawl, for finalize's
    chunks.jsonl and the library alike (``adapters/local/chunks.py``). A page still
    waiting for the site's template is chunked when finalize converts it."""
    if record.status is not PageStatus.OK or record.template == templating.DEFERRED:
        return
    markdown = stored.read_markdown(blobs, record.markdown_key or "")
    title = record.title or record.url
    ChunkCache(blobs).prepare(record.url, title, page_markdown(record, markdown))
