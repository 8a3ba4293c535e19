"""The events table's DynamoDB Stream, as the fan-out function receives it: a batch of
records (``{"Records": [{"eventName", "dynamodb": {"NewImage": ...}}, ...]}``) -> the
new events. Only inserts are events; the TTL's removals are not. A record is one item
of the log, a run of consecutive events (``events.py``): it expands into all of them,
in seq order, the records in the batch's order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...models import Event
from .dynamo import from_item
from .events import events_of

INSERT = "INSERT"


def stream_events(records: Iterable[dict[str, Any]]) -> list[Event]:
    """The events a stream batch inserted, in the batch's order."""
    return [
        event
        for record in records
        if record.get("eventName") == INSERT and "NewImage" in record.get("dynamodb", {})
        for event in events_of(from_item(record["dynamodb"]["NewImage"]))
    ]
