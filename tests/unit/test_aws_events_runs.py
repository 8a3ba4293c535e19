"""DynamoDbEventLog stores runs of events (one item per writer's batch), and
BufferedEventLog holds a block's appends for one write: the log still numbers events
1, 2, 3... without gaps or overlap whoever writes, replays from inside a run, keeps
items small, and its stream expands a run into its events in order."""

from __future__ import annotations

import json
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from mdcrawl.adapters.aws.dynamo import from_item
from mdcrawl.adapters.aws.eventbuffer import UNNUMBERED, BufferedEventLog
from mdcrawl.adapters.aws.events import ITEM_BYTES, Draft, DynamoDbEventLog
from mdcrawl.adapters.aws.stream import stream_events
from mdcrawl.errors import StoreError
from mdcrawl.models import EventType
from mdcrawl.names import Table
from mdcrawl.service.ws import FRAME_BYTES, fan_out

from tests.support.aws import moto_clients
from tests.support.stream import StreamPump
from tests.unit.test_aws_events_hint import Counted

JOB = "job-1"


@pytest.fixture
def aws():
    with moto_clients() as clients:
        yield clients


def items_of(aws: Any, job_id: str = JOB) -> list[dict[str, Any]]:
    table = aws.names[Table.EVENTS]
    found = aws.dynamodb.query(
        TableName=table,
        KeyConditionExpression="job_id = :j",
        ExpressionAttributeValues={":j": {"S": job_id}},
        ConsistentRead=True,
    )["Items"]
    return [from_item(item) for item in found]


def assert_tiled(items: list[dict[str, Any]]) -> None:
    """Items cover 1..N: each starts where the previous one ended."""
    expected = 1
    for item in items:
        assert item["seq"] == expected
        expected += item["count"]


def drafts(tag: str, n: int, size: int = 0) -> list[Draft]:
    return [Draft(EventType.PAGE_DONE, {"id": f"{tag}-{i}", "pad": "x" * size}, 1.0)
            for i in range(n)]


def test_a_batch_is_one_item_and_one_put(aws) -> None:
    counted = Counted(aws.dynamodb)
    log = DynamoDbEventLog(counted, aws.names[Table.EVENTS])
    stored = log.append_many(JOB, drafts("a", 8))
    assert [e.seq for e in stored] == list(range(1, 9))
    assert counted.calls == Counter(query=1, put_item=1)
    (item,) = items_of(aws)
    assert (item["seq"], item["count"]) == (1, 8)
    assert [e.data["id"] for e in log.after(JOB)] == [f"a-{i}" for i in range(8)]


def test_concurrent_writers_appending_batches_tile_the_log_exactly_once(aws) -> None:
    table = aws.names[Table.EVENTS]
    barrier = threading.Barrier(6)

    def writer(w: int) -> list[int]:
        log = DynamoDbEventLog(aws.dynamodb, table)  # each its own container
        barrier.wait()
        seqs: list[int] = []
        for b in range(5):
            stored = log.append_many(JOB, drafts(f"w{w}b{b}", 1 + (w + b) % 4))
            seqs.extend(e.seq for e in stored)
            # a batch (one item) is consecutive, in the order given
            assert [e.seq for e in stored] == list(range(stored[0].seq, stored[-1].seq + 1))
        return seqs

    with ThreadPoolExecutor(6) as pool:
        per_writer = list(pool.map(writer, range(6)))
    total = sum(1 + (w + b) % 4 for w in range(6) for b in range(5))
    assert sorted(s for seqs in per_writer for s in seqs) == list(range(1, total + 1))
    assert_tiled(items_of(aws))
    replayed = DynamoDbEventLog(aws.dynamodb, table).after(JOB, 0, 10_000)
    assert [e.seq for e in replayed] == list(range(1, total + 1))
    ids = [e.data["id"] for e in replayed]
    assert len(ids) == len(set(ids)) == total
    for w in range(6):  # each writer's own events in its order
        own = [i for i in ids if i.startswith(f"w{w}b")]
        assert own == sorted(own, key=lambda i: (int(i.split("b")[1].split("-")[0]),
                                                 int(i.split("-")[1])))


def test_after_from_the_middle_of_an_item(aws) -> None:
    log = DynamoDbEventLog(aws.dynamodb, aws.names[Table.EVENTS])
    log.append_many(JOB, drafts("a", 5))  # seqs 1-5
    log.append_many(JOB, drafts("b", 4))  # seqs 6-9
    assert [e.seq for e in log.after(JOB, 2)] == [3, 4, 5, 6, 7, 8, 9]
    assert [e.data["id"] for e in log.after(JOB, 3, limit=3)] == ["a-3", "a-4", "b-0"]
    assert [e.seq for e in log.after(JOB, 5, limit=2)] == [6, 7]
    assert [e.seq for e in log.after(JOB, 8)] == [9]
    assert log.after(JOB, 9) == [] and log.after(JOB, 50) == []


def test_a_long_replay_completes_in_pages(aws) -> None:
    log = DynamoDbEventLog(aws.dynamodb, aws.names[Table.EVENTS])
    for b in range(120):
        log.append_many(JOB, drafts(f"b{b}", 100))
    seen, after = [], 0
    while page := log.after(JOB, after, 1000):
        seen.extend(e.seq for e in page)
        after = page[-1].seq
    assert seen == list(range(1, 12_001))


def test_a_batch_over_the_item_budget_is_split_into_consecutive_items(aws) -> None:
    log = DynamoDbEventLog(aws.dynamodb, aws.names[Table.EVENTS])
    stored = log.append_many(JOB, drafts("big", 40, size=3000))  # ~120 KB of events
    assert [e.seq for e in stored] == list(range(1, 41))
    items = items_of(aws)
    assert len(items) >= 4
    assert all(len(item["events"].encode()) <= ITEM_BYTES for item in items)
    assert_tiled(items)
    assert [e.data["id"] for e in log.after(JOB)] == [f"big-{i}" for i in range(40)]


def test_items_stored_one_event_each_before_runs_still_read(aws) -> None:
    table = aws.names[Table.EVENTS]
    old = {"job_id": {"S": JOB}, "seq": {"N": "1"}, "type": {"S": "job.started"},
           "ts": {"N": "1.5"}, "data": {"M": {"url": {"S": "https://x.org/"}}}}
    aws.dynamodb.put_item(TableName=table, Item=old)
    log = DynamoDbEventLog(aws.dynamodb, table)
    assert log.append(JOB, EventType.PAGE_DONE, {}, 2.0).seq == 2
    first, second = log.after(JOB)
    assert (first.seq, first.type, first.data) == (1, EventType.JOB_STARTED,
                                                   {"url": "https://x.org/"})
    assert second.seq == 2


class FailingPuts:
    """A client whose puts fail (a throttled or unreachable table) while ``failing``."""

    def __init__(self, client: Any) -> None:
        self.client, self.failing = client, True

    def put_item(self, **kwargs: Any) -> Any:
        if self.failing:
            from botocore.exceptions import ClientError

            raise ClientError({"Error": {"Code": "InternalServerError"}}, "PutItem")
        return self.client.put_item(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


def test_a_block_holds_appends_and_stores_them_in_one_write_when_it_ends(aws) -> None:
    counted = Counted(aws.dynamodb)
    log = BufferedEventLog(DynamoDbEventLog(counted, aws.names[Table.EVENTS]))
    with log.collecting():
        with log.collecting():  # nested: the outermost block stores
            held = log.append(JOB, EventType.PAGE_DONE, {"n": 1}, 1.0)
        log.append(JOB, EventType.PAGE_FAILED, {"n": 2}, 2.0)
        assert held.seq == UNNUMBERED and items_of(aws) == []
    assert [(e.seq, e.data["n"]) for e in log.after(JOB)] == [(1, 1), (2, 2)]
    assert counted.calls["put_item"] == 1
    assert log.append(JOB, EventType.JOB_PROGRESS, {}, 3.0).seq == 3  # outside: at once


def test_a_terminal_event_is_stored_at_once_with_what_was_held(aws) -> None:
    log = BufferedEventLog(DynamoDbEventLog(aws.dynamodb, aws.names[Table.EVENTS]))
    with log.collecting():
        log.append(JOB, EventType.PAGE_DONE, {}, 1.0)
        done = log.append(JOB, EventType.JOB_COMPLETED, {}, 2.0)
        assert done.seq == 2
        assert [e.type for e in log.after(JOB)] == [EventType.PAGE_DONE, EventType.JOB_COMPLETED]


def test_a_writer_failing_after_buffering_still_stores_what_it_held(aws) -> None:
    log = BufferedEventLog(DynamoDbEventLog(aws.dynamodb, aws.names[Table.EVENTS]))
    with pytest.raises(RuntimeError), log.collecting():
        log.append(JOB, EventType.PAGE_DONE, {"n": 1}, 1.0)  # its record is durable
        raise RuntimeError("the next page crashed the batch")
    assert [e.data["n"] for e in log.after(JOB)] == [1]


def test_a_writer_dying_before_its_put_leaves_no_hole(aws) -> None:
    table = aws.names[Table.EVENTS]
    first = DynamoDbEventLog(aws.dynamodb, table)
    first.append_many(JOB, drafts("a", 3))
    broken = FailingPuts(aws.dynamodb)
    dying = BufferedEventLog(DynamoDbEventLog(broken, table))
    with pytest.raises(StoreError), dying.collecting():
        dying.append(JOB, EventType.PAGE_DONE, {"id": "lost"}, 2.0)
    # nothing stays held after the failed store: the container's next block is clean
    broken.failing = False
    with dying.collecting():
        dying.append(JOB, EventType.PAGE_DONE, {"id": "c-0"}, 3.0)
    first.append_many(JOB, drafts("b", 2))
    stored = first.after(JOB)
    assert [e.seq for e in stored] == list(range(1, 7))
    assert [e.data["id"] for e in stored] == ["a-0", "a-1", "a-2", "c-0", "b-0", "b-1"]
    assert_tiled(items_of(aws))


def test_a_put_lost_to_another_writer_is_retried_after_its_run(aws) -> None:
    table = aws.names[Table.EVENTS]
    now = [0.0]
    mine = DynamoDbEventLog(aws.dynamodb, table, monotonic=lambda: now[0])
    other = DynamoDbEventLog(aws.dynamodb, table)
    mine.append_many(JOB, drafts("m", 2))  # 1-2; mine's fresh hint says 3 next
    other.append_many(JOB, drafts("o", 5))  # 3-7 taken meanwhile
    stored = mine.append_many(JOB, drafts("n", 2))
    assert [e.seq for e in stored] == [8, 9]
    assert_tiled(items_of(aws))


def test_the_stream_expands_a_multi_event_record_in_order(aws) -> None:
    table = aws.names[Table.EVENTS]
    batches: list[list[Any]] = []
    pump = StreamPump(aws.session, table, lambda event: batches.append(event["Records"]))
    log = DynamoDbEventLog(aws.dynamodb, table)
    log.append_many(JOB, drafts("a", 3))
    log.append(JOB, EventType.JOB_PROGRESS, {"id": "p"}, 2.0)
    log.append_many(JOB, drafts("b", 2))
    pump.drain()
    records = [r for batch in batches for r in batch]
    assert len(records) == 3  # one record per item
    events = stream_events(records)
    assert [e.seq for e in events] == [1, 2, 3, 4, 5, 6]
    assert [e.data["id"] for e in events] == ["a-0", "a-1", "a-2", "p", "b-0", "b-1"]


class Pusher:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def push(self, connection_id: str, message: dict[str, Any]) -> bool:
        self.sent.append((connection_id, message))
        return True


class Subscribers:
    def for_job(self, job_id: str) -> list[str]:
        return ["c1"]

    def remove(self, connection_id: str) -> None:
        raise AssertionError("no connection is gone")


def test_the_fan_out_sends_a_big_run_in_ordered_frames_under_the_limit(aws) -> None:
    from types import SimpleNamespace

    log = DynamoDbEventLog(aws.dynamodb, aws.names[Table.EVENTS])
    log.append_many(JOB, drafts("big", 100, size=2500))  # 4 items, ~250 KB in all
    events = log.after(JOB)
    pusher = Pusher()
    deps = SimpleNamespace(connections=Subscribers(), pusher=pusher)
    outcome = fan_out(list(reversed(events)), deps)  # type: ignore[arg-type]
    frames = [message for _, message in pusher.sent]
    assert outcome.delivered == len(frames) >= 3
    assert all(len(json.dumps(f, separators=(",", ":")).encode()) <= FRAME_BYTES for f in frames)
    assert [e["seq"] for f in frames for e in f["events"]] == list(range(1, 101))
