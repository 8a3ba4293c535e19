"""Live progress over WebSocket: the connections of this server, and the fan-out of events.

The protocol itself is ``service.ws`` (subscribe, backlog, ping, errors); here are only a
``Pusher`` that queues messages for each socket (one sender task per connection keeps
them in order) and the fan-out. Events are appended by several processes (the pool's
workers write ``page.done``), so the hub does not wait to be told: for every job someone
here follows, it reads ``events.after(cursor)`` each tick and fans the new events out with
``ws.fan_out`` (in seq order, batched into frames), moving the cursor past what it sent. A subscribe
lowers the cursor to where its backlog ended, so nothing between the backlog and the
live stream is skipped (an overlap is sent twice; clients drop duplicates by seq).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..errors import StoreError
from ..ports import EventLog
from ..service import WsDeps, ws

log = logging.getLogger(__name__)

POLL_S = 0.1
MAX_QUEUED = 10_000  # a client this far behind is dropped; it reconnects with `after`
EVENTS_PER_READ = 1000


class QueuePusher:
    """The ``Pusher`` port over in-process queues, one per live socket."""

    def __init__(self) -> None:
        self.queues: dict[str, asyncio.Queue[dict[str, Any] | None]] = {}

    def open(self) -> tuple[str, asyncio.Queue[dict[str, Any] | None]]:
        connection_id = uuid.uuid4().hex
        self.queues[connection_id] = asyncio.Queue()
        return connection_id, self.queues[connection_id]

    def close(self, connection_id: str) -> None:
        queue = self.queues.pop(connection_id, None)
        if queue is not None:
            queue.put_nowait(None)  # tells the sender to stop

    def push(self, connection_id: str, message: dict[str, Any]) -> bool:
        """False for a socket that is gone (or left from before a restart) or hopelessly
        behind: ``service.ws`` then forgets the connection."""
        queue = self.queues.get(connection_id)
        if queue is None:
            return False
        if queue.qsize() >= MAX_QUEUED:
            self.close(connection_id)
            return False
        queue.put_nowait(message)
        return True


@dataclass
class FanOutCursors:
    """How far each followed job's events have been fanned out."""

    after: dict[str, int] = field(default_factory=dict)

    def follow(self, job_id: str, backlog_end: int) -> None:
        current = self.after.get(job_id)
        self.after[job_id] = backlog_end if current is None else min(current, backlog_end)


class Hub:
    def __init__(self, deps: WsDeps, events: EventLog, pusher: QueuePusher) -> None:
        self.deps, self.events, self.pusher = deps, events, pusher
        self.cursors = FanOutCursors()

    def handle_message(self, connection_id: str, text: str) -> None:
        sent = ws.on_message(connection_id, text, self.deps)
        for job_id, end in _subscriptions(sent):
            self.cursors.follow(job_id, end)

    def tick(self) -> None:
        """Fan out every event appended since the last tick, job by job, in order."""
        for job_id in list(self.cursors.after):
            if not self.deps.connections.for_job(job_id):
                del self.cursors.after[job_id]  # nobody follows it here any more
                continue
            self._fan_out_new(job_id)

    def _fan_out_new(self, job_id: str) -> None:
        while True:
            events = self.events.after(job_id, self.cursors.after[job_id], EVENTS_PER_READ)
            if events:
                ws.fan_out(events, self.deps)
                self.cursors.after[job_id] = events[-1].seq
            if len(events) < EVENTS_PER_READ:
                return

    async def run(self) -> None:
        while True:
            try:
                self.tick()
            except StoreError:  # a storage hiccup must not end live progress for good
                log.exception("fan-out tick failed; retrying")
            await asyncio.sleep(POLL_S)


def _subscriptions(sent: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """(job, last seq sent in its backlog) for each successful subscribe in ``sent``."""
    found: dict[str, int] = {}
    for message in sent:
        if message.get("type") == "subscribed":
            found[message["job_id"]] = int(message["after"])
        for event in ws.events_in(message):
            if event.get("job_id") in found:
                found[event["job_id"]] = max(found[event["job_id"]], int(event["seq"]))
    return list(found.items())
