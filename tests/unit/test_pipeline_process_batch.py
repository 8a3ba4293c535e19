"""A batch of pages in one process step: each page as alone, the counters written once."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from mdcrawl.adapters.local import LocalStores, open_local_stores
from mdcrawl.errors import StoreError
from mdcrawl.models import CrawledPage, CrawlOptions, EventType, Job, PageStatus
from mdcrawl.names import job_key
from mdcrawl.pipeline import templating
from mdcrawl.pipeline.process import ProcessDeps
from mdcrawl.pipeline.process_batch import STOP_MARGIN_S, process_pages
from mdcrawl.template import NO_TEMPLATE_JSON

BODY = b"<html><head><title>T</title></head><body><main><h1>%d</h1><p>%s</p></main></body></html>"


class CountingJobs:
    """The job store, with its counter writes counted."""

    def __init__(self, inner) -> None:
        self.inner, self.writes = inner, []

    def add_counters(self, job_id: str, **deltas: int):
        self.writes.append(deltas)
        return self.inner.add_counters(job_id, **deltas)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


@pytest.fixture
def stores(tmp_path: Path):
    with open_local_stores(tmp_path) as opened:
        opened.jobs.create(Job("j1", "http://docs.test/", CrawlOptions()))
        opened.blobs.put(job_key("j1", templating.TEMPLATE_NAME), NO_TEMPLATE_JSON.encode())
        for n in range(3):
            words = " ".join(["word"] * (n + 2))
            opened.blobs.put(f"cache/bodies/h{n}", BODY % (n, words.encode()))
        yield opened


def pages(count: int = 3) -> list[CrawledPage]:
    return [
        CrawledPage(
            "j1",
            f"http://docs.test/{n}",
            f"u{n}",
            f"http://docs.test/{n}",
            f"h{n}",
            f"cache/bodies/h{n}",
            order=n,
            depth=1,
            from_cache=False,
        )
        for n in range(count)
    ]


def test_each_page_is_recorded_and_announced_in_order_and_counted_in_one_write(
    stores: LocalStores,
) -> None:
    jobs = CountingJobs(stores.jobs)
    deps = ProcessDeps(stores.blobs, stores.pages, jobs, stores.events, stores.clock)
    records = process_pages(pages(), deps)
    assert [r.url_hash for r in records] == ["u0", "u1", "u2"]
    assert all(r.status is PageStatus.OK for r in records)
    words = sum(r.words for r in records)
    assert jobs.writes == [{"processed": 3, "words": words}]
    assert stores.jobs.get("j1").counters.processed == 3
    done = [e for e in stores.events.after("j1") if e.type == EventType.PAGE_DONE]
    assert [e.data["url"] for e in done] == [p.url for p in pages()]


def test_a_redelivered_batch_counts_only_the_pages_not_recorded_before(
    stores: LocalStores,
) -> None:
    deps = ProcessDeps(stores.blobs, stores.pages, stores.jobs, stores.events, stores.clock)
    process_pages(pages(2), deps)
    process_pages(pages(3), deps)
    assert stores.jobs.get("j1").counters.processed == 3
    assert len(stores.events.after("j1")) == 3


def test_a_store_error_mid_batch_still_counts_the_pages_recorded_before_it(
    stores: LocalStores,
) -> None:
    class Failing:
        def __init__(self, inner) -> None:
            self.inner = inner

        def put(self, record):
            if record.url_hash == "u1":
                raise StoreError("throttled")
            return self.inner.put(record)

        def __getattr__(self, name: str):
            return getattr(self.inner, name)

    deps = ProcessDeps(
        stores.blobs, Failing(stores.pages), stores.jobs, stores.events, stores.clock
    )
    with pytest.raises(StoreError):
        process_pages(pages(), deps)
    assert stores.jobs.get("j1").counters.processed == 1
    # Lambda delivers the event again: the rest is recorded, nothing counted twice.
    process_pages(pages(), replace(deps, pages=stores.pages))
    assert stores.jobs.get("j1").counters.processed == 3


def test_a_batch_short_of_time_records_its_first_pages_and_leaves_the_rest(
    stores: LocalStores,
) -> None:
    """Under the stop margin the batch ends early instead of being killed at its timeout:
    the pages left have no record (finalize hands them over again, each alone)."""
    deps = ProcessDeps(stores.blobs, stores.pages, stores.jobs, stores.events, stores.clock)
    left = iter([60.0, STOP_MARGIN_S - 1])  # asked before the 2nd page, then the 3rd
    records = process_pages(pages(), deps, time_left=lambda: next(left))
    assert [r.url_hash for r in records] == ["u0", "u1"]
    assert stores.pages.get("j1", "u2") is None
    assert stores.jobs.get("j1").counters.processed == 2
    # Plenty of time: a later delivery records the rest.
    assert [r.url_hash for r in process_pages(pages(), deps, lambda: 60.0)] == ["u0", "u1", "u2"]
    assert stores.jobs.get("j1").counters.processed == 3


class BatchReadPages:
    """The local page store with a ``get_many`` (as the AWS one has), its reads counted."""

    def __init__(self, inner) -> None:
        self.inner, self.reads = inner, []

    def get(self, job_id: str, url_hash: str):
        self.reads.append("get")
        return self.inner.get(job_id, url_hash)

    def get_many(self, job_id: str, url_hashes: list[str]):
        self.reads.append("get_many")
        return {h: self.inner.get(job_id, h) for h in url_hashes}

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def test_a_store_that_reads_many_is_asked_once_for_the_batchs_records(
    stores: LocalStores,
) -> None:
    store = BatchReadPages(stores.pages)
    deps = ProcessDeps(stores.blobs, store, stores.jobs, stores.events, stores.clock)
    process_pages(pages(2), deps)
    store.reads.clear()
    process_pages(pages(3), deps)  # a redelivery with one more page
    assert store.reads == ["get_many"]
    assert stores.jobs.get("j1").counters.processed == 3  # the recorded two counted once
    assert len(stores.events.after("j1")) == 3
