"""The local invoker and its conversion workers: crawl on the event loop, convert in a
process pool whose workers open their own stores on the same SQLite file."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from multiprocessing import forkserver
from multiprocessing.connection import wait
from multiprocessing.context import ForkServerContext, ForkServerProcess
from pathlib import Path

from .. import stored
from ..adapters.local import FileBlobStore, LocalStores, open_local_stores
from ..adapters.local.chunks import ChunkCache
from ..agent_outputs import page_markdown
from ..models import CrawledPage, FetchResult, FrontierItem, PageRecord, PageStatus
from ..pipeline import templating
from ..pipeline.crawl import CrawlDeps, crawl_batch
from ..pipeline.process import ProcessDeps, at_hand, needs_no_converter, process_page
from ..pipeline.reading import Fetched, Read, crawled, read_fetched
from ..ports import CrawlOutcome, CrawlRequest, CrawlResponse

log = logging.getLogger(__name__)

PARENT_CHECK_S = 1.0  # how often a worker looks whether its parent is still alive
WORKER_START_S = 60.0  # a page waits this long at most for the workers to start
FORKSERVER_EXIT_S = 5.0  # how long this process waits at exit for its forkserver to go
WARM_URL = "http://127.0.0.1/"
# A start page up to this size is read for its links here while the forkserver starts
# (see ``_started_pool``); a bigger one waits for a worker: its tree (~10 times its
# HTML) would stay in this process's heap for the whole crawl (a 5.7 MB start page:
# +56 MB of peak RSS).
START_READ_HERE_BYTES = 1024 * 1024


# Loaded once by the forkserver, inherited by every worker it forks (``workerboot.py``).
WORKER_PRELOAD = ["mdcrawl.runtime.workerboot"]


def process_pool(root: Path) -> ProcessPoolExecutor:
    """The conversion pool. Its workers are forked, on demand, by a forkserver that has
    imported the converter once (``start_workers``): each costs a fork, not a fresh
    interpreter that imports the CLI (as ``__mp_main__``), the converter and warms up.
    Creating it starts nothing; its first ``submit`` waits for the forkserver, so an
    event loop submits only once ``start_workers()`` is done (``LocalInvoker``)."""
    start_workers()
    return ProcessPoolExecutor(
        max_workers=os.cpu_count() or 1,
        mp_context=_CONTEXT,
        initializer=_init_worker,
        initargs=(str(root), os.getpid()),
    )


class _WorkerProcess(ForkServerProcess):
    """A forkserver process launched without the parent's ``__main__``: the worker would
    otherwise run the parent's main script again (the ``mdcrawl`` console script imports
    the whole CLI) before its first task; its functions all live in this package."""

    @staticmethod
    def _Popen(process_obj):  # type: ignore[no-untyped-def]  # noqa: N802 - the stdlib's name
        with _main_hidden():
            return ForkServerProcess._Popen(process_obj)


class _WorkerContext(ForkServerContext):
    Process = _WorkerProcess  # type: ignore[assignment]


_CONTEXT = _WorkerContext()
_main_lock = threading.Lock()


@contextlib.contextmanager
def _main_hidden() -> Iterator[None]:
    """``__main__`` as a bare module while a worker is launched: multiprocessing sends a
    new process the main script's path (or module name) to import, and a bare module
    has neither. One launch at a time, so two never restore each other's stand-in."""
    with _main_lock:
        main = sys.modules["__main__"]
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            sys.modules["__main__"] = main


_started: Future[None] | None = None
_start_lock = threading.Lock()


def start_workers() -> Future[None]:
    """Start this process's forkserver, once, in a thread (it takes an interpreter start
    and the converter's imports, ~0.4 s of CPU, which must not hold an event loop): the
    future is done when it forks workers at once. Idempotent."""
    global _started
    with _start_lock:
        if _started is None:
            _started = Future()
            _CONTEXT.set_forkserver_preload(WORKER_PRELOAD)
            threading.Thread(target=_start_forkserver, args=(_started,), daemon=True).start()
            atexit.register(_stop_forkserver)
        return _started


def forkserver_running() -> bool:
    """Whether this process's forkserver has started (a crawl that converted pages): a
    process forked from it costs a fork (``recorder.py``), not a start."""
    started = _started
    return started is not None and started.done() and started.exception() is None


def recorder_context() -> ForkServerContext:
    """The context that forks processes from the workers' forkserver."""
    return _CONTEXT


def _start_forkserver(done: Future[None]) -> None:
    try:
        probe = _CONTEXT.Process(target=_nothing, name="mdcrawl-forkserver-probe")
        probe.start()  # returns once the forkserver has loaded WORKER_PRELOAD and forked
        probe.join()
        done.set_result(None)
    except BaseException as exc:  # noqa: BLE001 - the invoker reads here instead
        done.set_exception(exc)


def _nothing() -> None:
    pass


def _stop_forkserver() -> None:
    """At exit, stop the forkserver and reap it: no process outlives the crawl, and its
    CPU and its workers' (which it reaped) count as this process's children's, as
    spawned workers' did (what ``bench/proc.py`` measures). It leaves once every
    worker has (each holds its "alive" pipe): a worker stuck past FORKSERVER_EXIT_S is
    left behind rather than holding this process. (The stdlib's own ``_stop`` waits
    without a limit: this is it with one.)"""
    server = forkserver._forkserver  # the stdlib's one forkserver per process
    pid, alive = server._forkserver_pid, server._forkserver_alive_fd
    if pid is None or alive is None:
        return
    os.close(alive)  # the server leaves when no one holds this pipe open any more
    server._forkserver_alive_fd = None
    deadline = time.monotonic() + FORKSERVER_EXIT_S
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == 0:
                time.sleep(0.01)
                continue
        server._forkserver_pid = None
        return


class LocalInvoker:
    """Invoker in one process: crawl on this event loop, process in the worker pool.

    ``pool`` is the pool or a function making it on first use. A page fetched from the
    network is read by a worker (``pipeline/reading.py``): its body stored, its links
    and its markdown from one parse, and its record when that is all the process step
    would do (``crawl`` hands it over with the outcome: no process step). With
    ``inline`` deps and no pool running yet, a page whose markdown is already in the
    markdown cache is read and processed right here (no conversion, so no worker: a
    re-crawl of an unchanged site starts none)."""

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
        self._waiting: list[CrawledPage] = []  # handed over while the workers start
        self._starting: Future[None] | None = None  # the forkserver, once asked for
        self._broken = False
        self.read_here = 0  # fetched pages read on this side (the workers not started)
        # The record a worker's read answered (``reading.Read.record``) per URL of the
        # batches in flight, with the page it was made for.
        self._read_records: dict[str, tuple[CrawledPage, PageRecord]] = {}

    async def crawl(self, request: CrawlRequest) -> CrawlResponse:
        try:
            response = await crawl_batch(request, self._deps)
        finally:
            read = {h: self._read_records.pop(h, None) for h in [i.url_hash for i in request.items]}
        outcomes = tuple(_with_record(o, read.get(o.url_hash)) for o in response.outcomes)
        return replace(response, outcomes=outcomes)

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
        if pool is None and (item.depth > 0 or len(result.body) > START_READ_HERE_BYTES):
            pool = await self._started_pool()  # all but a start page of modest size
        if pool is not None:
            try:
                read: Read = await asyncio.wrap_future(pool.submit(_read_in_worker, fetched))
                if read.record is not None:  # ``crawl`` hands it over with the outcome
                    page = crawled(fetched, read.content_hash)
                    self._read_records[fetched.item.url_hash] = (page, read.record)
                return read.content_hash, read.links
            except BrokenProcessPool:
                self._broken = True
            except Exception as exc:  # noqa: BLE001 - a store hiccup in the worker: read here
                log.warning("reading %s in a worker failed: %r", final_url, exc)
        self.read_here += 1
        return None

    async def _started_pool(self) -> ProcessPoolExecutor | None:
        """The pool once its forkserver is up (within WORKER_START_S). A page fetched
        meanwhile waits for it rather than being parsed here for its links and again in
        a worker for its markdown: the workers, not the fetches, bound a fresh crawl,
        and they start with the pages that waited. All but the start page (up to
        START_READ_HERE_BYTES): nothing else can be fetched before its links are known,
        so it is read here for them (~10 ms) and converted by a worker later; the crawl
        fans out while the forkserver is still starting (Django docs at 20 ms: its
        second request 0.29 s after launch, not 0.52)."""
        if self._starting is None or self._broken:
            return None
        started = asyncio.shield(asyncio.wrap_future(self._starting))
        with contextlib.suppress(Exception):  # failed or late: _ensure_pool tells which
            await asyncio.wait_for(started, WORKER_START_S)
        return self._ensure_pool()

    def _converted(self, fetched: Fetched) -> bool:
        """Is this fetch's markdown already cached (then no worker is needed for it)?"""
        assert self._inline is not None
        page = crawled(fetched, hashlib.sha256(fetched.body).hexdigest())
        return self._cached(page, self._inline)

    def _ensure_pool(self) -> ProcessPoolExecutor | None:
        """The pool, once its forkserver forks workers at once; None meanwhile (the
        forkserver is asked for here, on the first page that needs a worker) or when
        no pool can be had."""
        if self._broken:
            return None
        if self._starting is None:
            self._starting = start_workers()
            loop = asyncio.get_running_loop()
            self._starting.add_done_callback(lambda _: _soon(loop, self._started))
        if not self._starting.done():
            return None
        if self._starting.exception() is not None:
            log.warning("the conversion workers did not start: %r", self._starting.exception())
            self._broken = True
            return None
        if self._pool is None:
            assert self._make_pool is not None
            self._pool = self._make_pool()
        return self._pool

    def _started(self) -> None:
        """The forkserver is up: the pages handed over meanwhile go to the workers."""
        waiting, self._waiting = self._waiting, []
        for page in waiting:
            self._submit(page)

    def process(self, page: CrawledPage) -> None:
        # Inline only while no pool runs: once workers exist, recording a page (a blob
        # copy, three writes) is their work, not the event loop's.
        if self._pool is None and self._inline is not None:
            try:
                enough, cached = at_hand(page, self._inline)
                if enough:
                    process_page(page, self._inline, cached=cached)
                    return
            except Exception as exc:  # noqa: BLE001 - a store hiccup: the recovery pass retries
                log.warning("processing %s failed: %r", page.url, exc)
                return
        self._submit(page)

    def _submit(self, page: CrawledPage) -> None:
        """The page's process step, in a worker (kept until the forkserver is up)."""
        try:
            pool = self._ensure_pool()
            if pool is None:
                if not self._broken:
                    self._waiting.append(page)  # submitted when the forkserver is up
                return  # broken: left for the recovery pass at the end
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
        if self._starting is not None and self._waiting:
            with contextlib.suppress(Exception):  # a failed start: the recovery pass
                await asyncio.wrap_future(self._starting)
            self._ensure_pool()
            self._started()
        while self._pending:
            await asyncio.wait([asyncio.wrap_future(f) for f in list(self._pending)])


def _with_record(
    outcome: CrawlOutcome, read: tuple[CrawledPage, PageRecord] | None
) -> CrawlOutcome:
    """The outcome carrying the record its page's read answered: the orchestrator
    records it (``outcomes.hand_over``) and hands the page to no process step. Only
    for the very page the record was made for (a fetch the reader saw through)."""
    if read is None or outcome.page is None or outcome.record is not None:
        return outcome
    page, record = read
    return replace(outcome, record=record) if outcome.page == page else outcome


def _soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
    """``callback`` on ``loop``, from another thread; nothing if the loop has closed (an
    interrupted crawl: its pages are left for the recovery pass)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(callback)


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


def warm_up() -> None:
    """What the first page would pay for, paid before it arrives: readability (imported
    lazily by the extractor) and the generator rules' selectors, compiled once. Run by
    the forkserver (``workerboot.py``), so forked workers inherit it."""
    import readability  # noqa: F401

    from ..convert import convert_html

    convert_html(b"<html><head><title>warm</title></head><body><p>up</p></body></html>", WARM_URL)


def _exit_with_parent(parent: int) -> None:
    """A worker whose parent was killed (kill -9) would wait on its task queue forever:
    workers hold both ends of that pipe, so they never see it close. Watch the parent
    instead, and leave with it (whatever was converted is already recorded). A pool's
    worker watches its multiprocessing parent's sentinel (a forked worker's own parent
    is the forkserver, which outlives nobody); anything else, its parent's pid."""

    def watch() -> None:
        sentinel = _parent_sentinel(parent)
        if sentinel is not None:
            wait([sentinel])  # ready when the parent's end of the pipe closes: it died
        else:
            while os.getppid() == parent:
                time.sleep(PARENT_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _parent_sentinel(parent: int) -> int | None:
    process = multiprocessing.parent_process()
    if process is None or process.pid != parent:
        return None
    return process.sentinel


def process_deps(stores: LocalStores) -> ProcessDeps:
    """The process step's ports in the local runtime. A record points at the markdown
    cache's document (``job_copy=False``, as on AWS): the markdown is in the cache anyway,
    so a copy per job only cost two file writes a page, fresh or cached, and the disk
    space of the whole site on every re-crawl. A page's record, counters and event go in
    one SQLite transaction."""
    s = stores
    batch = s.db.batch
    return ProcessDeps(s.blobs, s.pages, s.jobs, s.events, s.clock, job_copy=False, batch=batch)


def _read_in_worker(fetched: Fetched) -> Read:
    stores, deps = _worker_stores, _worker_deps
    assert stores is not None and deps is not None, "worker used without its initializer"

    def chunk(record: PageRecord, markdown: str) -> None:
        try:
            _chunk(record, stores.blobs, markdown)
        except Exception as exc:  # noqa: BLE001 - the read stands: finalize chunks it
            log.warning("chunking %s failed: %r", record.url, exc)

    return read_fetched(fetched, deps, chunk)


def _process_in_worker(page: CrawledPage) -> PageRecord:
    stores, deps = _worker_stores, _worker_deps
    assert stores is not None and deps is not None, "worker used without its initializer"
    record = process_page(page, deps)
    _chunk(record, stores.blobs)
    return record


def _chunk(record: PageRecord, blobs: FileBlobStore, markdown: str | None = None) -> None:
    """The page's chunks, made here, in parallel with the crawl, for finalize's
    chunks.jsonl and the library alike (``adapters/local/chunks.py``). A page still
    waiting for the site's template is chunked when finalize converts it. ``markdown``:
    the record's, when the caller has it at hand (else read back from its key)."""
    if record.status is not PageStatus.OK or record.template == templating.DEFERRED:
        return
    if markdown is None:
        markdown = stored.read_markdown(blobs, record.markdown_key or "")
    title = record.title or record.url
    ChunkCache(blobs).prepare(record.url, title, page_markdown(record, markdown))
