"""What the DynamoDB adapters do beyond the shared contract: the items they write (TTL),
how two event writers share one sequence, errors, and the composition helper (the
frontier's own: test_aws_frontier.py)."""

from __future__ import annotations

import pytest
from mdcrawl.adapters.aws.stores import AwsStores, aws_stores
from mdcrawl.errors import StoreError
from mdcrawl.models import (
    CacheEntry,
    CrawlOptions,
    EventType,
    FrontierItem,
    Job,
    PageRecord,
    PageStatus,
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
        "frontier": aws.dynamodb.scan(TableName=aws.names[Table.FRONTIER])["Items"][0],
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


def test_get_many_answers_each_page_record_or_none_in_one_request(aws, stores):
    record = PageRecord(JOB, "https://docs.example.com/a", "ha", PageStatus.OK, order=0)
    stores.pages.put(record)
    stores.pages.put(PageRecord("other", "https://docs.example.com/b", "hb", PageStatus.OK))
    calls: list[str] = []
    aws.session.events.register(
        "before-call.dynamodb", lambda model, **_: calls.append(model.name)
    )
    found = aws_stores(aws.session, aws.names, aws.bucket, clock=Clock()).pages.get_many(
        JOB, ["ha", "hb", "ha"]
    )
    assert found == {"ha": stores.pages.get(JOB, "ha"), "hb": None}  # hb is another job's
    assert calls == ["BatchGetItem"]
