"""The orchestrator: drives one job's frontier through the crawl step until it drains.

Outcomes are applied in discovery order (``order``), not in the order fetches happen to
finish: the links a page adds to the frontier get the next ``order`` numbers, and the
reading order falls back on those numbers, so applying a cache hit's links before a slow
fetch's would make the output depend on timing (a crawl resumed after a kill, or run
again with a warm cache, differed from the first). A finished fetch waits until every
URL claimed before it has been applied; fetching goes on meanwhile.

Called once per run (locally with ``stop_at`` = the job's deadline; on AWS once per
Lambda invocation with ``stop_at`` below the Lambda timeout). The frontier is the
checkpoint, so a run may stop anywhere and the next one carries on. Returns
``"continue"`` (call again), ``"finalize"`` (every URL settled, or the budget ran out)
or ``"done"`` (the job ended: cancelled, failed, or already over).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass

from ..models import EventType, FrontierItem, Job, JobStatus, UrlState
from ..ports import (
    Clock,
    CrawlOutcome,
    CrawlRequest,
    CrawlResponse,
    EventLog,
    Frontier,
    Invoker,
    JobStore,
    PageStore,
    iter_chunks,
)
from ..urls import scope_for
from .counting import SummedCounters
from .jobs import fail, get_job
from .outcomes import OutcomePorts, RunState, apply_outcome, overflow_room_left, release

log = logging.getLogger(__name__)

CONTINUE, FINALIZE, DONE = "continue", "finalize", "done"


@dataclass(frozen=True)
class OrchestratorDeps:
    jobs: JobStore
    frontier: Frontier
    events: EventLog
    pages: PageStore
    invoker: Invoker
    clock: Clock
    # One transaction for the writes of a batch of outcomes (locally: ``Database.batch``;
    # all of them or none, so a kill still leaves the previous state or the next).
    batch: Callable[[], AbstractContextManager[object]] = nullcontext


@dataclass(frozen=True)
class Tuning:
    lease_s: float = 300.0  # longer than any crawl call (timeouts x retries)
    max_attempts: int = 3  # crawl attempts per URL before it fails for good
    in_flight_per_slot: int = 2  # URLs in flight per unit of concurrency
    batch_per_slot: float = 0.5  # URLs per crawl call per unit of concurrency
    tick_s: float = 0.25  # how often cancel, heartbeat and progress are looked at
    progress_every_s: float = 1.0
    # A crawl call still running this long after the deadline is cut (see _cut_overdue).
    budget_grace_s: float = 5.0


async def orchestrate(
    job_id: str, deps: OrchestratorDeps, stop_at: float, tuning: Tuning | None = None
) -> str:
    job = get_job(job_id, deps.jobs)
    if job.status.terminal:
        return DONE
    if job.status is JobStatus.FINALIZING:
        return FINALIZE
    job = _start(job, deps)
    if job.status is not JobStatus.RUNNING:
        return DONE if job.status.terminal else FINALIZE
    return await _Engine(job, deps, tuning or Tuning()).run(stop_at)


def _start(job: Job, deps: OrchestratorDeps) -> Job:
    """queued -> running, once: the budget starts now."""
    if job.status is JobStatus.QUEUED:
        now = deps.clock.now()
        deadline = now + job.options.budget_s
        if deps.jobs.transition(
            job.job_id,
            [JobStatus.QUEUED],
            JobStatus.RUNNING,
            started_at=now,
            deadline=deadline,
            heartbeat=now,
        ):
            data = {"url": job.url, "options": job.options.to_dict(), "deadline": deadline}
            deps.events.append(job.job_id, EventType.JOB_STARTED, data, now)
    return get_job(job.job_id, deps.jobs)


class _Engine:
    """One run's loop: claim, crawl concurrently, apply outcomes, watch the clock."""

    def __init__(self, job: Job, deps: OrchestratorDeps, tuning: Tuning) -> None:
        self.deps, self.tuning = deps, tuning
        known = {item.url_hash for item in deps.frontier.items(job.job_id)}
        scope = scope_for(job.url, job.options.include, job.options.exclude)
        room = overflow_room_left(deps.frontier.overflow(job.job_id))
        self.state = RunState(job, scope, known, discovered=len(known), overflow_room=room)
        self.tasks: dict[asyncio.Task[CrawlResponse], tuple[FrontierItem, ...]] = {}
        # Finished crawl calls waiting for every URL claimed before theirs (see above).
        self.finished: list[tuple[tuple[FrontierItem, ...], asyncio.Task[CrawlResponse]]] = []
        self.stop: str | None = None  # why claiming stopped: cancel, budget, stop_at, failed
        self.last_progress = 0.0
        self.job, self.job_read_at = job, 0.0
        self.summed: SummedCounters | None = None  # inside a batch of outcomes (_batch)

    @property
    def job_id(self) -> str:
        return self.state.job.job_id

    async def run(self, stop_at: float) -> str:
        try:
            while True:
                self._watch(stop_at)
                if self.stop == "budget":
                    self._cut_overdue()
                self._apply_and_claim()
                if not self.tasks:
                    if self.stop is not None or self._drained():
                        break
                    await asyncio.sleep(self.tuning.tick_s)  # others' leases: wait them out
                    continue
                await self._collect()
        finally:
            for task in self.tasks:  # only when this coroutine itself is cancelled
                task.cancel()
        return self._conclude()

    def _watch(self, stop_at: float) -> None:
        now = self.deps.clock.now()
        job = self._fresh_job(now)
        if self.state.start_error:
            self.stop = "failed"
        elif job.cancel_requested:
            self.stop = self.stop or "cancel"
        elif job.deadline is not None and now >= job.deadline:
            self.stop = self.stop or "budget"
        elif now >= stop_at:
            self.stop = self.stop or "stop_at"
        if now - self.last_progress >= self.tuning.progress_every_s:
            self._progress(job, now)

    def _fresh_job(self, now: float) -> Job:
        """The stored job, read at most once a tick (cancel requests arrive there)."""
        if now - self.job_read_at >= self.tuning.tick_s:
            self.job, self.job_read_at = get_job(self.job_id, self.deps.jobs), now
        return self.job

    def _progress(self, job: Job, now: float) -> None:
        self.last_progress = now
        self.deps.jobs.update(self.job_id, heartbeat=now)
        data = {
            "counters": job.counters.to_dict(),
            "elapsed": now - (job.started_at or now),
            "budget": job.options.budget_s,
            "in_flight": sum(len(items) for items in self.tasks.values()),
        }
        self.deps.events.append(self.job_id, EventType.JOB_PROGRESS, data, now)

    def _apply_and_claim(self) -> None:
        """The finished outcomes that may be applied, then the next claim, in one batch
        (one transaction locally): a batch's outcomes and the leases that replace them
        rewrite the same frontier, counter and event pages, which one commit writes once
        (two commits per batch wrote ~6 WAL pages per crawled page on 2,400 rustdoc
        pages). A kill loses at most the new leases, which a resume gives back anyway."""
        room = self._room() if self.stop is None else 0
        if not self.finished and not room:
            return  # no transaction for nothing to write
        with self._batch():
            self._apply_in_order()
            if self.state.start_error:  # the start URL failed: nothing more to claim
                self.stop = "failed"
            elif room:
                self._claim(room)

    def _room(self) -> int:
        """How many URLs to claim now: 0 while the room left is less than a crawl call's
        batch (claim in batches, not one URL at a time)."""
        options = self.state.job.options
        room = options.concurrency * self.tuning.in_flight_per_slot - sum(
            len(items) for items in self.tasks.values()
        )
        if room < self._batch_size() and self.tasks:
            return 0
        return max(room, 0)

    def _batch_size(self) -> int:
        return max(1, int(self.state.job.options.concurrency * self.tuning.batch_per_slot))

    def _claim(self, room: int) -> None:
        options = self.state.job.options
        batch = self._batch_size()
        now = self.deps.clock.now()
        items = self.deps.frontier.claim(self.job_id, room, self.tuning.lease_s, now)
        # A URL that comes back after a failed attempt goes alone: if its batch crashed
        # the crawler, batch-mates must not keep sharing (and spending) its attempts.
        fresh = [item for item in items if item.attempts == 0]
        retried = [(item,) for item in items if item.attempts > 0]
        for chunk in [*iter_chunks(fresh, batch), *retried]:
            request = CrawlRequest(
                self.job_id, self.state.scope, options, tuple(chunk), self.state.job.deadline
            )
            self.tasks[asyncio.ensure_future(self.deps.invoker.crawl(request))] = tuple(chunk)

    def _cut_overdue(self) -> None:
        """The fetcher ends every request and wait at the deadline; a crawl call still
        running ``budget_grace_s`` after it (a crawler without the deadline, a wait outside
        the fetcher) is cancelled, and its URLs fail with reason ``timeout``: the budget
        is kept, and each of them has its line in the manifest."""
        deadline = self.state.job.deadline
        if deadline is None or self.deps.clock.now() < deadline + self.tuning.budget_grace_s:
            return
        with self._batch():
            ports = self._ports()
            for task, items in list(self.tasks.items()):
                task.cancel()
                del self.tasks[task]
                for item in items:
                    detail = f"{item.url}: still running when the crawl's time budget ended"
                    cut = CrawlOutcome(item.url_hash, UrlState.FAILED, "timeout", detail=detail)
                    apply_outcome(self.state, item, cut, ports)
            self._apply_in_order()

    def _drained(self) -> bool:
        now = self.deps.clock.now()
        self.deps.frontier.reclaim_expired(self.job_id, now, self.tuning.max_attempts)
        counts = self.deps.frontier.counts(self.job_id)
        return counts[UrlState.PENDING] == 0 and counts[UrlState.LEASED] == 0

    async def _collect(self) -> None:
        done, _ = await asyncio.wait(
            self.tasks, timeout=self.tuning.tick_s, return_when=asyncio.FIRST_COMPLETED
        )
        for task in done:
            self.finished.append((self.tasks.pop(task), task))
        # Applied by the next ``_apply_and_claim``, in one transaction with its claim.

    def _apply_in_order(self) -> None:
        """Apply the finished URLs that no URL still in flight precedes, lowest first."""
        in_flight = [item.order for items in self.tasks.values() for item in items]
        first_in_flight = min(in_flight, default=None)
        ready: list[tuple[FrontierItem, asyncio.Task[CrawlResponse]]] = []
        kept = []
        for items, task in self.finished:
            for item in items:
                if first_in_flight is None or item.order < first_in_flight:
                    ready.append((item, task))
                else:
                    kept.append(((item,), task))
        self.finished = kept
        for item, task in sorted(ready, key=lambda pair: pair[0].order):
            self._apply((item,), task)

    def _apply(self, items: tuple[FrontierItem, ...], task: asyncio.Task[CrawlResponse]) -> None:
        ports = self._ports()
        error = task.exception()
        if error is not None:  # the crawler itself failed (a Lambda error): retry its URLs
            log.warning("crawl call failed for %d urls: %r", len(items), error)
            for item in items:
                release(self.state, item, "crawler_error", repr(error), ports)
            return
        outcomes = {o.url_hash: o for o in task.result().outcomes}
        for item in items:
            outcome = outcomes.get(item.url_hash)
            if outcome is None:
                release(self.state, item, "no_outcome", "", ports)
            else:
                apply_outcome(self.state, item, outcome, ports)

    @contextmanager
    def _batch(self) -> Iterator[None]:
        """One batch of outcomes: ``deps.batch()`` (one transaction locally), the counter
        bumps of all its outcomes summed and written once at its end (two statements a
        page before), also when it raises, as each bump was written at once before."""
        with self.deps.batch():
            self.summed = SummedCounters(self.deps.jobs)
            try:
                yield
            finally:
                summed, self.summed = self.summed, None
                summed.flush()

    def _ports(self) -> OutcomePorts:
        d = self.deps
        return OutcomePorts(
            self.summed or d.jobs,
            d.frontier,
            d.events,
            d.pages,
            d.invoker,
            self.tuning.max_attempts,
            d.clock.now(),
        )

    def _conclude(self) -> str:
        job, now = get_job(self.job_id, self.deps.jobs), self.deps.clock.now()
        self._progress(job, now)
        if self.stop == "failed":
            fail(self.job_id, self.deps, self.state.start_error or "the start URL failed")
            return DONE
        if self.stop == "cancel":
            return self._cancel(now)
        # Every run's, a killed one's too: the frontier keeps them with their outcomes.
        left = self.deps.frontier.overflow(self.job_id)
        if self.stop == "stop_at":
            if left:
                self.deps.jobs.update(self.job_id, truncated=True, left=left)
            return CONTINUE
        return self._to_finalizing(job, left)

    def _to_finalizing(self, job: Job, left: int) -> str:
        counts = self.deps.frontier.counts(self.job_id)
        unsettled = counts[UrlState.PENDING] + counts[UrlState.LEASED]
        truncated = job.truncated or left > 0 or unsettled > 0
        self.deps.jobs.transition(
            self.job_id,
            [JobStatus.RUNNING],
            JobStatus.FINALIZING,
            truncated=truncated,
            left=left + unsettled,
            heartbeat=self.deps.clock.now(),
        )
        return FINALIZE

    def _cancel(self, now: float) -> str:
        """Stop here, but announce ``job.cancelled`` only from finalize: pages already
        handed to the process step may still emit ``page.done``, and no event may follow
        a terminal one."""
        self.deps.jobs.transition(
            self.job_id, [JobStatus.RUNNING], JobStatus.FINALIZING, heartbeat=now
        )
        return FINALIZE
