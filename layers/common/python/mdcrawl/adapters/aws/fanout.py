"""FanOutEventLog: each appended event pushed to the job's WebSocket subscribers."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ...errors import StoreError
from ...models import Event, EventType
from ...ports import EventLog
from ...service.deps import WsDeps
from ...service.ws import fan_out

log = logging.getLogger(__name__)


class FanOutEventLog:
    """An ``EventLog`` that pushes every appended event to the job's WebSocket subscribers
    right away. A failed push never fails the write: the client resyncs from the log."""

    def __init__(self, inner: EventLog, ws: Callable[[], WsDeps]) -> None:
        self._inner, self._ws = inner, ws

    def append(self, job_id: str, type: EventType, data: dict[str, Any], ts: float) -> Event:
        event = self._inner.append(job_id, type, data, ts)
        try:
            fan_out(event, self._ws())
        except StoreError as exc:  # connections table unavailable: subscribers resync
            log.warning("fan-out of %s #%d failed: %s", event.type, event.seq, exc)
        return event

    def after(self, job_id: str, seq: int = 0, limit: int = 1000) -> list[Event]:
        return self._inner.after(job_id, seq, limit)
