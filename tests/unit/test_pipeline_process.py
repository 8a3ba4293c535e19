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


def test_without_a_job_copy_the_record_points_at_the_cache_document(
    stores: LocalStores, tmp_path: Path
) -> None:
    """AWS keeps no copy per job: the record names the markdown cache's document, so a
    second job over the same page writes no markdown at all."""
    from dataclasses import replace

    from mdcrawl.stored import read_markdown

    lean = replace(deps(stores), job_copy=False)
    first = process_page(page("j1"), lean)
    assert first.markdown_key and first.markdown_key.startswith("cache/markdown/")
    assert read_markdown(stores.blobs, first.markdown_key).startswith("# Hello")
    assert not list(tmp_path.rglob("j1/pages/*"))
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    second = process_page(page("j2"), lean)
    assert second.markdown_key == first.markdown_key
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == written


def test_a_cached_record_is_the_record_the_process_step_writes(stores: LocalStores) -> None:
    """``cached_record`` (the AWS crawler's record of a cached page) equals what
    ``process_page`` without a job copy records for the same page in another job, and
    is None where the page would need converting or waits for the template."""
    state = templating.load("j1", stores.blobs)
    assert process.cached_record(page("j1"), stores.blobs, state, True) is None  # not cached
    no_copy = ProcessDeps(
        stores.blobs, stores.pages, stores.jobs, stores.events, stores.clock, job_copy=False
    )
    process_page(page("j1"), no_copy)  # converted: cached now
    cached = process.cached_record(page("j2"), stores.blobs, state, True)
    assert cached is not None and cached == process_page(page("j2"), no_copy)
    # A job whose template has not settled: a page no generator rule recognises waits.
    unsettled = templating.JobTemplate(settled=False)
    assert process.cached_record(page("j2"), stores.blobs, unsettled, True) is None
    assert process.cached_record(page("j2"), stores.blobs, unsettled, False) is None


def test_the_cached_document_is_the_json_of_every_field_of_the_converted_page() -> None:
    """The markdown cache's document, written without ``asdict``: the same bytes as
    ``json.dumps(asdict(page), ensure_ascii=False)`` wrote, and read back whole."""
    import json
    from dataclasses import asdict

    from mdcrawl.models import ConvertedPage

    page = ConvertedPage(
        title="Straße — «guide»",
        markdown="# Straße\n\nText with \"quotes\", a tab\t and \u2028 a separator.\n",
        words=7,
        nav=("http://h/a.html", "http://h/b.html"),
        description="ünïcode",
        quality=0.75,
        extractor="rule:sphinx",
        anchors={"top": ("", 0), "straße": ("Straße", 1), "x": ("Text `x`", 2)},
    )
    data = process._to_json(page)
    assert data == json.dumps(asdict(page), ensure_ascii=False).encode("utf-8")
    assert process._from_json(data) == _anchors_as_lists(page)


def _anchors_as_lists(page):
    """JSON gives a tuple back as a list: the anchors' values come back as lists."""
    from dataclasses import replace

    return replace(page, anchors={k: list(v) for k, v in page.anchors.items()})
