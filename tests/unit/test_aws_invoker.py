"""LambdaInvoker under moto, with handlers run in-process: payloads are the JSON of the
records, a crawl waits for its answer, a function error is raised, process is async."""

from __future__ import annotations

import pytest
from mdcrawl.adapters.aws import invoker as invoker_module
from mdcrawl.adapters.aws.invoker import MAX_PAGES_PER_EVENT, InvocationFailed, LambdaInvoker
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


def pages_of(count: int) -> list[CrawledPage]:
    return [
        CrawledPage(
            "job-1",
            f"{ITEM.url}{n}",
            f"h{n}",
            f"{ITEM.url}{n}",
            "c0",
            "cache/bodies/c0",
            n,
            1,
            False,
        )
        for n in range(count)
    ]


def received_pages(events: list[dict]) -> list[list[CrawledPage]]:
    return [[from_data(CrawledPage, p) for p in e.get("pages", [e])] for e in events]


def test_pages_handed_over_while_collecting_go_in_one_event_when_the_block_ends(lambdas):
    client, handlers = lambdas
    received = []
    handlers["processor"] = lambda event, context: received.append(event)
    invoker = LambdaInvoker(client, "crawler", "processor")
    with invoker.collecting():
        for page in pages_of(3):
            invoker.process(page)
        assert received == []
    assert received_pages(received) == [pages_of(3)]


def test_a_collected_batch_is_split_by_page_count_and_payload_size(lambdas, monkeypatch):
    client, handlers = lambdas
    received = []
    handlers["processor"] = lambda event, context: received.append(event)
    invoker = LambdaInvoker(client, "crawler", "processor")
    invoker.process_many(pages_of(MAX_PAGES_PER_EVENT + 1))
    assert [len(batch) for batch in received_pages(received)] == [MAX_PAGES_PER_EVENT, 1]
    received.clear()
    monkeypatch.setattr(invoker_module, "_BUDGET", 700)  # two pages' JSON, not three
    invoker.process_many(pages_of(5))
    batches = received_pages(received)
    assert [p for batch in batches for p in batch] == pages_of(5)
    assert all(len(batch) <= 2 for batch in batches) and len(batches) >= 3


def test_pages_collected_before_an_error_are_still_handed_over(lambdas):
    client, handlers = lambdas
    received = []
    handlers["processor"] = lambda event, context: received.append(event)
    invoker = LambdaInvoker(client, "crawler", "processor")
    with pytest.raises(RuntimeError), invoker.collecting():
        invoker.process(PAGE)
        raise RuntimeError("store error applying the next outcome")
    assert received_pages(received) == [[PAGE]]
