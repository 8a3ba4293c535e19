"""Job lifecycle outside the crawl loop: create (validate + seed), cancel, resume."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Protocol

from ..errors import JobNotFound
from ..models import CrawlOptions, EventType, FrontierItem, Job, JobStatus
from ..ports import Clock, EventLog, Frontier, JobStore
from ..urls import url_hash, validate_start_url

# A lease held by a worker that is certainly dead is given back without counting
# as one of the URL's attempts: the page did nothing wrong.
NO_ATTEMPT_CAP = 1_000_000


@dataclass(frozen=True)
class JobDeps:
    jobs: JobStore
    frontier: Frontier
    events: EventLog
    clock: Clock


def create_job(
    url: str,
    options: CrawlOptions,
    owner: str,
    deps: JobDeps,
    job_id: str | None = None,
    webhook: str | None = None,
) -> Job:
    """Validate the URL (InvalidInput), store a queued job and seed its frontier.

    With an explicit ``job_id`` that already exists, the stored job is returned
    unchanged: a retried request does not create a second crawl.
    """
    start = validate_start_url(url)
    job = Job(
        job_id=job_id or uuid.uuid4().hex,
        url=start,
        options=options,
        owner=owner,
        created_at=deps.clock.now(),
        webhook=webhook,
    )
    if not deps.jobs.create(job):
        return get_job(job.job_id, deps.jobs)
    seed(job, deps.jobs, deps.frontier)
    return get_job(job.job_id, deps.jobs)


def seed(job: Job, jobs: JobStore, frontier: Frontier) -> None:
    """The start URL, depth 0 (its crawl also brings back the sitemap's URLs)."""
    added = frontier.add(job.job_id, [FrontierItem(url=job.url, url_hash=url_hash(job.url))])
    if added:
        jobs.add_counters(job.job_id, discovered=len(added))


def get_job(job_id: str, jobs: JobStore) -> Job:
    job = jobs.get(job_id)
    if job is None:
        raise JobNotFound(f"no job {job_id}")
    return job


def cancel_job(job_id: str, deps: JobDeps) -> Job:
    """Ask a running job to stop (the orchestrator honours it); a queued one stops now."""
    job = get_job(job_id, deps.jobs)
    if job.status.terminal:
        return job
    deps.jobs.update(job_id, cancel_requested=True)
    if deps.jobs.transition(
        job_id, [JobStatus.QUEUED], JobStatus.CANCELLED, finished_at=deps.clock.now()
    ):
        deps.events.append(job_id, EventType.JOB_CANCELLED, {}, deps.clock.now())
    return get_job(job_id, deps.jobs)


def resume_job(job_id: str, deps: JobDeps) -> Job:
    """Prepare a job whose process died (kill -9, Ctrl-C) to run again in a new one.

    Every lease goes back to pending (no worker of the old process survives), and the
    deadline moves so that the budget left at the last heartbeat is available again.
    """
    job = get_job(job_id, deps.jobs)
    deps.frontier.reclaim_expired(job_id, float("inf"), NO_ATTEMPT_CAP)
    now = deps.clock.now()
    if job.deadline is not None:
        last_seen = job.heartbeat or job.started_at or now
        deps.jobs.update(job_id, deadline=now + max(job.deadline - last_seen, 0.0))
    return get_job(job_id, deps.jobs)


class LifecycleDeps(Protocol):
    jobs: JobStore
    events: EventLog
    clock: Clock


def fail(job_id: str, deps: LifecycleDeps, error: str) -> bool:
    """Mark a job failed (from any non-terminal status) and say why, once."""
    now = deps.clock.now()
    active = [s for s in JobStatus if not s.terminal]
    if not deps.jobs.transition(job_id, active, JobStatus.FAILED, finished_at=now, error=error):
        return False
    deps.events.append(job_id, EventType.JOB_FAILED, {"error": error}, now)
    return True
