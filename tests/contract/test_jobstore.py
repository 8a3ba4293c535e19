"""JobStore contract: create once, guarded transitions, atomic counters, owner listing."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from mdcrawl.errors import JobNotFound
from mdcrawl.models import Counters, JobStatus

from .builders import job


def test_create_then_get_round_trips_every_attribute(jobstore):
    original = job()
    assert jobstore.create(original) is True
    assert jobstore.get("job-1") == original


def test_create_refuses_an_existing_id_and_keeps_the_first(jobstore):
    jobstore.create(job())
    assert jobstore.create(job(owner="mallory")) is False
    assert jobstore.get("job-1").owner == "alice"


def test_get_unknown_is_none(jobstore):
    assert jobstore.get("nope") is None


def test_transition_from_an_allowed_status_sets_fields_in_the_same_write(jobstore):
    jobstore.create(job())
    moved = jobstore.transition(
        "job-1", {JobStatus.QUEUED}, JobStatus.RUNNING, started_at=5.0, deadline=305.0
    )
    stored = jobstore.get("job-1")
    assert moved is True
    assert (stored.status, stored.started_at, stored.deadline) == (JobStatus.RUNNING, 5.0, 305.0)


def test_transition_from_another_status_is_refused_and_writes_nothing(jobstore):
    jobstore.create(job())
    jobstore.transition("job-1", [JobStatus.QUEUED], JobStatus.CANCELLED)
    moved = jobstore.transition(
        "job-1", [JobStatus.QUEUED, JobStatus.RUNNING], JobStatus.COMPLETED, error="late"
    )
    stored = jobstore.get("job-1")
    assert moved is False
    assert (stored.status, stored.error) == (JobStatus.CANCELLED, None)


def test_transition_of_an_unknown_job_is_refused(jobstore):
    assert jobstore.transition("nope", [JobStatus.QUEUED], JobStatus.RUNNING) is False
    assert jobstore.get("nope") is None


@pytest.mark.concurrent
def test_only_one_of_two_racing_transitions_wins(jobstore):
    jobstore.create(job())
    targets = [JobStatus.COMPLETED, JobStatus.CANCELLED] * 4
    with ThreadPoolExecutor(8) as pool:
        results = list(
            pool.map(lambda to: jobstore.transition("job-1", [JobStatus.QUEUED], to), targets)
        )
    assert results.count(True) == 1


def test_update_sets_attributes_and_keeps_the_rest(jobstore):
    jobstore.create(job())
    jobstore.update("job-1", heartbeat=42.0, truncated=True, left=7, result_keys={"a": "b"})
    stored = jobstore.get("job-1")
    assert (stored.heartbeat, stored.truncated, stored.left) == (42.0, True, 7)
    assert stored.result_keys == {"a": "b"}
    assert (stored.status, stored.url) == (JobStatus.QUEUED, "https://docs.example.com/")


def test_update_does_not_move_the_status(jobstore):
    jobstore.create(job())
    with pytest.raises(ValueError):
        jobstore.update("job-1", status=JobStatus.COMPLETED)
    assert jobstore.get("job-1").status == JobStatus.QUEUED


def test_update_refuses_counters_and_unknown_attributes(jobstore):
    jobstore.create(job())
    with pytest.raises(ValueError):
        jobstore.update("job-1", counters=Counters(crawled=3))
    with pytest.raises(ValueError):
        jobstore.update("job-1", colour="blue")


def test_update_of_an_unknown_job_raises_and_creates_nothing(jobstore):
    with pytest.raises(JobNotFound):
        jobstore.update("nope", heartbeat=1.0)
    assert jobstore.get("nope") is None


def test_add_counters_returns_the_totals_after_the_addition(jobstore):
    jobstore.create(job())
    jobstore.add_counters("job-1", crawled=2, words=100)
    after = jobstore.add_counters("job-1", crawled=1, failed=1)
    assert after == Counters(crawled=3, failed=1, words=100)
    assert jobstore.get("job-1").counters == after


def test_add_counters_refuses_unknown_counters_and_unknown_jobs(jobstore):
    jobstore.create(job())
    with pytest.raises(ValueError):
        jobstore.add_counters("job-1", bogus=1)
    with pytest.raises(JobNotFound):
        jobstore.add_counters("nope", crawled=1)


@pytest.mark.concurrent
def test_counters_lose_no_increment_under_concurrent_writers(jobstore):
    jobstore.create(job())

    def bump(_: int) -> None:
        jobstore.add_counters("job-1", processed=1, words=10)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(bump, range(80)))
    assert jobstore.get("job-1").counters == Counters(processed=80, words=800)


def test_counters_survive_status_transitions_and_updates(jobstore):
    jobstore.create(job())
    jobstore.add_counters("job-1", crawled=5)
    jobstore.transition("job-1", [JobStatus.QUEUED], JobStatus.RUNNING, heartbeat=1.0)
    jobstore.update("job-1", left=2)
    assert jobstore.get("job-1").counters == Counters(crawled=5)


def test_list_for_owner_is_newest_first_and_only_theirs(jobstore):
    for index, created in enumerate([300.0, 100.0, 200.0]):
        jobstore.create(job(f"a-{index}", owner="alice", created_at=created))
    jobstore.create(job("b-0", owner="bob", created_at=400.0))
    listed = jobstore.list_for_owner("alice")
    assert [j.job_id for j in listed] == ["a-0", "a-2", "a-1"]
    assert [j.job_id for j in jobstore.list_for_owner("alice", limit=2)] == ["a-0", "a-2"]
    assert jobstore.list_for_owner("carol") == []
