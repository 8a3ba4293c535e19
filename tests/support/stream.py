"""The events table's DynamoDB Stream, offline.

moto keeps a streamed table's records (when no event source mapping is registered with
it); ``StreamPump`` reads them the way Lambda's DynamoDB event source does — one batch
of up to ``batch_size`` records at a time, in stream order, the next batch only after
the previous one was handled, a failed batch retried before anything later — and hands
each batch to the fan-out function. Records are in commit order because
``moto_clients`` makes each DynamoDB request atomic (``atomic_moto_dynamodb``), as the
service is: moto's own put and its stream numbering would race otherwise.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

RETRIES = 3  # infra/pipeline.py FAN_OUT_RETRIES: then the batch is skipped
POLL_S = 0.25  # Lambda polls each shard of a DynamoDB stream four times a second


class StreamPump:
    def __init__(
        self,
        session: Any,
        table: str,
        deliver: Callable[[dict[str, Any]], Any],
        batch_size: int = 100,
        endpoint: str | None = None,
    ) -> None:
        self._deliver, self._batch_size = deliver, batch_size
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
                if self.step() == 0:
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

    def step(self) -> int:
        """Deliver the next batch (retried up to ``RETRIES`` times); its size."""
        with self._lock:
            answer = self._streams.get_records(ShardIterator=self._iterator, Limit=self._batch_size)
            records = answer["Records"]
            if records:
                self._deliver_with_retries(records)
            self._iterator = answer["NextShardIterator"]
            return len(records)

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
