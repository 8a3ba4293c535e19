"""BufferedCounters: the orchestrator's per-URL counter bumps written with its heartbeat."""

from __future__ import annotations

import pytest
from mdcrawl.adapters.aws.counters import BufferedCounters
from mdcrawl.adapters.aws.stores import aws_stores
from mdcrawl.models import CrawlOptions, Job, JobStatus

from tests.support.aws import moto_clients


@pytest.fixture
def jobs():
    with moto_clients() as aws:
        store = aws_stores(aws.session, aws.names, aws.bucket).jobs
        store.create(Job("j1", "http://docs.test/", CrawlOptions(), status=JobStatus.RUNNING))
        yield store


def test_bumps_are_written_with_the_next_update_and_seen_meanwhile(jobs) -> None:
    buffered = BufferedCounters(jobs)
    for _ in range(5):
        buffered.add_counters("j1", crawled=1, cached=1)
    buffered.add_counters("j1", discovered=7)
    assert jobs.get("j1").counters.crawled == 0  # nothing written yet
    assert buffered.get("j1").counters.crawled == 5  # but readers through it see them
    buffered.update("j1", heartbeat=12.0)
    stored = jobs.get("j1")
    assert (stored.counters.crawled, stored.counters.cached, stored.counters.discovered) == (
        5, 5, 7,
    )
    assert stored.heartbeat == 12.0
    buffered.update("j1", heartbeat=13.0)  # nothing buffered: added once, not twice
    assert jobs.get("j1").counters.crawled == 5


def test_a_transition_writes_the_sums_first(jobs) -> None:
    buffered = BufferedCounters(jobs)
    buffered.add_counters("j1", failed=2)
    assert buffered.transition("j1", [JobStatus.RUNNING], JobStatus.FINALIZING)
    stored = jobs.get("j1")
    assert (stored.status, stored.counters.failed) == (JobStatus.FINALIZING, 2)


def test_unknown_counters_are_refused(jobs) -> None:
    with pytest.raises(ValueError):
        BufferedCounters(jobs).add_counters("j1", pages=1)
