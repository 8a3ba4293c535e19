"""What the API logic needs: ports, plus two callables chosen by a composition root.

Creating and cancelling a job follow ``pipeline.jobs`` (the one implementation of those
rules) over these ports. Starting one differs per runtime and is passed in: Step
Functions with execution name = job id on AWS, a local task runner in ``mdcrawl serve``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ..pipeline.jobs import JobDeps
from ..ports import (
    BlobStore,
    Clock,
    ConnectionStore,
    EventLog,
    Frontier,
    JobStore,
    PageStore,
    Pusher,
)
from .models import ServiceLimits


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
    frontier: Frontier
    pages: PageStore
    events: EventLog
    blobs: BlobStore
    clock: Clock
    start_job: JobStarter
    check_url: UrlChecker
    limits: ServiceLimits = field(default_factory=ServiceLimits)

    @property
    def job_deps(self) -> JobDeps:
        return JobDeps(self.jobs, self.frontier, self.events, self.clock)


@dataclass(frozen=True)
class WsDeps:
    jobs: JobStore
    events: EventLog
    connections: ConnectionStore
    pusher: Pusher
    clock: Clock
    max_message_bytes: int = 32 * 1024
