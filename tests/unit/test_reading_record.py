"""A worker's read of a fetched page answers the page's record when the process step
would only record what the read converted: then the page needs no second trip to a
worker. It answers none where the process step has more to do (settle the template,
defer the page, record a failure)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from mdcrawl.adapters.local import LocalStores, open_local_stores
from mdcrawl.models import CrawlOptions, FrontierItem, Job, PageStatus, UrlState
from mdcrawl.names import job_key
from mdcrawl.pipeline import reading, templating
from mdcrawl.pipeline.process import ProcessDeps, process_page
from mdcrawl.pipeline.reading import Fetched, read_fetched
from mdcrawl.ports import CrawlOutcome
from mdcrawl.runtime.workers import _with_record

URL = "http://docs.test/guide/"
BODY = b"<html><head><title>T</title></head><body><main><h1>Hi</h1><p>a b</p></main></body></html>"
# A page a generator rule (rustdoc's) recognises: no template changes its markdown.
RULED = (Path(__file__).parents[1] / "fixtures/pages/rustdoc/book-traits.html").read_bytes()


@pytest.fixture
def stores(tmp_path: Path):
    with open_local_stores(tmp_path) as opened:
        opened.jobs.create(Job("j1", URL, CrawlOptions()))
        yield opened


def _fetched(body: bytes = BODY, order: int = 0) -> Fetched:
    item = FrontierItem(url=URL, url_hash="u1", depth=1, order=order)
    return Fetched("j1", item, URL, body, "text/html", None)


def _deps(stores: LocalStores) -> ProcessDeps:
    s = stores
    return ProcessDeps(s.blobs, s.pages, s.jobs, s.events, s.clock, job_copy=False)


def _settle(stores: LocalStores) -> None:
    stores.blobs.put(job_key("j1", templating.TEMPLATE_NAME), templating.NO_TEMPLATE_JSON.encode())


def test_a_page_read_once_the_template_settled_comes_with_the_record_process_would_write(
    stores: LocalStores,
) -> None:
    _settle(stores)
    heard: list[str] = []
    read = read_fetched(_fetched(), _deps(stores), lambda _, markdown: heard.append(markdown))
    assert read.record is not None and read.record.status is PageStatus.OK
    assert heard and "# Hi" in heard[0]  # the worker chunks it from the markdown at hand
    page = reading.crawled(_fetched(), read.content_hash)
    assert process_page(page, _deps(stores)) == read.record


def test_a_page_read_again_from_the_markdown_cache_comes_with_its_record(
    stores: LocalStores,
) -> None:
    _settle(stores)
    first = read_fetched(_fetched(), _deps(stores))
    again = read_fetched(_fetched(), _deps(stores))
    assert again.record == first.record and again.record is not None


def test_no_record_while_the_page_may_complete_the_templates_sample(
    stores: LocalStores,
) -> None:
    early = read_fetched(_fetched(RULED), _deps(stores))
    assert early.record is None  # the process step records it and settles the template
    late = read_fetched(_fetched(RULED, order=templating.SETTLE_WINDOW), _deps(stores))
    assert late.record is not None and late.record.template == templating.ANY


def test_no_record_for_a_page_that_waits_for_the_template_or_failed(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits = read_fetched(_fetched(order=templating.SETTLE_WINDOW), _deps(stores))
    assert waits.record is None  # no rule recognises it: the process step defers it
    _settle(stores)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("converter bug")

    monkeypatch.setattr(reading, "convert_document", broken)
    assert read_fetched(_fetched(), _deps(stores)).record is None  # its failure recorded


def test_the_crawl_outcome_carries_the_record_only_for_the_page_it_was_made_for(
    stores: LocalStores,
) -> None:
    _settle(stores)
    read = read_fetched(_fetched(), _deps(stores))
    assert read.record is not None
    page = reading.crawled(_fetched(), read.content_hash)
    outcome = CrawlOutcome("u1", UrlState.DONE, page=page)
    assert _with_record(outcome, (page, read.record)).record == read.record
    other = replace(outcome, page=replace(page, content_hash="another body"))
    assert _with_record(other, (page, read.record)).record is None  # process step then


def test_a_page_no_rule_recognises_is_parsed_once_its_wait_noted_by_the_read(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdcrawl.pipeline import process

    read = read_fetched(_fetched(), _deps(stores))  # BODY: plain <main>, no generator
    assert read.record is None

    def parse_again(*_: object) -> bool:
        raise AssertionError("the process step parsed a body the read had parsed")

    monkeypatch.setattr(process, "depends_on_template", parse_again)
    record = process_page(reading.crawled(_fetched(), read.content_hash), _deps(stores))
    assert record.template == templating.DEFERRED  # deferred, as the parse would have said


def test_a_ruled_page_leaves_no_wait_note(stores: LocalStores) -> None:
    from mdcrawl.pipeline import process

    read = read_fetched(_fetched(RULED), _deps(stores))
    page = reading.crawled(_fetched(RULED), read.content_hash)
    assert not stores.blobs.exists(process._waits_key(page))


def test_a_ruled_page_read_before_and_after_a_template_settled_names_one_cache_document(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule's conversion is kept under the key of no template whatever the job's
    template (``process.conversion_key``): read before a template settled and again
    after, the page names the same document, and the second read converts nothing."""
    from mdcrawl.convert import learn_template
    from mdcrawl.template import SAMPLE_SIZE

    from tests.support.templated_site import page_html

    late = templating.SETTLE_WINDOW  # past the sample's window: the read answers a record
    before = read_fetched(_fetched(RULED, order=late), _deps(stores))
    template = learn_template([(page_html(n).encode(), None) for n in range(SAMPLE_SIZE)], True)
    assert template is not None
    stores.blobs.put(job_key("j1", templating.TEMPLATE_NAME), template.to_json().encode())

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("converted again")

    monkeypatch.setattr(reading, "_links_and_markdown", refuse)
    after = read_fetched(_fetched(RULED, order=late), _deps(stores))  # new deps: settled now
    assert before.record is not None and after.record is not None
    assert before.record.markdown_key == after.record.markdown_key
    assert after.record.template == templating.ANY
