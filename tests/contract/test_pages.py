"""PageStore contract: a page is recorded once, listed in order, kept per job."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from mdcrawl.models import PageStatus

from .builders import page


def test_put_then_get_round_trips_every_field(pages):
    record = page("job-1", "guide", order=3)
    assert pages.put(record) is True
    assert pages.get("job-1", record.url_hash) == record


def test_a_second_put_of_the_same_page_is_refused_and_changes_nothing(pages):
    first = page("job-1", "guide", order=3, title="First")
    pages.put(first)
    assert pages.put(replace(first, title="Second", words=1)) is False
    assert pages.get("job-1", first.url_hash) == first


def test_a_failed_page_round_trips_with_its_reason(pages):
    failed = replace(
        page("job-1", "broken", order=1),
        status=PageStatus.FAILED,
        reason="http_error",
        markdown_key=None,
        nav=(),
        sitemap_rank=None,
        content_hash=None,
    )
    pages.put(failed)
    assert pages.get("job-1", failed.url_hash) == failed


def test_get_unknown_is_none(pages):
    assert pages.get("job-1", "nope") is None


def test_list_is_in_order_and_per_job(pages):
    for path, order in [("c", 7), ("a", 1), ("b", 4)]:
        pages.put(page("job-1", path, order=order))
    pages.put(page("job-2", "a", order=0))
    assert [p.order for p in pages.list("job-1")] == [1, 4, 7]
    assert [p.job_id for p in pages.list("job-2")] == ["job-2"]
    assert pages.list("job-3") == []


@pytest.mark.concurrent
def test_concurrent_puts_of_one_page_let_exactly_one_win(pages):
    record = page("job-1", "guide", order=3)
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda n: pages.put(replace(record, words=n)), range(8)))
    assert results.count(True) == 1
    assert len(pages.list("job-1")) == 1
