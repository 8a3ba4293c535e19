"""The one live path of events on AWS, offline: writers only append to the events
table; its DynamoDB Stream (moto's, read as Lambda's event source reads it: one batch of
a shard at a time, in order) feeds the real fan-out handler, which pushes frames to the
subscribers through the management API (moto). Then a long replay on subscribe."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from mdcrawl.adapters.aws.eventbuffer import BufferedEventLog
from mdcrawl.adapters.aws.events import DynamoDbEventLog
from mdcrawl.adapters.aws.limits import WEBSOCKET_MESSAGE
from mdcrawl.models import CrawlOptions, EventType, Job
from mdcrawl.names import TABLE_ENV, EnvVar, Table
from mdcrawl.runtime.aws import AwsRuntime
from mdcrawl.service import ws
from mdcrawl.service.ws import EventCursor, Verdict, events_in

from tests.support.aws import MotoAws, WsRecorder, moto_clients
from tests.support.sfn import WS_ENDPOINT, load_handler
from tests.support.stream import StreamPump

pytestmark = pytest.mark.slow

# The full-size run (a real 2,000-page job, concurrent processors in processes of their
# own) is `python -m bench.cost ... --watch`; here a job's worth of writers, small
# enough for CI, still concurrent: out-of-order delivery shows as a resync or a mismatch.
PAGES = 400
PROCESSORS = 4  # concurrent writers, each with its own adapter (its own seq hint)
OWNER = "owner-1"
WEBSOCKET_TIMEOUT_S = 29  # infra/pipeline.py: the websocket function's timeout


@dataclass
class Client:
    """A subscriber following the delivery contract over what was posted to it."""

    connection_id: str
    recorder: WsRecorder
    deps: Any
    job_id: str
    cursor: EventCursor = field(default_factory=EventCursor)
    events: list[dict[str, Any]] = field(default_factory=list)
    frames: int = 0
    resyncs: int = 0
    resumes: int = 0
    read: int = 0
    clock: Callable[[], float] | None = None  # with it, each subscribe has a 29 s budget
    spent: list[float] = field(default_factory=list)  # per subscribe, by ``clock``

    def subscribe(self) -> None:
        body = {"action": "subscribe", "job_id": self.job_id, "after": self.cursor.last}
        if self.clock is None:
            ws.on_message(self.connection_id, json.dumps(body), self.deps)
            return
        clock, began = self.clock, self.clock()
        ws.on_message(self.connection_id, json.dumps(body), self.deps,
                      lambda: WEBSOCKET_TIMEOUT_S - (clock() - began))
        self.spent.append(clock() - began)

    def pump(self) -> None:
        messages = self.recorder.messages[self.connection_id]
        while self.read < len(messages):
            data = messages[self.read]
            self.read += 1
            assert len(data) <= WEBSOCKET_MESSAGE
            message = json.loads(data)
            if ws.resume_after(message) is not None:  # the replay stopped short: go on
                self.resumes += 1
                self.subscribe()
                continue
            self.frames += message.get("type") == "events"
            for event in events_in(message):
                verdict = self.cursor.accept(event)
                if verdict is Verdict.RESYNC:
                    self.resyncs += 1
                    self.subscribe()
                    break
                if verdict is Verdict.DELIVER:
                    self.events.append(event)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[MotoAws, AwsRuntime, WsRecorder]]:
    for key in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.setenv(key, "true")
    with moto_clients() as aws:
        recorder = WsRecorder().install(monkeypatch)
        env = {var.value: aws.names[table] for table, var in TABLE_ENV.items()}
        env.update({EnvVar.BUCKET.value: aws.bucket, EnvVar.WEBSOCKET_ENDPOINT.value: WS_ENDPOINT})
        yield aws, AwsRuntime(environ=env, session=aws.session), recorder


def connect(runtime: AwsRuntime, recorder: WsRecorder, name: str, job_id: str) -> Client:
    assert ws.on_connect(name, OWNER, runtime.ws)
    recorder.open.add(name)
    return Client(name, recorder, runtime.ws, job_id)


def new_job(runtime: AwsRuntime, job_id: str) -> str:
    job = Job(job_id=job_id, url="https://docs.example.com/", options=CrawlOptions(), owner=OWNER)
    assert runtime.stores.jobs.create(job)
    return job_id


def test_events_of_concurrent_processors_reach_subscribers_gap_free_and_in_order(aws) -> None:
    moto, runtime, recorder = aws
    fanout = load_handler("fanout")
    job_id = new_job(runtime, "job-many")
    early = connect(runtime, recorder, "conn-early", job_id)
    early.subscribe()  # before any event: everything it gets is the live path's
    pump = StreamPump(
        moto.session, moto.names[Table.EVENTS], lambda e: fanout.handle(e, runtime.fanout)
    ).start()
    table = moto.names[Table.EVENTS]

    written = Counter[str]()
    late_joined = threading.Event()

    def processor(worker: int) -> None:  # pages worker, worker + 4, ...: one event each
        # Invocations of up to 8 pages, their events stored together (as the handler).
        log = BufferedEventLog(DynamoDbEventLog(moto.session.client("dynamodb"), table))
        mine = list(range(worker, PAGES, PROCESSORS))
        for first in range(0, len(mine), 1 + worker * 2):
            with log.collecting():
                for page in mine[first:first + 1 + worker * 2]:
                    data = {"url": f"https://docs.example.com/p/{page}.html", "words": page}
                    log.append(job_id, EventType.PAGE_DONE, data, float(page))
            written.update(["page.done"] * len(mine[first:first + 1 + worker * 2]))
            if written["page.done"] > PAGES // 4:  # the late client joins mid-job, whatever
                late_joined.wait(30)  # the timing (batched writes end in a blink)

    log = DynamoDbEventLog(moto.session.client("dynamodb"), table)
    log.append(job_id, EventType.JOB_STARTED, {}, 0.0)
    threads = [threading.Thread(target=processor, args=(w,)) for w in range(PROCESSORS)]
    for thread in threads:
        thread.start()
    late: Client | None = None
    while any(t.is_alive() for t in threads):
        log.append(job_id, EventType.JOB_PROGRESS, {}, 0.0)  # the orchestrator's
        if late is None and written["page.done"] > PAGES // 4:
            late = connect(runtime, recorder, "conn-late", job_id)
            late.subscribe()  # mid-job: a backlog, then live frames
            late_joined.set()
        threads[0].join(0.05)
    for thread in threads:
        thread.join()
    log.append(job_id, EventType.JOB_COMPLETED, {"pages": PAGES}, 1.0)
    pump.stop()
    pump.drain()
    early.pump()
    assert late is not None
    late.pump()

    stored = [e.to_dict() for e in runtime.stores.events.after(job_id, 0, 100_000)]
    assert [e["seq"] for e in stored] == list(range(1, len(stored) + 1))
    assert Counter(e["type"] for e in stored)["page.done"] == PAGES
    # The live path alone: every event once, in seq order, nothing to resync.
    assert early.events == stored and early.resyncs == 0
    # Batched: a stream record per run of events, one frame per stream batch (however
    # many events it brought), not one message per event.
    runs = moto.dynamodb.query(
        TableName=table, KeyConditionExpression="job_id = :j", Select="COUNT",
        ExpressionAttributeValues={":j": {"S": job_id}},
    )["Count"]
    assert sum(pump.batches) == runs < len(stored) and early.frames == len(pump.batches)
    assert late.events == stored and late.events[-1]["type"] == "job.completed"
    assert pump.failures == 0


def test_a_replay_after_5000_events_completes_in_a_few_frames(aws, monkeypatch) -> None:
    moto, runtime, recorder = aws
    calls: Counter[str] = Counter()
    # Before the runtime builds its clients: a client copies the session's hooks.
    moto.session.events.register("before-call", lambda model, **_: calls.update([model.name]))
    job_id = new_job(runtime, "job-5000")
    table = moto.names[Table.EVENTS]
    items = [
        {"job_id": job_id, "seq": seq, "type": "page.done", "ts": seq,
         "data": {"url": f"https://docs.example.com/p/{seq}.html", "words": seq}}
        for seq in range(1, 5_001)
    ]
    resource = moto.session.resource("dynamodb").Table(table)
    with resource.batch_writer() as batch:
        for item in items:
            batch.put_item(Item=item)
    client = connect(runtime, recorder, "conn-replay", job_id)
    calls.clear()

    client.subscribe()
    client.pump()

    assert [e["seq"] for e in client.events] == list(range(1, 5_001))
    assert client.frames <= 12  # ~0.6 MB of events in frames of up to 96 KB
    # The replay's AWS calls: the owner, the job, the subscription, five full pages of
    # the log and the empty one after them, one post per frame (and "subscribed"). At
    # a pessimistic 100 ms each it stays far inside the websocket function's 29 s.
    assert calls["Query"] == 6 and calls["PostToConnection"] == client.frames + 1
    assert sum(calls.values()) * 0.1 < 29


def test_a_replay_short_of_time_stops_before_the_timeout_and_the_client_resumes(aws) -> None:
    """Each AWS call costs 2 s on a pretend clock: a 5,000-event replay cannot fit one
    29 s invocation. The replay stops while time is left and says where to resume; the
    client's next subscribe (a new invocation) goes on from there."""
    moto, runtime, recorder = aws
    clock = [0.0]
    moto.session.events.register("before-call", lambda **_: clock.__setitem__(0, clock[0] + 2))
    job_id = new_job(runtime, "job-5000-slow")
    table = moto.session.resource("dynamodb").Table(moto.names[Table.EVENTS])
    with table.batch_writer() as batch:
        for seq in range(1, 5_001):
            batch.put_item(Item={"job_id": job_id, "seq": seq, "type": "page.done", "ts": seq,
                                 "data": {"url": f"https://docs.example.com/p/{seq}.html"}})
    client = connect(runtime, recorder, "conn-slow", job_id)
    client.clock = lambda: clock[0]

    client.subscribe()
    client.pump()

    assert [e["seq"] for e in client.events] == list(range(1, 5_001))
    assert client.resumes >= 1 and client.resyncs == 0
    assert max(client.spent) <= WEBSOCKET_TIMEOUT_S  # every invocation ended in time
