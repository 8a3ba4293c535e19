"""A job's template in the pipeline: learned from the first pages in discovery order,
stored with the job, and the same output whatever order the pages were converted in."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from mdcrawl.adapters.aws.stores import aws_stores
from mdcrawl.adapters.local import LocalStores, open_local_stores
from mdcrawl.convert import convert_html
from mdcrawl.models import CrawledPage, CrawlOptions, Job, PageRecord
from mdcrawl.pipeline import process, templating
from mdcrawl.pipeline.fetching import body_key
from mdcrawl.pipeline.finalize import FinalizeDeps, with_settled_template
from mdcrawl.pipeline.process import ProcessDeps, markdown_cache_key, process_page
from mdcrawl.stored import read_markdown
from mdcrawl.template import SAMPLE_SIZE

from tests.support.aws import moto_clients
from tests.support.templated_site import CHROME, PAGES, page_html, url


class FixedClock:
    def now(self) -> float:
        return 1_000_000.0


@pytest.fixture(params=["sqlite", "dynamodb-s3-moto"])
def stores(request: pytest.FixtureRequest, tmp_path: Path):
    """Both runtimes' stores: the job's template lives in the blob store of each."""
    if request.param == "sqlite":
        with open_local_stores(tmp_path) as opened:
            yield opened
        return
    with moto_clients() as aws:
        yield aws_stores(aws.session, aws.names, aws.bucket, clock=FixedClock())


def crawled(stores: LocalStores, job_id: str, rules: bool = False) -> list[CrawledPage]:
    stores.jobs.create(Job(job_id, url(0), CrawlOptions(generator_rules=rules)))
    pages = []
    for n in range(PAGES):
        body = page_html(n).encode()
        digest = hashlib.sha256(body).hexdigest()
        stores.blobs.put(body_key(digest), body)
        pages.append(
            CrawledPage(job_id, url(n), f"u{n}", url(n), digest, body_key(digest), n, 1, False)
        )
    return pages


def process_deps(stores: LocalStores) -> ProcessDeps:
    return ProcessDeps(stores.blobs, stores.pages, stores.jobs, stores.events, stores.clock)


def finalized(stores: LocalStores, job_id: str) -> dict[str, str]:
    deps = FinalizeDeps(
        stores.jobs, stores.frontier, stores.pages, stores.blobs, stores.events, stores.clock
    )
    records = with_settled_template(job_id, stores.pages.list(job_id), deps)
    return {r.url: markdown(stores, r) for r in records}


def markdown(stores: LocalStores, record: PageRecord) -> str:
    return read_markdown(stores.blobs, record.markdown_key or "")


def test_the_template_settles_once_the_first_pages_are_in(stores: LocalStores) -> None:
    pages = crawled(stores, "j")
    records = [process_page(p, process_deps(stores)) for p in pages]
    state = templating.load("j", stores.blobs)
    assert state.settled and state.template is not None
    # Pages up to the sample's last wait for finalize, unconverted; every later one is
    # converted with it.
    assert {r.template for r in records[:SAMPLE_SIZE]} == {templating.DEFERRED}
    assert not any(stores.blobs.get(r.markdown_key or "") for r in records[:SAMPLE_SIZE])
    assert {r.template for r in records[SAMPLE_SIZE:]} == {state.id}
    assert "Sidebar module" not in markdown(stores, records[-1])


def test_same_output_whatever_order_the_pages_were_converted_in(stores: LocalStores) -> None:
    forward = crawled(stores, "forward")
    backward = crawled(stores, "backward")
    for page in forward:
        process_page(page, process_deps(stores))
    for page in reversed(backward):
        process_page(page, process_deps(stores))
    # Arrived last-first, no page could see the template: finalize converts them all.
    assert {r.template for r in stores.pages.list("backward")} == {templating.DEFERRED}
    first, second = finalized(stores, "forward"), finalized(stores, "backward")
    assert first == second
    for text in first.values():
        assert not any(chrome in text for chrome in CHROME), text
        assert "Introduction to page" in text


def test_a_small_site_settles_at_finalize(stores: LocalStores) -> None:
    pages = crawled(stores, "small")[:6]
    for page in pages:
        process_page(page, process_deps(stores))
    assert not templating.load("small", stores.blobs).settled
    outputs = finalized(stores, "small")
    assert templating.load("small", stores.blobs).settled
    assert not any("Sidebar module" in text for text in outputs.values())


def test_the_markdown_cache_key_names_the_template_and_the_rules(stores: LocalStores) -> None:
    pages = crawled(stores, "j")
    for page in pages:
        process_page(page, process_deps(stores))
    template = templating.load("j", stores.blobs).template
    keys = {
        markdown_cache_key(pages[0]),
        markdown_cache_key(pages[0], rules=False),
        markdown_cache_key(pages[0], template, rules=False),
        markdown_cache_key(pages[0], template, rules=True),
    }
    assert len(keys) == 4


def test_with_rules_on_a_site_the_rules_cover_settles_on_no_template(tmp_path: Path) -> None:
    sphinx = (
        '<html><head><meta name="generator" content="Sphinx 7"></head><body>'
        '<div class="sphinxsidebar">Side</div><div class="body" role="main">'
        "<h1>Page {n}</h1><p>text {n}</p></div></body></html>"
    )
    with open_local_stores(tmp_path) as stores:
        stores.jobs.create(Job("r", url(0), CrawlOptions()))
        records = []
        for n in range(PAGES):
            body = sphinx.format(n=n).encode()
            digest = hashlib.sha256(body).hexdigest()
            stores.blobs.put(body_key(digest), body)
            page = CrawledPage("r", url(n), f"u{n}", url(n), digest, body_key(digest), n, 1, False)
            records.append(process_page(page, process_deps(stores)))
        state = templating.load("r", stores.blobs)
        assert state.settled and state.template is None
        assert {r.template for r in records} == {templating.ANY}
        # Finalize converts nothing again: each page's record stands.
        assert set(finalized(stores, "r").values()) == {markdown(stores, r) for r in records}


def test_each_page_is_converted_once_whenever_the_template_settles(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page the unsettled template could change waits for it (finalize converts it),
    so no page is converted twice: on a small site, settled at finalize, as on a site
    whose template settles during the crawl."""
    converted: list[str] = []

    def counting(body: bytes, url: str, *args: object, **kwargs: object) -> object:
        converted.append(url)
        return convert_html(body, url, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(process, "convert_html", counting)
    for job_id, count in (("small", 6), ("large", PAGES)):
        converted.clear()
        for page in crawled(stores, job_id)[:count]:
            process_page(page, process_deps(stores))
        outputs = finalized(stores, job_id)
        assert sorted(converted) == sorted(outputs) and len(outputs) == count
        assert all("Introduction to page" in text for text in outputs.values())


def test_a_batch_checks_the_sample_once_and_gives_the_same_output(stores: LocalStores) -> None:
    from dataclasses import replace

    from mdcrawl.pipeline.process_batch import process_pages

    class CountedLists:
        def __init__(self, inner) -> None:
            self.inner, self.lists = inner, 0

        def list(self, job_id: str):
            self.lists += 1
            return self.inner.list(job_id)

        def __getattr__(self, name: str):
            return getattr(self.inner, name)

    for page in crawled(stores, "alone"):
        process_page(page, process_deps(stores))
    pages = CountedLists(stores.pages)
    deps = replace(process_deps(stores), pages=pages)
    batched = crawled(stores, "batched")
    batches = [batched[n : n + 6] for n in range(0, len(batched), 6)]
    for batch in batches:
        process_pages(batch, deps)
    assert templating.load("batched", stores.blobs).settled
    assert pages.lists <= len(batches)  # one look at the sample per batch, not per page
    assert finalized(stores, "alone") == finalized(stores, "batched")


def test_a_job_with_the_same_sample_reads_the_template_learnt_for_it(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Learning is a function of the sample's bodies: a re-crawl of an unchanged site does
    not parse its sample again; a changed sample is learnt anew."""
    from mdcrawl import convert

    learnt: list[int] = []
    learn = convert.learn_template

    def counting(pages, rules: bool):  # noqa: ANN001, ANN202
        pages = list(pages)
        learnt.append(len(pages))
        return learn(pages, rules)

    monkeypatch.setattr(convert, "learn_template", counting)
    ids = {}
    for job_id in ("first", "again", "changed"):
        pages = crawled(stores, job_id)
        if job_id == "changed":  # another first page: another sample
            body = page_html(0).replace("it explains", "it now explains").encode()
            digest = hashlib.sha256(body).hexdigest()
            stores.blobs.put(body_key(digest), body)
            pages[0] = CrawledPage(job_id, url(0), "u0", url(0), digest, body_key(digest), 0, 1, 0)
        for page in pages:
            process_page(page, process_deps(stores))
        ids[job_id] = templating.load(job_id, stores.blobs).id
    assert learnt == [SAMPLE_SIZE, SAMPLE_SIZE]  # "again" learnt nothing
    assert ids["again"] == ids["first"] and ids["first"]


def test_a_recrawl_records_pages_no_rule_recognises_without_parsing_them(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With rules on, a page no rule recognises waits for the template; whether it does
    took a parse. The answer is kept, so on the next crawl each page is recorded (the
    first ones deferred, the rest from the markdown cache) without parsing or converting:
    the local runtime then needs no conversion worker for it (``needs_no_converter``)."""
    from mdcrawl.pipeline.process import needs_no_converter

    for page in crawled(stores, "first", rules=True):
        process_page(page, process_deps(stores))
    first = finalized(stores, "first")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed or converted again")

    monkeypatch.setattr(process, "depends_on_template", refuse)
    monkeypatch.setattr(process, "convert_html", refuse)
    deps = process_deps(stores)
    pages = crawled(stores, "again", rules=True)
    for page in pages:
        assert needs_no_converter(page, deps), page.url
        process_page(page, deps)
    assert finalized(stores, "again") == first
    # The same question on a body never seen is answered by parsing it.
    body = page_html(0).replace("Introduction", "Preface").encode()
    digest = hashlib.sha256(body).hexdigest()
    stores.blobs.put(body_key(digest), body)
    unseen = CrawledPage("new", url(0), "u0", url(0), digest, body_key(digest), 0, 1, False)
    stores.jobs.create(Job("new", url(0), CrawlOptions()))
    assert not needs_no_converter(unseen, deps)


SPHINX_PAGE = (
    '<html><head><meta name="generator" content="Sphinx 7"></head><body>'
    '<div class="sphinxsidebar">Side</div><div class="body" role="main">'
    "<h1>Ruled page</h1><p>A page the Sphinx rule recognises.</p></div></body></html>"
)


def _with_ruled_page(stores: LocalStores, job_id: str, order: int) -> list[CrawledPage]:
    """The templated site, rules on, with a page a generator rule recognises inserted
    at discovery ``order``: before the template's sample (0) or after it settled."""
    body = SPHINX_PAGE.encode()
    digest = hashlib.sha256(body).hexdigest()
    stores.blobs.put(body_key(digest), body)
    ruled_url = url(0).rsplit("/", 1)[0] + "/ruled.html"
    ruled = CrawledPage(job_id, ruled_url, "ruled", ruled_url, digest, body_key(digest), 0, 1, False)
    pages = crawled(stores, job_id, rules=True)
    pages.insert(order, ruled)
    return [replace(page, order=n) for n, page in enumerate(pages)]


def test_a_page_a_rule_recognises_is_cached_once_whenever_the_template_settles(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule's conversion ignores the template, so the cache keeps it under the key of
    no template: the key a page gets must not depend on whether the template had
    settled when it came (that is timing), or a re-crawl converts it again and every
    output is assembled again (its record names another cache document)."""
    converted: list[str] = []

    def counting(body: bytes, url: str, *args: object, **kwargs: object) -> object:
        converted.append(url)
        return convert_html(body, url, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(process, "convert_html", counting)
    records = {}
    deps = replace(process_deps(stores), job_copy=False)  # records name the cache's document
    for job_id, order in (("early", 0), ("late", PAGES)):
        for page in _with_ruled_page(stores, job_id, order):
            process_page(page, deps)
        records[job_id] = stores.pages.get(job_id, "ruled")
        assert templating.load(job_id, stores.blobs).template is not None
    early, late = records["early"], records["late"]
    assert early is not None and late is not None
    assert early.template == late.template == templating.ANY
    page = _with_ruled_page(stores, "probe", 0)[0]
    assert early.markdown_key == late.markdown_key == markdown_cache_key(page, None, True)
    assert sum(u.endswith("/ruled.html") for u in converted) == 1  # the second job read it
    assert "A page the Sphinx rule recognises." in markdown(stores, late)


def test_a_pages_record_names_the_same_document_whether_or_not_it_was_deferred(
    stores: LocalStores,
) -> None:
    """Which pages wait for the template is timing (how many came before it settled).
    Once finalize has converted them, each names the cache's document, as a page
    converted with the settled template during the crawl does: the same record keys
    whatever the arrival order, so a re-crawl's outputs stand (``FileOutputMemo``)."""
    deps = replace(process_deps(stores), job_copy=False)
    for job_id, order in (("forward", 1), ("backward", -1)):
        for page in crawled(stores, job_id)[::order]:
            process_page(page, deps)
    finalize_deps = FinalizeDeps(
        stores.jobs, stores.frontier, stores.pages, stores.blobs, stores.events, stores.clock
    )
    keys = {}
    for job_id in ("forward", "backward"):
        records = with_settled_template(job_id, stores.pages.list(job_id), finalize_deps)
        keys[job_id] = {r.url: r.markdown_key for r in records}
    assert {r.template for r in stores.pages.list("backward")} == {templating.DEFERRED}
    assert keys["forward"] == keys["backward"]
    assert all(key and key.startswith("cache/") for key in keys["backward"].values())
