"""What the DynamoDB adapters do beyond the shared contract: the items they write (TTL,
sparse index key, order counter), how the frontier skips items someone else took, how
two event writers share one sequence, errors, and the composition helper."""

from __future__ import annotations

from dataclasses import replace

import pytest
from mdcrawl.adapters.aws.frontier import ORDER_COUNTER_SK
from mdcrawl.adapters.aws.stores import AwsStores, aws_stores
from mdcrawl.errors import Conflict, StoreError
from mdcrawl.models import (
    CacheEntry,
    CrawlOptions,
    EventType,
    FrontierItem,
    Job,
    PageRecord,
    PageStatus,
    UrlState,
)
from mdcrawl.names import TTL_ATTRIBUTE, Table

from tests.support.aws import moto_clients

DAY = 86400.0
JOB = "job-1"


class Clock:
    def now(self) -> float:
        return 5000.0


@pytest.fixture
def aws():
    with moto_clients() as aws:
        yield aws


@pytest.fixture
def stores(aws) -> AwsStores:
    return aws_stores(aws.session, aws.names, aws.bucket, clock=Clock(), retention_s=DAY)


def raw(aws, table: Table, **key: str) -> dict:
    typed = {name: {"S": value} for name, value in key.items()}
    return aws.dynamodb.get_item(TableName=aws.names[table], Key=typed).get("Item", {})


def item(name: str) -> FrontierItem:
    return FrontierItem(url=f"https://docs.example.com/{name}", url_hash=f"h{name}")


# --- TTL --------------------------------------------------------------------------------
def test_job_data_carries_the_ttl_attribute(aws, stores):
    stores.jobs.create(Job(JOB, "https://docs.example.com/", CrawlOptions(), created_at=1000.0))
    stores.frontier.add(JOB, [item("a")])
    stores.pages.put(PageRecord(JOB, "https://docs.example.com/a", "ha", PageStatus.OK))
    stores.events.append(JOB, EventType.JOB_STARTED, {}, ts=2000.0)
    stores.connections.add("c1", "alice", ts=3000.0)
    ttl = {
        "job": raw(aws, Table.JOBS, job_id=JOB),
        "frontier": raw(aws, Table.FRONTIER, job_id=JOB, url_hash="ha"),
        "page": raw(aws, Table.PAGES, job_id=JOB, url_hash="ha"),
        "connection": raw(aws, Table.CONNECTIONS, connection_id="c1", sk="#conn"),
    }
    assert {name: it[TTL_ATTRIBUTE]["N"] for name, it in ttl.items()} == {
        "job": str(int(1000 + DAY)),
        "frontier": str(int(5000 + DAY)),
        "page": str(int(5000 + DAY)),
        "connection": str(int(3000 + 2 * 3600)),
    }
    (event,) = aws.dynamodb.scan(TableName=aws.names[Table.EVENTS])["Items"]
    assert event[TTL_ATTRIBUTE]["N"] == str(int(2000 + DAY))


def test_a_stale_cache_entry_outlives_its_freshness(aws, stores):
    entry = CacheEntry("hu", "u", "u", 200, "text/html", 100.0, 200.0, "c0", etag='"e"')
    stores.cache.put(entry)
    stored = raw(aws, Table.CACHE, url_hash="hu")
    assert int(stored[TTL_ATTRIBUTE]["N"]) == int(200.0 + 30 * DAY)  # validators kept


# --- frontier items ---------------------------------------------------------------------
def test_orders_in_one_add_are_consecutive_and_known_items_burn_none(stores):
    first = stores.frontier.add(JOB, [item("a"), item("b")])
    stores.frontier.add(JOB, [item("a"), item("b")])  # all known: no block reserved
    second = stores.frontier.add(JOB, [item("c"), item("a")])
    assert [i.order for i in first + second] == [0, 1, 2]


def test_the_order_counter_is_not_an_item(aws, stores):
    stores.frontier.add(JOB, [item("a")])
    assert raw(aws, Table.FRONTIER, job_id=JOB, url_hash=ORDER_COUNTER_SK)["next_order"]["N"] == "1"
    assert [i.url_hash for i in stores.frontier.items(JOB)] == ["ha"]
    assert sum(stores.frontier.counts(JOB).values()) == 1


def test_only_pending_items_are_in_the_sparse_index(aws, stores):
    stores.frontier.add(JOB, [item("a"), item("b")])
    stores.frontier.claim(JOB, limit=1, lease_s=10.0, now=0.0)
    assert "pending_pk" not in raw(aws, Table.FRONTIER, job_id=JOB, url_hash="ha")
    assert raw(aws, Table.FRONTIER, job_id=JOB, url_hash="hb")["pending_pk"] == {"S": JOB}
    stores.frontier.release(JOB, "ha", max_attempts=3, reason="503")
    assert raw(aws, Table.FRONTIER, job_id=JOB, url_hash="ha")["pending_pk"] == {"S": JOB}
    stores.frontier.claim(JOB, limit=1, lease_s=10.0, now=0.0)
    stores.frontier.finish(JOB, "ha", UrlState.DONE)
    assert "lease_expires" not in raw(aws, Table.FRONTIER, job_id=JOB, url_hash="ha")


def test_claim_skips_items_another_worker_took_and_still_fills_the_batch(aws, stores):
    stores.frontier.add(JOB, [item(n) for n in "abcde"])
    # Another orchestrator leased a and b; the (eventually consistent) index still lists them.
    for url_hash in ("ha", "hb"):
        aws.dynamodb.update_item(
            TableName=aws.names[Table.FRONTIER],
            Key={"job_id": {"S": JOB}, "url_hash": {"S": url_hash}},
            UpdateExpression="SET #s = :leased",
            ExpressionAttributeNames={"#s": "state"},
            ExpressionAttributeValues={":leased": {"S": "leased"}},
        )
    claimed = stores.frontier.claim(JOB, limit=2, lease_s=10.0, now=0.0)
    assert [i.url_hash for i in claimed] == ["hc", "hd"]


def test_items_round_trip_through_the_table(stores):
    original = replace(item("a"), depth=2, parent="https://docs.example.com/", sitemap_rank=1)
    stores.frontier.add(JOB, [original])
    assert stores.frontier.items(JOB) == [original]


# --- events -----------------------------------------------------------------------------
def test_two_writers_with_stale_hints_share_one_gap_free_sequence(aws, stores):
    other = aws_stores(aws.session, aws.names, aws.bucket, clock=Clock()).events
    seqs = []
    for writer in (stores.events, other, stores.events, other, other, stores.events):
        seqs.append(writer.append(JOB, EventType.JOB_PROGRESS, {"pct": 0.5}, ts=1.0).seq)
    assert seqs == [1, 2, 3, 4, 5, 6]
    assert [e.seq for e in stores.events.after(JOB, 2)] == [3, 4, 5, 6]
    assert stores.events.after(JOB, 5)[0].data == {"pct": 0.5}


# --- errors and composition -------------------------------------------------------------
def test_a_missing_table_is_a_store_error(aws):
    names = {**aws.names, Table.JOBS: "no-such-table"}
    jobs = aws_stores(aws.session, names, aws.bucket).jobs
    with pytest.raises(StoreError, match="ResourceNotFoundException"):
        jobs.get(JOB)


def test_stores_from_ready_clients_share_the_data_of_stores_from_a_session(aws, stores):
    clients = {"dynamodb": aws.dynamodb, "s3": aws.s3}
    from_clients = aws_stores(clients, aws.names, aws.bucket)
    stores.blobs.put("k", b"v")
    stores.connections.add("c1", "alice", ts=1.0)
    assert from_clients.blobs.get("k") == b"v"
    assert from_clients.connections.owner("c1") == "alice"
    assert from_clients.clock.now() > 1_600_000_000  # the system clock by default


def test_a_job_without_creation_time_expires_from_now_not_from_1970(aws, stores):
    stores.jobs.create(Job(JOB, "https://docs.example.com/", CrawlOptions()))  # created_at 0
    assert raw(aws, Table.JOBS, job_id=JOB)[TTL_ATTRIBUTE]["N"] == str(int(5000 + DAY))


def test_releasing_an_item_the_frontier_never_had_is_a_conflict(stores):
    with pytest.raises(Conflict):
        stores.frontier.release(JOB, "hnope", max_attempts=3, reason="x")
