"""The local job runner: every job is an asyncio task on the server's loop.

Each task does what `mdcrawl crawl` does for one job (runtime.local's pieces): fetch on
this loop, convert in the shared process pool, then finalize into the blob store (not a
folder: results are downloaded through the API). Several jobs run at once; they share
the pool and the content cache. The job's state lives in SQLite, so a server stopped
mid-crawl finds its unfinished jobs on start (``resume_unfinished``) and carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import BinaryIO

from ..adapters.local import LocalStores
from ..adapters.local.robots import crawl_robots_cache
from ..adapters.local.sitemaps import crawl_sitemap_cache
from ..fetch import HttpxFetcher
from ..names import job_key
from ..netguard import AddressGuard
from ..pipeline.crawl import CrawlDeps
from ..pipeline.finalize import FinalizeDeps, finalize, records_owed
from ..pipeline.jobs import JobDeps, fail, get_job, resume_job
from ..pipeline.orchestrate import OrchestratorDeps, orchestrate
from ..pipeline.process import ProcessDeps, process_page
from ..pipeline.recover import RecoverDeps, recover_unrecorded
from ..runtime.workers import (
    LocalInvoker,
    process_pool,  # the CLI's pool: same workers, same setup
)
from ..service.results import PAGES_ZIP
from ..urls import scope_for
from .keys import LOCAL_OWNER

log = logging.getLogger(__name__)
RESUME_SCAN_LIMIT = 100_000


class JobRunner:
    """Starts, runs and resumes crawls; ``start`` is the service's ``JobStarter``."""

    def __init__(self, stores: LocalStores, root: Path, guard: AddressGuard) -> None:
        self.stores, self.root = stores, root
        self.guard = guard  # every request of every job: pages, redirects, robots, sitemaps
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self._pool: ProcessPoolExecutor | None = None

    def start(self, job_id: str) -> bool:
        """Run the job in a task of the running loop; False if it runs already."""
        if job_id in self.tasks:
            return False
        task = asyncio.get_running_loop().create_task(self._run(job_id), name=f"job-{job_id}")
        self.tasks[job_id] = task
        task.add_done_callback(lambda _: self.tasks.pop(job_id, None))
        return True

    def resume_unfinished(self) -> list[str]:
        """Start again every job a previous server left queued, running or finalizing."""
        deps = self._job_deps()
        resumed = []
        for job in self.stores.jobs.list_for_owner(LOCAL_OWNER, RESUME_SCAN_LIMIT):
            if not job.status.terminal and job.job_id not in self.tasks:
                resume_job(job.job_id, deps)
                self.start(job.job_id)
                resumed.append(job.job_id)
        return resumed

    async def close(self) -> None:
        """Stop every crawl where it is (its state stays for the next start)."""
        for task in list(self.tasks.values()):
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    async def _run(self, job_id: str) -> None:
        try:
            await self._crawl(job_id)
            if not get_job(job_id, self.stores.jobs).status.terminal:
                self._finish(job_id)
        except asyncio.CancelledError:
            raise  # the server is stopping: the job resumes on the next start
        except Exception as exc:
            # Recorded, not swallowed: the job ends failed with the reason, and clients
            # following it get a terminal event instead of waiting forever.
            log.exception("job %s crashed", job_id)
            fail(job_id, self._process_deps(), f"internal error: {exc!r}")

    async def _crawl(self, job_id: str) -> None:
        stores, job = self.stores, get_job(job_id, self.stores.jobs)
        scope = scope_for(job.url, job.options.include, job.options.exclude)
        robots = crawl_robots_cache(job.options, stores.blobs, stores.clock.now)
        sitemaps = crawl_sitemap_cache(job.options, stores.blobs, stores.clock.now)
        async with HttpxFetcher(
            job.options,
            scope=scope,
            guard=self.guard,
            robots_cache=robots,
            sitemap_cache=sitemaps,
        ) as fetcher:
            crawl_deps = CrawlDeps(fetcher, stores.cache, stores.blobs, stores.clock)
            invoker = LocalInvoker(crawl_deps, self._workers())
            for page in recover_unrecorded(job_id, self._recover_deps()):
                invoker.process(page)
            deps = OrchestratorDeps(
                stores.jobs, stores.frontier, stores.events, stores.pages, invoker, stores.clock
            )
            await orchestrate(job_id, deps, stop_at=float("inf"))
            await invoker.drain()

    def _finish(self, job_id: str) -> None:
        """Convert here what the pool left undone (a worker died), then assemble."""
        deps = self._process_deps()
        for page in recover_unrecorded(job_id, self._recover_deps()):
            process_page(page, deps)
        owed = records_owed(job_id, self.stores.frontier, self.stores.pages)
        if owed > 0:
            fail(job_id, deps, f"{owed} fetched pages could not be converted or recorded")
            return
        s = self.stores
        fin = FinalizeDeps(s.jobs, s.frontier, s.pages, s.blobs, s.events, s.clock)
        finalize(job_id, fin, self._opener(job_id), lambda name: result_key(job_id, name))

    def _opener(self, job_id: str):  # type: ignore[no-untyped-def]
        @contextlib.contextmanager
        def open_output(name: str) -> Iterator[BinaryIO]:
            with self.stores.blobs.writer(job_key(job_id, name)) as out:
                yield out

        return open_output

    def _workers(self) -> ProcessPoolExecutor:
        """The shared conversion pool, made on first use (and again if a worker died)."""
        if self._pool is None or getattr(self._pool, "_broken", False):
            self._pool = process_pool(self.root)
        return self._pool

    def _job_deps(self) -> JobDeps:
        return JobDeps(
            self.stores.jobs, self.stores.frontier, self.stores.events, self.stores.clock
        )

    def _process_deps(self) -> ProcessDeps:
        s = self.stores
        return ProcessDeps(s.blobs, s.pages, s.jobs, s.events, s.clock)

    def _recover_deps(self) -> RecoverDeps:
        return RecoverDeps(self.stores.frontier, self.stores.pages, self.stores.cache)


def result_key(job_id: str, name: str) -> str:
    """Where each output is recorded: the page files are downloaded as one zip."""
    return job_key(job_id, PAGES_ZIP if name.endswith("/") else name)
