"""The WebSocket protocol: connect, subscribe to a job, receive its backlog then live events.

Every message to a client goes through the ``Pusher`` port (API Gateway's Management
API on AWS, the socket in ``mdcrawl serve``), in the order it is produced here.

Delivery contract (docs/api.md): events carry the job's ``seq`` (1, 2, 3... without
gaps). ``subscribe`` registers the connection *before* reading the backlog, so an event
appended meanwhile is never lost, only possibly sent twice, or a live one ahead of the
end of the backlog. A client therefore keeps the last seq it handled, drops anything at
or below it, and on a gap re-sends ``subscribe`` with ``after`` = that seq: it then sees
every event exactly once, in order (``EventCursor`` does exactly this). A terminal event
is appended only when the job is over, so it is never seen before the job really is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import StoreError
from ..models import Event
from .deps import WsDeps

BACKLOG_PAGE = 1000
MAX_AFTER = 2**62  # as REST's ``after``: larger fits no store's integer (SQLite overflowed)


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Subscribe(_Message):
    action: str
    job_id: str = Field(min_length=1, max_length=128)
    after: int = Field(default=0, ge=0, le=MAX_AFTER)


def on_connect(connection_id: str, owner: str, deps: WsDeps) -> bool:
    """Record an authenticated connection; False (refuse it) when there is no owner."""
    if not owner:
        return False
    deps.connections.add(connection_id, owner, deps.clock.now())
    return True


def on_disconnect(connection_id: str, deps: WsDeps) -> None:
    deps.connections.remove(connection_id)


def on_message(connection_id: str, body: str, deps: WsDeps) -> list[dict[str, Any]]:
    """Act on one client message; returns the messages pushed back to that connection."""
    outbox = _Outbox(connection_id, deps)
    message = _parse(body, deps.max_message_bytes, outbox)
    if message is None:
        return outbox.sent
    action = message.get("action")
    if action == "ping":
        outbox.send({"type": "pong"})
    elif action == "subscribe":
        _subscribe(message, outbox, deps)
    else:
        outbox.error("unknown_action", "action must be 'subscribe' or 'ping'")
    return outbox.sent


def _parse(body: str, max_bytes: int, outbox: _Outbox) -> dict[str, Any] | None:
    if len(body.encode("utf-8", "surrogatepass")) > max_bytes:
        outbox.error("message_too_large", f"messages are limited to {max_bytes} bytes")
        return None
    try:
        message = json.loads(body)
    except (json.JSONDecodeError, RecursionError):
        outbox.error("invalid_json", "the message is not valid JSON")
        return None
    if not isinstance(message, dict):
        outbox.error("invalid_json", "the message must be a JSON object")
        return None
    return message


def _subscribe(message: dict[str, Any], outbox: _Outbox, deps: WsDeps) -> None:
    try:
        request = Subscribe.model_validate(message)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in first["loc"]) or "message"
        outbox.error("invalid_input", f"{field}: {first['msg']}")
        return
    owner = deps.connections.owner(outbox.connection_id)
    job = deps.jobs.get(request.job_id) if owner else None
    if job is None or job.owner != owner:
        # Somebody else's job is as unknown as a job that never existed.
        outbox.error("not_found", f"no job {request.job_id!r}", job_id=request.job_id)
        return
    deps.connections.subscribe(outbox.connection_id, job.job_id)
    outbox.send({"type": "subscribed", "job_id": job.job_id, "after": request.after})
    _send_backlog(job.job_id, request.after, outbox, deps)


def _send_backlog(job_id: str, after: int, outbox: _Outbox, deps: WsDeps) -> None:
    while outbox.open:
        events = deps.events.after(job_id, after, BACKLOG_PAGE)
        for event in events:
            if not outbox.send(event.to_dict()):
                return
            after = event.seq
        if len(events) < BACKLOG_PAGE:
            return


class _Outbox:
    """Pushes to one connection, remembering what went out; forgets a gone connection."""

    def __init__(self, connection_id: str, deps: WsDeps) -> None:
        self.connection_id = connection_id
        self.deps = deps
        self.sent: list[dict[str, Any]] = []
        self.open = True

    def send(self, message: dict[str, Any]) -> bool:
        if self.open and self.deps.pusher.push(self.connection_id, message):
            self.sent.append(message)
            return True
        if self.open:
            self.open = False
            self.deps.connections.remove(self.connection_id)
        return False

    def error(self, code: str, text: str, **extra: Any) -> None:
        self.send({"type": "error", **extra, "error": {"code": code, "message": text}})


@dataclass(frozen=True)
class FanOut:
    delivered: int = 0
    removed: int = 0  # connections found gone, and forgotten
    failed: int = 0  # pushes that failed for another reason (the client will resync)


def fan_out(event: Event, deps: WsDeps) -> FanOut:
    """Push ``event`` to every connection subscribed to its job; one bad connection never
    keeps the others from being served."""
    delivered = removed = failed = 0
    message = event.to_dict()
    for connection_id in deps.connections.for_job(event.job_id):
        try:
            ok = deps.pusher.push(connection_id, message)
        except StoreError:
            failed += 1
            continue
        if ok:
            delivered += 1
        else:
            deps.connections.remove(connection_id)
            removed += 1
    return FanOut(delivered, removed, failed)


class Verdict(StrEnum):
    DELIVER = "deliver"  # the next event: handle it
    DROP = "drop"  # seen already (a duplicate from the subscribe/live overlap)
    RESYNC = "resync"  # a gap: re-subscribe with after=cursor.last


@dataclass
class EventCursor:
    """The client side of the delivery contract (used by ``mdcrawl watch`` and tests)."""

    last: int = 0

    def accept(self, message: dict[str, Any]) -> Verdict:
        seq = message.get("seq")
        if not isinstance(seq, int) or seq <= self.last:
            return Verdict.DROP
        if seq > self.last + 1:
            return Verdict.RESYNC
        self.last = seq
        return Verdict.DELIVER
