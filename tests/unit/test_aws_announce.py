"""Terminal events go to EventBridge as well; the event log stays the truth when the
bus refuses (the write is not failed)."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError
from mdcrawl.adapters.aws.announce import AnnouncingEventLog
from mdcrawl.models import Event, EventType


class Log:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def append(self, job_id: str, type: EventType, data: dict[str, Any], ts: float) -> Event:
        event = Event(type=type, job_id=job_id, seq=len(self.events) + 1, ts=ts, data=data)
        self.events.append(event)
        return event

    def after(self, job_id: str, seq: int = 0, limit: int = 1000) -> list[Event]:
        return self.events[seq:limit]


class Bus:
    def __init__(self, fail: bool = False) -> None:
        self.entries: list[dict[str, Any]] = []
        self.fail = fail

    def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:  # noqa: N803
        if self.fail:
            raise ClientError({"Error": {"Code": "ThrottlingException"}}, "PutEvents")
        self.entries.extend(Entries)
        return {"FailedEntryCount": 0}


def test_only_terminal_events_are_announced_with_the_event_as_detail() -> None:
    bus = Bus()
    log = AnnouncingEventLog(Log(), bus, "default")
    log.append("j1", EventType.JOB_STARTED, {}, 1.0)
    log.append("j1", EventType.PAGE_DONE, {"url": "u"}, 2.0)
    done = log.append("j1", EventType.JOB_COMPLETED, {"pages": 1}, 3.0)
    (entry,) = bus.entries
    assert entry["Source"] == "mdcrawl" and entry["DetailType"] == "Job Completed"
    assert entry["EventBusName"] == "default"
    import json

    assert json.loads(entry["Detail"]) == done.to_dict()


def test_a_refused_put_does_not_fail_the_write() -> None:
    inner = Log()
    log = AnnouncingEventLog(inner, Bus(fail=True), "default")
    event = log.append("j1", EventType.JOB_FAILED, {"error": "x"}, 1.0)
    assert inner.events == [event] and log.after("j1") == [event]
