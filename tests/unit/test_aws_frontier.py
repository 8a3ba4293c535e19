"""The DynamoDB frontier beyond the shared contract (tests/contract/test_frontier.py): a
log per job, what it costs in requests and write units, restarts (a new instance folds
the log), other writers, batches, and items that stay under DynamoDB's 400 KB."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pytest
from mdcrawl.adapters.aws.frontier import DynamoDbFrontier
from mdcrawl.errors import StoreError
from mdcrawl.models import FrontierItem, UrlState
from mdcrawl.names import TTL_ATTRIBUTE, Table
from mdcrawl.urls import url_hash

from tests.support.aws import moto_clients

JOB = "job-1"
DAY = 86400.0


class Clock:
    def now(self) -> float:
        return 5000.0


class CountingClient:
    """The DynamoDB client, counting the requests made through it."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def counted(**kwargs: Any) -> Any:
            self.calls[name] += 1
            return method(**kwargs)

        return counted


@pytest.fixture
def aws():
    with moto_clients() as aws:
        yield aws


def frontier(aws, client: Any = None) -> DynamoDbFrontier:
    table = aws.names[Table.FRONTIER]
    return DynamoDbFrontier(client or aws.dynamodb, table, Clock(), retention_s=DAY)


def item(name: str, parent: str | None = None) -> FrontierItem:
    url = f"https://docs.example.com/guide/{name}.html"
    return FrontierItem(url=url, url_hash=url_hash(url), depth=1, parent=parent)


def log(aws) -> list[dict[str, Any]]:
    return aws.dynamodb.scan(TableName=aws.names[Table.FRONTIER])["Items"]


def write_units(aws) -> int:
    """What the log's items cost to write, as DynamoDB bills a put: 1 unit per KB."""
    sizes = [
        sum(len(k) + len(next(iter(v.values()))) for k, v in row.items()) for row in log(aws)
    ]
    return sum(math.ceil(size / 1024) for size in sizes)


def crawl(f: DynamoDbFrontier, links_per_page: int, pages: int) -> None:
    """What the orchestrator does: claim 4, and per batch finish them and add each
    page's new links (the first pages bring most of them, as on a docs site)."""
    f.add(JOB, [item("start")])
    added = 1
    while True:
        claimed = f.claim(JOB, limit=4, lease_s=300.0, now=0.0)
        if not claimed:
            return
        with f.batch():
            for leased in claimed:
                f.finish(JOB, leased.url_hash, UrlState.DONE)
                room = min(links_per_page, pages - added)
                links = [item(f"p{added + n}", parent=leased.url) for n in range(room)]
                added += len(f.add(JOB, links))


# --- cost -------------------------------------------------------------------------------
def test_a_crawl_costs_well_under_one_write_unit_per_url(aws):
    crawl(frontier(aws), links_per_page=3, pages=400)
    f = frontier(aws)  # read back by a new instance: everything settled
    assert f.counts(JOB)[UrlState.DONE] == 400
    # Per batch of 4: one lease entry and one settle entry (0.5), the links ride along.
    assert write_units(aws) / 400 <= 0.6


def test_a_claim_reads_nothing_and_writes_one_entry(aws):
    client = CountingClient(aws.dynamodb)
    f = frontier(aws, client)
    f.add(JOB, [item(str(n)) for n in range(50)])
    client.calls.clear()
    claimed = f.claim(JOB, limit=8, lease_s=30.0, now=0.0)
    assert len(claimed) == 8
    assert client.calls == {"put_item": 1}


def test_a_batch_of_settles_and_adds_is_one_entry(aws):
    client = CountingClient(aws.dynamodb)
    f = frontier(aws, client)
    f.add(JOB, [item(str(n)) for n in range(4)])
    claimed = f.claim(JOB, limit=4, lease_s=30.0, now=0.0)
    client.calls.clear()
    with f.batch():
        for n, leased in enumerate(claimed):
            f.finish(JOB, leased.url_hash, UrlState.SKIPPED, "not_html")
            f.add(JOB, [item(f"new{n}")])
        assert client.calls == {}  # inside the batch: nothing written yet
        assert f.items(JOB)[0].state is UrlState.SKIPPED  # but the view has it
    assert client.calls["put_item"] == 1
    assert frontier(aws).counts(JOB)[UrlState.SKIPPED] == 4


# --- restarts and other writers ---------------------------------------------------------
def test_a_new_instance_carries_on_where_the_log_ends(aws):
    first = frontier(aws)
    first.add(JOB, [item(n) for n in "abcdef"])
    a, b = first.claim(JOB, limit=2, lease_s=10.0, now=0.0)
    first.finish(JOB, a.url_hash, UrlState.DONE)
    first.release(JOB, b.url_hash, max_attempts=3, reason="503")
    second = frontier(aws)  # the next orchestrator slice, in a new environment
    assert second.items(JOB) == first.items(JOB)
    again = second.claim(JOB, limit=2, lease_s=10.0, now=0.0)
    assert [i.url for i in again] == [item("b").url, item("c").url]
    assert again[0].attempts == 1
    assert second.add(JOB, [item("a"), item("g")])[0].order == 6


def test_writers_with_stale_views_share_one_log(aws):
    one, other = frontier(aws), frontier(aws)
    one.add(JOB, [item("a")])
    assert [i.order for i in other.add(JOB, [item("a"), item("b")])] == [1]  # a is known
    assert [i.url for i in one.claim(JOB, limit=5, lease_s=10.0, now=0.0)] == [
        item("a").url,
        item("b").url,
    ]
    assert other.claim(JOB, limit=5, lease_s=10.0, now=0.0) == []  # it reads one's lease
    assert [row["seq"]["N"] for row in log(aws)] == ["0", "1", "2"]


class Dying(CountingClient):
    """A host that dies at its next write: nothing more reaches the table."""

    dead = False

    def put_item(self, **kwargs: Any) -> Any:
        if self.dead:
            raise SystemExit("the host died")
        return self._client.put_item(**kwargs)


def test_an_unwritten_batch_is_lost_as_a_crash_loses_it(aws):
    client = Dying(aws.dynamodb)
    f = frontier(aws, client)
    f.add(JOB, [item("a")])
    (a,) = f.claim(JOB, limit=1, lease_s=10.0, now=0.0)
    with pytest.raises(SystemExit), f.batch():
        f.finish(JOB, a.url_hash, UrlState.DONE)
        client.dead = True  # before the batch's entry is written
    survivor = frontier(aws)
    assert survivor.counts(JOB)[UrlState.LEASED] == 1
    assert survivor.reclaim_expired(JOB, now=20.0, max_attempts=3) == 1
    (again,) = survivor.claim(JOB, limit=1, lease_s=10.0, now=20.0)
    assert (again.url, again.attempts) == (a.url, 1)


def test_another_writer_during_a_batch_is_a_retried_error_not_a_fork(aws):
    f, other = frontier(aws), frontier(aws)
    f.add(JOB, [item("a")])
    (a,) = f.claim(JOB, limit=1, lease_s=10.0, now=0.0)
    with pytest.raises(StoreError), f.batch():  # StoreError: the state machine retries
        f.finish(JOB, a.url_hash, UrlState.DONE)
        other.add(JOB, [item("b")])
    assert [row["seq"]["N"] for row in log(aws)] == ["0", "1", "2"]
    assert f.counts(JOB)[UrlState.LEASED] == 1  # it forgot its view and read the log


def test_a_rehand_count_survives_instances(aws):
    f = frontier(aws)
    f.add(JOB, [item("a")])
    assert f.bump(JOB, item("a").url_hash, "rehands") == 1
    assert frontier(aws).bump(JOB, item("a").url_hash, "rehands") == 2


# --- items ------------------------------------------------------------------------------
def test_a_sitemap_of_50000_urls_is_split_into_items_under_400_kb(aws):
    long_tail = "/reference/" + "x" * 150
    urls = [item(f"{n}{long_tail}") for n in range(50_000)]
    f = frontier(aws)
    assert len(f.add(JOB, urls)) == 50_000
    rows = log(aws)
    assert len(rows) > 1
    assert max(len(row["log"]["B"]) for row in rows) < 400 * 1024
    assert [i.order for i in frontier(aws).items(JOB)] == list(range(50_000))


def test_entries_carry_the_ttl(aws):
    frontier(aws).add(JOB, [item("a")])
    (row,) = log(aws)
    assert row[TTL_ATTRIBUTE]["N"] == str(int(5000 + DAY))


def test_urls_past_the_cap_are_counted_once_by_every_instance(aws):
    f = frontier(aws)
    f.add(JOB, [item("a")])
    with f.batch():  # as the orchestrator notes them: with the outcome that found them
        f.note_overflow(JOB, ["h1", "h2"])
    frontier(aws).note_overflow(JOB, ["h2", "h3"])  # the next slice meets h2 again
    assert frontier(aws).overflow(JOB) == 3
    assert f.overflow(JOB) == 3  # the first instance reads what the other wrote


def test_a_page_of_100000_links_past_the_cap_is_split_into_items_under_400_kb(aws):
    hashes = [url_hash(f"https://docs.example.com/ref/{n}.html") for n in range(100_000)]
    frontier(aws).note_overflow(JOB, hashes)
    rows = log(aws)
    assert len(rows) > 1
    assert max(len(row["log"]["B"]) for row in rows) < 400 * 1024
    assert frontier(aws).overflow(JOB) == 100_000
