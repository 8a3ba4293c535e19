"""The events table's DynamoDB Stream, as the fan-out function receives it: a batch of
records (``{"Records": [{"eventName", "dynamodb": {"NewImage": ...}}, ...]}``) -> the
new events. Only inserts are events; the TTL's removals are not."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...models import Event
from .dynamo import from_item
from .events import event_of

INSERT = "INSERT"


def stream_events(records: Iterable[dict[str, Any]]) -> list[Event]:
    """The events a stream batch inserted, in the batch's order."""
    return [
        event_of(from_item(record["dynamodb"]["NewImage"]))
        for record in records
        if record.get("eventName") == INSERT and "NewImage" in record.get("dynamodb", {})
    ]
