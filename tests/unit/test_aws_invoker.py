"""LambdaInvoker under moto, with handlers run in-process: payloads are the JSON of the
records, a crawl waits for its answer, a function error is raised, process is async."""

from __future__ import annotations

import pytest
from mdcrawl.adapters.aws.invoker import InvocationFailed, LambdaInvoker
from mdcrawl.adapters.aws.payloads import from_data, to_data
from mdcrawl.errors import StoreError
from mdcrawl.models import CrawledPage, CrawlOptions, FrontierItem, Scope, UrlState
from mdcrawl.ports import CrawlOutcome, CrawlRequest, CrawlResponse

from tests.support.aws import LambdaHandlers, create_function, moto_clients

ITEM = FrontierItem("https://docs.example.com/a", "h-a", depth=1, order=3)
REQUEST = CrawlRequest("job-1", Scope("https", "docs.example.com", "/"), CrawlOptions(), (ITEM,))
PAGE = CrawledPage("job-1", ITEM.url, "h-a", ITEM.url, "c0", "cache/bodies/c0", 3, 1, False)


@pytest.fixture
def lambdas(monkeypatch):
    with moto_clients() as aws:
        handlers = LambdaHandlers().install(monkeypatch)
        create_function(aws.session, "crawler")
        create_function(aws.session, "processor")
        yield aws.session.client("lambda"), handlers.handlers


def crawler(event, context):
    request = from_data(CrawlRequest, event)
    outcomes = tuple(
        CrawlOutcome(i.url_hash, UrlState.DONE, page=PAGE, links=("https://docs.example.com/b",))
        for i in request.items
    )
    return to_data(CrawlResponse(request.job_id, outcomes))


async def test_crawl_sends_the_request_and_returns_the_decoded_response(lambdas):
    client, handlers = lambdas
    handlers["crawler"] = crawler
    response = await LambdaInvoker(client, "crawler", "processor").crawl(REQUEST)
    assert response == CrawlResponse(
        "job-1",
        (CrawlOutcome("h-a", UrlState.DONE, page=PAGE, links=("https://docs.example.com/b",)),),
    )


async def test_a_function_error_is_raised_with_its_type(lambdas):
    client, handlers = lambdas

    def broken(event, context):
        raise KeyError("scope")

    handlers["crawler"] = broken
    with pytest.raises(InvocationFailed, match="KeyError") as raised:
        await LambdaInvoker(client, "crawler", "processor").crawl(REQUEST)
    assert raised.value.error_type == "KeyError"
    assert isinstance(raised.value, StoreError)


def test_process_fires_an_event_invoke_with_the_page(lambdas):
    client, handlers = lambdas
    received = []
    handlers["processor"] = lambda event, context: received.append(event)
    LambdaInvoker(client, "crawler", "processor").process(PAGE)
    assert [from_data(CrawledPage, event) for event in received] == [PAGE]
