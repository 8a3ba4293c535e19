"""The events table's DynamoDB Stream, offline.

moto keeps a streamed table's records (when no event source mapping is registered with
it); ``StreamPump`` reads them the way Lambda's DynamoDB event source does — one batch
of up to ``batch_size`` records at a time (gathered for up to ``WINDOW_S``, the
mapping's batching window), in stream order, the next batch only after the previous
one was handled, a failed batch retried before anything later — and hands each batch
to the fan-out function. Records are in commit order because
``moto_clients`` makes each DynamoDB request atomic (``atomic_moto_dynamodb``), as the
service is: moto's own put and its stream numbering would race otherwise.

``Subscriber`` is a WebSocket client of the offline stack (the e2e tests', and
``bench.cost --watch``'s): it connects and subscribes through the websocket handler and
follows the delivery contract over what the management API delivered to it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mdcrawl.service.ws import EventCursor, Verdict, events_in, resume_after

RETRIES = 3  # infra/pipeline.py FAN_OUT_RETRIES: then the batch is skipped
POLL_S = 0.25  # Lambda polls each shard of a DynamoDB stream four times a second
# infra/pipeline.py FAN_OUT_WINDOW_S: a batch short of ``batch_size`` waits until its
# first record is this old (Lambda's MaximumBatchingWindowInSeconds)
WINDOW_S = 1


class StreamPump:
    def __init__(
        self,
        session: Any,
        table: str,
        deliver: Callable[[dict[str, Any]], Any],
        batch_size: int = 100,
        endpoint: str | None = None,
        window_s: float = WINDOW_S,
    ) -> None:
        self._deliver, self._batch_size, self._window_s = deliver, batch_size, window_s
        self._held: list[dict[str, Any]] = []  # read, waiting for the window to end
        self._held_since = 0.0
        # botocore would address a stream ARN's account-specific endpoint, which moto
        # does not serve: the regional one (or moto's server, ``endpoint``).
        region = session.region_name
        streams = session.client(
            "dynamodbstreams",
            endpoint_url=endpoint or f"https://streams.dynamodb.{region}.amazonaws.com",
        )
        arn = session.client("dynamodb").describe_table(TableName=table)["Table"][
            "LatestStreamArn"
        ]
        (shard,) = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        self._streams, self._arn = streams, arn
        self._iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.batches: list[int] = []  # records per delivered batch
        self.failures = 0

    def start(self, poll_s: float = POLL_S) -> StreamPump:
        def run() -> None:
            while not self._stop.is_set():
                if self.step(wait=True) == 0:
                    time.sleep(poll_s)

        self._thread = threading.Thread(target=run, name="stream-pump", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def drain(self) -> None:
        """Deliver every record written so far."""
        while self.step():
            pass

    def step(self, wait: bool = False) -> int:
        """Deliver the next batch (retried up to ``RETRIES`` times); its size. ``wait``:
        as the batching window, a batch short of ``batch_size`` is held (and 0 answered)
        until its first record is ``window_s`` old."""
        with self._lock:
            room = self._batch_size - len(self._held)
            answer = self._streams.get_records(ShardIterator=self._iterator, Limit=room)
            self._iterator = answer["NextShardIterator"]
            if answer["Records"] and not self._held:
                self._held_since = time.monotonic()
            self._held.extend(answer["Records"])
            records = self._held
            full = len(records) >= self._batch_size
            if not records or (wait and not full and not self._window_over()):
                return 0
            self._held = []
            self._deliver_with_retries(records)
            return len(records)

    def _window_over(self) -> bool:
        return time.monotonic() - self._held_since >= self._window_s

    def _deliver_with_retries(self, records: list[dict[str, Any]]) -> None:
        event = {"Records": [{**r, "eventSourceARN": self._arn} for r in records]}
        for _ in range(1 + RETRIES):
            try:
                self._deliver(event)
            except Exception:  # noqa: BLE001 - a function error: Lambda retries the batch
                self.failures += 1
                continue
            self.batches.append(len(records))
            return


@dataclass
class Subscriber:
    """A WebSocket client: connects through the websocket handler, reads what the
    management API delivered to its connection, and follows the delivery contract
    (drop duplicates, re-subscribe with ``after`` on a gap)."""

    stack: Any  # tests.support.sfn.OfflineStack (which imports this module)
    connection_id: str
    cursor: EventCursor = field(default_factory=EventCursor)
    events: list[dict[str, Any]] = field(default_factory=list)
    other: list[dict[str, Any]] = field(default_factory=list)
    read: int = 0
    resyncs: int = 0
    resumes: int = 0
    frames: int = 0
    job_id: str = ""

    def connect(self, api_key: str | None = None) -> int:
        key = self.stack.api_key if api_key is None else api_key
        answer = self.stack.ws_event(
            "$connect", self.connection_id, queryStringParameters={"api_key": key}
        )
        if answer["statusCode"] == 200:
            self.stack.ws.open.add(self.connection_id)
        return int(answer["statusCode"])

    def subscribe(self, job_id: str, after: int | None = None) -> None:
        self.job_id = job_id
        body = {"action": "subscribe", "job_id": job_id,
                "after": self.cursor.last if after is None else after}
        self.stack.ws_event("subscribe", self.connection_id, body=json.dumps(body))

    def drop(self) -> None:
        """The client goes away without a $disconnect (a stale connection)."""
        self.stack.ws.open.discard(self.connection_id)

    def pump(self, drain: bool = True) -> list[dict[str, Any]]:
        """Handle what was delivered so far; ``drain``: first deliver what the stream
        holds (a test's pump; a running pump thread does it on its own)."""
        if drain and self.stack.stream is not None:
            self.stack.stream.drain()  # what the stream holds reaches the fan-out first
        messages = self.stack.ws.messages[self.connection_id]
        while self.read < len(messages):
            message = json.loads(messages[self.read])
            self.read += 1
            if resume_after(message) is not None:  # the replay stopped short: go on
                self.resumes += 1
                self.subscribe(self.job_id)
                continue
            if message.get("type") != "events":
                self.other.append(message)
                continue
            self.frames += 1
            for event in events_in(message):
                verdict = self.cursor.accept(event)
                if verdict is Verdict.DELIVER:
                    self.events.append(event)
                elif verdict is Verdict.RESYNC:
                    self.resyncs += 1
                    self.subscribe(self.job_id)
                    break
        return self.events
