"""What the API logic needs, as ports and small callables chosen by a composition root.

Creating, starting and cancelling a job are passed in as callables rather than
imported: the pipeline owns those rules (``pipeline.jobs``), the runtime binds them to
its stores (``functools.partial``), and the start differs per runtime (Step Functions
with execution name = job id on AWS, a local task runner in ``mdcrawl serve``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ..models import CrawlOptions, Job
from ..ports import BlobStore, Clock, ConnectionStore, EventLog, JobStore, PageStore, Pusher
from .models import ServiceLimits


class JobCreator(Protocol):
    def __call__(self, url: str, options: CrawlOptions, owner: str, job_id: str) -> Job:
        """Validate, store and seed a job (``pipeline.jobs.create_job`` bound to its deps).
        Raises errors.InvalidInput for a bad URL, errors.Conflict if the id exists."""
        ...


class JobCanceller(Protocol):
    def __call__(self, job_id: str) -> Job:
        """Request a cancel; returns the job after it. Raises errors.Conflict if terminal."""
        ...


class JobStarter(Protocol):
    def __call__(self, job_id: str) -> bool:
        """Start the crawl; idempotent (False: it was already started)."""
        ...


class UrlChecker(Protocol):
    def __call__(self, url: str) -> object:
        """Raise errors.InvalidInput / errors.UnsafeUrl for a URL the service must refuse
        (``AddressGuard.check_url`` in hosted mode, after DNS resolution)."""
        ...


@dataclass(frozen=True)
class ApiDeps:
    jobs: JobStore
    pages: PageStore
    events: EventLog
    blobs: BlobStore
    clock: Clock
    create_job: JobCreator
    cancel_job: JobCanceller
    start_job: JobStarter
    check_url: UrlChecker
    limits: ServiceLimits = field(default_factory=ServiceLimits)


@dataclass(frozen=True)
class WsDeps:
    jobs: JobStore
    events: EventLog
    connections: ConnectionStore
    pusher: Pusher
    clock: Clock
    max_message_bytes: int = 32 * 1024
