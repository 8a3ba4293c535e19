"""The process step: idempotent records, counters and events; the markdown cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from mdcrawl.adapters.local import LocalStores, open_local_stores
from mdcrawl.models import CrawledPage, CrawlOptions, EventType, Job, PageStatus
from mdcrawl.names import job_key
from mdcrawl.pipeline import process, templating
from mdcrawl.pipeline.process import ProcessDeps, process_page
from mdcrawl.template import NO_TEMPLATE_JSON

BODY = (
    b"<html><head><title>T</title></head>"
    b"<body><main><h1>Hello</h1><p>one two three</p></main></body></html>"
)


@pytest.fixture
def stores(tmp_path: Path):
    with open_local_stores(tmp_path) as opened:
        for job_id in ("j1", "j2"):
            opened.jobs.create(Job(job_id, "http://docs.test/", CrawlOptions()))
            settled(opened, job_id)  # else a page no rule recognises waits for finalize
        opened.blobs.put("cache/bodies/h1", BODY)
        yield opened


def settled(stores: LocalStores, job_id: str) -> None:
    """The job's template has settled (on none: the site needs none)."""
    stores.blobs.put(job_key(job_id, templating.TEMPLATE_NAME), NO_TEMPLATE_JSON.encode())


def page(job_id: str = "j1", body_key: str = "cache/bodies/h1") -> CrawledPage:
    return CrawledPage(
        job_id,
        "http://docs.test/",
        "u1",
        "http://docs.test/",
        "h1",
        body_key,
        order=0,
        depth=0,
        from_cache=False,
    )


def deps(stores: LocalStores) -> ProcessDeps:
    return ProcessDeps(stores.blobs, stores.pages, stores.jobs, stores.events, stores.clock)


def test_a_redelivered_page_counts_once(stores: LocalStores) -> None:
    first = process_page(page(), deps(stores))
    again = process_page(page(), deps(stores))
    assert first == again and first.status is PageStatus.OK and first.words > 0
    assert stores.jobs.get("j1").counters.processed == 1
    assert [e.type for e in stores.events.after("j1")] == [EventType.PAGE_DONE]
    assert b"Hello" in stores.blobs.get(first.markdown_key)


def test_unchanged_page_is_not_converted_twice(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    process_page(page("j1"), deps(stores))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("converted again")

    monkeypatch.setattr(process, "convert_html", refuse)
    record = process_page(page("j2"), deps(stores))
    assert record.status is PageStatus.OK and record.title


def test_conversion_error_is_a_failed_record_not_an_exception(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("bad html")

    monkeypatch.setattr(process, "convert_html", broken)
    record = process_page(page(), deps(stores))
    assert (record.status, record.reason) == (PageStatus.FAILED, "conversion_error")
    assert stores.jobs.get("j1").counters.processed == 1
    assert [e.type for e in stores.events.after("j1")] == [EventType.PAGE_FAILED]


def test_missing_body_is_a_failed_record(stores: LocalStores) -> None:
    record = process_page(page(body_key="cache/bodies/nothing"), deps(stores))
    assert (record.status, record.reason) == (PageStatus.FAILED, "body_missing")
