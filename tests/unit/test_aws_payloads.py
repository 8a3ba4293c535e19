"""Lambda payloads: every record that crosses a Lambda boundary survives JSON intact."""

from __future__ import annotations

import json

import pytest
from mdcrawl.adapters.aws.payloads import dumps, from_data, loads, to_data
from mdcrawl.models import CrawledPage, CrawlOptions, FrontierItem, Scope, UrlState
from mdcrawl.ports import CrawlOutcome, CrawlRequest, CrawlResponse

SCOPE = Scope("https", "docs.example.com", "/guide/", include=("/guide/*",), exclude=("*.pdf",))
OPTIONS = CrawlOptions(max_pages=10, budget_s=60.0, include=("/a/*",), use_cache=False)
ITEM = FrontierItem(
    url="https://docs.example.com/guide/a",
    url_hash="ab12",
    depth=2,
    parent="https://docs.example.com/guide/",
    order=7,
    state=UrlState.LEASED,
    attempts=1,
    lease_expires=130.5,
    sitemap_rank=3,
)
PAGE = CrawledPage(
    job_id="job-1",
    url=ITEM.url,
    url_hash=ITEM.url_hash,
    final_url=ITEM.url + "/",
    content_hash="c0ffee",
    body_key="cache/bodies/c0ffee",
    order=7,
    depth=2,
    from_cache=True,
    sitemap_rank=None,
)
REQUEST = CrawlRequest(job_id="job-1", scope=SCOPE, options=OPTIONS, items=(ITEM, ITEM))
RESPONSE = CrawlResponse(
    job_id="job-1",
    outcomes=(
        CrawlOutcome(ITEM.url_hash, UrlState.DONE, page=PAGE, links=("https://x/1", "https://x/2")),
        CrawlOutcome("ff00", UrlState.SKIPPED, reason="not_html"),
    ),
)


@pytest.mark.parametrize(
    "record",
    [SCOPE, OPTIONS, CrawlOptions(), ITEM, FrontierItem("u", "h"), PAGE, REQUEST, RESPONSE],
)
def test_round_trip_gives_an_equal_record(record):
    assert loads(type(record), dumps(record)) == record


def test_the_json_is_plain_data_with_enum_values_and_lists():
    data = json.loads(dumps(RESPONSE))
    assert data["outcomes"][0]["state"] == "done"
    assert data["outcomes"][0]["page"]["body_key"] == "cache/bodies/c0ffee"
    assert data["outcomes"][0]["links"] == ["https://x/1", "https://x/2"]
    assert data["outcomes"][1]["page"] is None


def test_decoding_restores_tuples_enums_and_floats():
    request = loads(CrawlRequest, dumps(REQUEST))
    assert isinstance(request.items, tuple) and isinstance(request.scope.include, tuple)
    assert request.items[0].state is UrlState.LEASED
    options = from_data(CrawlOptions, {"budget_s": 60})
    assert isinstance(options.budget_s, float)


def test_unknown_fields_from_a_newer_sender_are_ignored():
    data = to_data(PAGE) | {"added_later": 1}
    assert from_data(CrawledPage, data) == PAGE


def test_a_request_carries_no_bodies():
    assert set(json.loads(dumps(REQUEST))) == {"job_id", "scope", "options", "items", "deadline"}
