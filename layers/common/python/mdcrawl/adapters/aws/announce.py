"""AnnouncingEventLog: a job's terminal events also go to an EventBridge bus."""

from __future__ import annotations

import json
import logging
from contextlib import AbstractContextManager
from typing import Any

from ...errors import StoreError
from ...models import Event, EventType
from ...ports import EventLog
from .calls import call
from .eventbuffer import collecting

log = logging.getLogger(__name__)

TERMINAL_EVENTS = {
    EventType.JOB_COMPLETED: "Job Completed",
    EventType.JOB_FAILED: "Job Failed",
    EventType.JOB_CANCELLED: "Job Cancelled",
}
EVENT_SOURCE = "mdcrawl"


class AnnouncingEventLog:
    """An ``EventLog`` that also puts a job's terminal event on an EventBridge bus
    (source ``mdcrawl``, detail-type ``Job Completed``/``Job Failed``/``Job Cancelled``,
    detail = the event), for whoever wants to react: a rule to SNS, a Lambda, an API
    destination. The log stays the truth: a failed put is logged, not raised."""

    def __init__(self, inner: EventLog, client: Any, bus: str) -> None:
        self._inner, self._client, self._bus = inner, client, bus

    def append(self, job_id: str, type: EventType, data: dict[str, Any], ts: float) -> Event:
        event = self._inner.append(job_id, type, data, ts)
        if event.type in TERMINAL_EVENTS:
            self._announce(event)
        return event

    def after(self, job_id: str, seq: int = 0, limit: int = 1000) -> list[Event]:
        return self._inner.after(job_id, seq, limit)

    def collecting(self) -> AbstractContextManager[object]:
        """The inner log's block holding appends (``eventbuffer``); a terminal event is
        stored at once even inside one, so it is announced with its seq."""
        return collecting(self._inner)

    def _announce(self, event: Event) -> None:
        entry = {
            "Source": EVENT_SOURCE,
            "DetailType": TERMINAL_EVENTS[event.type],
            "Detail": json.dumps(event.to_dict(), separators=(",", ":")),
            "EventBusName": self._bus,
        }
        try:
            answer = call(self._client.put_events, Entries=[entry])
        except StoreError as exc:
            log.warning("EventBridge put of %s for %s failed: %s", event.type, event.job_id, exc)
            return
        if answer.get("FailedEntryCount"):
            log.warning("EventBridge refused %s for %s: %s", event.type, event.job_id,
                        answer.get("Entries"))
