"""EventLog contract: seq 1, 2, 3... per job without gaps, replay after a seq."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from mdcrawl.models import EventType


def test_append_numbers_each_job_from_one(events):
    first = events.append("job-1", EventType.JOB_STARTED, {"url": "https://x.org/"}, 10.0)
    second = events.append("job-1", EventType.PAGE_DONE, {"title": "A"}, 11.0)
    other = events.append("job-2", EventType.JOB_STARTED, {}, 12.0)
    assert (first.seq, second.seq, other.seq) == (1, 2, 1)
    assert (second.type, second.job_id, second.ts, second.data) == (
        EventType.PAGE_DONE,
        "job-1",
        11.0,
        {"title": "A"},
    )


def test_after_replays_what_was_appended_oldest_first(events):
    appended = [
        events.append("job-1", EventType.JOB_PROGRESS, {"crawled": n, "nested": {"k": [n]}}, n)
        for n in range(5)
    ]
    assert events.after("job-1") == appended
    assert events.after("job-1", seq=3) == appended[3:]
    assert events.after("job-1", seq=1, limit=2) == appended[1:3]
    assert events.after("job-1", seq=5) == []
    assert events.after("job-9") == []


@pytest.mark.concurrent
def test_concurrent_appenders_leave_no_gap_and_no_duplicate(events):
    def emit(n: int) -> int:
        return events.append("job-1", EventType.PAGE_DONE, {"n": n}, float(n)).seq

    with ThreadPoolExecutor(8) as pool:
        seqs = list(pool.map(emit, range(60)))
    assert sorted(seqs) == list(range(1, 61))
    stored = events.after("job-1")
    assert [e.seq for e in stored] == list(range(1, 61))
    assert sorted(e.data["n"] for e in stored) == list(range(60))
