"""Payloads that fit AWS's limits: the crawler's answer keeps only in-scope URLs and
spills to S3 above Lambda's 6 MB synchronous response; the processor event stays
under the async limit."""

from __future__ import annotations

import pytest
from mdcrawl.adapters.aws.blobs import S3BlobStore
from mdcrawl.adapters.aws.crawling import CrawlerPorts
from mdcrawl.adapters.aws.invoker import SPILLED, LambdaInvoker
from mdcrawl.adapters.aws.limits import (
    CRAWL_RESPONSE_BUDGET,
    LAMBDA_SYNC_PAYLOAD,
    PayloadTooLarge,
    json_size,
)
from mdcrawl.adapters.aws.payloads import to_data
from mdcrawl.models import CrawledPage, CrawlOptions, FrontierItem, Scope, UrlState
from mdcrawl.netguard import AddressGuard
from mdcrawl.pipeline.batch import scoped_response
from mdcrawl.ports import CrawlOutcome, CrawlRequest, CrawlResponse

from tests.support.aws import LambdaHandlers, create_function, moto_clients

SCOPE = Scope("https", "docs.example.com", "/guide/")
ITEM = FrontierItem("https://docs.example.com/guide/", "h0", depth=0)
PAGE = CrawledPage("job-1", ITEM.url, "h0", ITEM.url, "c0", "cache/bodies/c0", 0, 0, False)


def outcome(links: tuple[str, ...], sitemap: tuple[str, ...] = ()) -> CrawlOutcome:
    return CrawlOutcome("h0", UrlState.DONE, page=PAGE, links=links, sitemap=sitemap)


def test_only_in_scope_links_and_sitemap_urls_cross_the_boundary() -> None:
    links = ("https://docs.example.com/guide/a", "https://other.example/x",
             "https://docs.example.com/blog/b", "https://docs.example.com/guide/logo.png",
             "https://docs.example.com/guide/a")
    sitemap = ("https://docs.example.com/guide/s#frag", "https://docs.example.com/api/z")
    response = scoped_response(CrawlResponse("job-1", (outcome(links, sitemap),)), SCOPE)
    (kept,) = response.outcomes
    assert kept.links == ("https://docs.example.com/guide/a",)
    assert kept.sitemap == ("https://docs.example.com/guide/s",)


@pytest.fixture
def aws(monkeypatch):
    with moto_clients() as aws:
        yield aws


def big_response() -> CrawlResponse:
    links = tuple(f"https://docs.example.com/guide/page-{i:07d}/section" for i in range(130_000))
    return CrawlResponse("job-1", (outcome(links),))


async def test_an_answer_over_six_mb_is_spilled_and_read_back_whole(aws, monkeypatch) -> None:
    blobs = S3BlobStore(aws.s3, aws.bucket)
    ports = CrawlerPorts(None, blobs, None, AddressGuard(()))
    response = big_response()
    assert json_size(to_data(response)) > LAMBDA_SYNC_PAYLOAD
    answer = ports.answer(response)
    assert set(answer) == {SPILLED}
    assert answer[SPILLED].startswith("jobs/job-1/crawl/")
    small = CrawlResponse("job-1", (outcome(("https://docs.example.com/guide/a",)),))
    assert ports.answer(small) == to_data(small)
    assert json_size(answer) < CRAWL_RESPONSE_BUDGET

    handlers = LambdaHandlers().install(monkeypatch)
    create_function(aws.session, "crawler")
    handlers.handlers["crawler"] = lambda event, context: answer
    invoker = LambdaInvoker(aws.session.client("lambda"), "crawler", "processor", blobs=blobs)
    request = CrawlRequest("job-1", SCOPE, CrawlOptions(), (ITEM,))
    assert await invoker.crawl(request) == response


def test_a_processor_event_over_the_async_limit_is_refused_before_sending() -> None:
    huge = CrawledPage("job-1", ITEM.url + "x" * 300_000, "h0", ITEM.url, "c0", "k", 0, 0, False)
    with pytest.raises(PayloadTooLarge):
        LambdaInvoker(object(), "crawler", "processor").process(huge)
