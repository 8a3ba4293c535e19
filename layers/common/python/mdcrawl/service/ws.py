"""The WebSocket protocol: connect, subscribe to a job, receive its backlog then live events.

Every message to a client goes through the ``Pusher`` port (API Gateway's Management
API on AWS, the socket in ``mdcrawl serve``), in the order it is produced here.

Events travel in frames: ``{"type": "events", "job_id", "events": [event, ...]}``, the
events in seq order, each frame at most ``FRAME_BYTES`` of JSON (API Gateway's 128 KB
message limit, with room to spare). The backlog is sent in such frames, a page of the
log at a time, and live events too (on AWS one frame carries what a DynamoDB Stream
batch brought; in ``serve``, what one poll found): a 10,000-event replay is a few dozen
messages, not 10,000.

Delivery contract (docs/api.md): events carry the job's ``seq`` (1, 2, 3... without
gaps). ``subscribe`` registers the connection *before* reading the backlog, so an event
appended meanwhile is never lost, only possibly sent twice, or a live one ahead of the
end of the backlog. A client therefore keeps the last seq it handled, drops anything at
or below it, and on a gap re-sends ``subscribe`` with ``after`` = that seq (and ignores
the rest of that frame): it then sees every event exactly once, in order
(``EventCursor`` and ``events_in`` do exactly this). A terminal event is appended only
when the job is over, so it is never seen before the job really is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import StoreError
from ..models import Event
from .deps import WsDeps

BACKLOG_PAGE = 1000
FRAME = "events"  # the type of a frame of events
RESUME = "resume"  # the backlog stopped short: subscribe again with ``after`` to go on
# A replay stops sending while this much of the function's time is left (a page of the
# log is one query and a few posts, well under a second each on AWS; the rest is margin
# for a slow one): the client is told where to resume instead of the function timing out.
REPLAY_RESERVE_S = 5.0
# API Gateway refuses WebSocket messages over 128 KB; frames stay under this many bytes
# of compact JSON (a transport that adds spaces stays under the limit too).
FRAME_BYTES = 96 * 1024
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


def on_message(
    connection_id: str, body: str, deps: WsDeps, time_left: Callable[[], float] | None = None
) -> list[dict[str, Any]]:
    """Act on one client message; returns the messages pushed back to that connection.
    ``time_left``: seconds the caller has left (a Lambda's remaining time), None when
    unbounded (``mdcrawl serve``); a backlog replay stops in time (``RESUME``)."""
    outbox = _Outbox(connection_id, deps)
    message = _parse(body, deps.max_message_bytes, outbox)
    if message is None:
        return outbox.sent
    action = message.get("action")
    if action == "ping":
        outbox.send({"type": "pong"})
    elif action == "subscribe":
        _subscribe(message, outbox, deps, time_left)
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


def _subscribe(
    message: dict[str, Any], outbox: _Outbox, deps: WsDeps,
    time_left: Callable[[], float] | None = None,
) -> None:
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
    _send_backlog(job.job_id, request.after, outbox, deps, time_left)


def _send_backlog(
    job_id: str, after: int, outbox: _Outbox, deps: WsDeps,
    time_left: Callable[[], float] | None = None,
) -> None:
    """The events after ``after``, a page of the log at a time, in frames. With too
    little time left for another page or frame, it sends ``{"type": "resume", "job_id",
    "after"}`` (the last seq sent) and stops: the client subscribes again from there."""

    def short() -> bool:
        return time_left is not None and time_left() < REPLAY_RESERVE_S

    while outbox.open:
        if short():
            outbox.send({"type": RESUME, "job_id": job_id, "after": after})
            return
        events = deps.events.after(job_id, after, BACKLOG_PAGE)
        for frame in frames(job_id, events):
            if short():
                outbox.send({"type": RESUME, "job_id": job_id, "after": after})
                return
            if not outbox.send(frame):
                return
            after = frame["events"][-1]["seq"]
        if len(events) < BACKLOG_PAGE:
            return


def frames(job_id: str, events: Iterable[Event]) -> list[dict[str, Any]]:
    """``events`` (one job's, in seq order) as frames of at most ``FRAME_BYTES``."""
    out: list[dict[str, Any]] = []
    batch: list[dict[str, Any]] = []
    size = _FRAME_OVERHEAD + len(job_id)
    for event in events:
        message = event.to_dict()
        grows = len(json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()) + 1
        if batch and size + grows > FRAME_BYTES:
            out.append(_frame(job_id, batch))
            batch, size = [], _FRAME_OVERHEAD + len(job_id)
        batch.append(message)
        size += grows
    if batch:
        out.append(_frame(job_id, batch))
    return out


def _frame(job_id: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": FRAME, "job_id": job_id, "events": events}


_FRAME_OVERHEAD = len(json.dumps(_frame("", []), separators=(",", ":")))


def resume_after(message: dict[str, Any]) -> int | None:
    """For a ``resume`` message, the ``after`` to subscribe with again; else None."""
    after = message.get("after") if message.get("type") == RESUME else None
    return after if isinstance(after, int) else None


def events_in(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The events a message carries, in order: a frame's, or a lone event's (what a
    server before frames sent), or none (``subscribed``, ``pong``, ``error``)."""
    if message.get("type") == FRAME:
        found = message.get("events")
        return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []
    return [message] if "seq" in message else []


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
    delivered: int = 0  # frames delivered
    removed: int = 0  # connections found gone, and forgotten
    failed: int = 0  # pushes that failed for another reason (the client will resync)


def fan_out(events: Iterable[Event], deps: WsDeps) -> FanOut:
    """Push new ``events`` to every connection subscribed to their job, job by job, in
    seq order, batched into frames; one bad connection never keeps the others from
    being served. A connection whose push fails gets no later frame of this call (it
    would show a gap; the client resyncs from the log)."""
    by_job: dict[str, dict[int, Event]] = {}
    for event in events:
        by_job.setdefault(event.job_id, {})[event.seq] = event  # a redelivery counts once
    total = FanOut()
    for job_id, found in by_job.items():
        ordered = [found[seq] for seq in sorted(found)]
        total = _add(total, _fan_out_job(job_id, frames(job_id, ordered), deps))
    return total


def _fan_out_job(job_id: str, messages: list[dict[str, Any]], deps: WsDeps) -> FanOut:
    delivered = removed = failed = 0
    for connection_id in deps.connections.for_job(job_id):
        for message in messages:
            try:
                ok = deps.pusher.push(connection_id, message)
            except StoreError:
                failed += 1
                break
            if not ok:
                deps.connections.remove(connection_id)
                removed += 1
                break
            delivered += 1
    return FanOut(delivered, removed, failed)


def _add(a: FanOut, b: FanOut) -> FanOut:
    return FanOut(a.delivered + b.delivered, a.removed + b.removed, a.failed + b.failed)


class Verdict(StrEnum):
    DELIVER = "deliver"  # the next event: handle it
    DROP = "drop"  # seen already (a duplicate from the subscribe/live overlap)
    RESYNC = "resync"  # a gap: re-subscribe with after=cursor.last


@dataclass
class EventCursor:
    """The client side of the delivery contract (used by ``mdcrawl watch`` and tests),
    for each event of ``events_in(message)``; after a RESYNC, the rest of the frame is
    not looked at (the re-subscribe sends it again)."""

    last: int = 0

    def accept(self, message: dict[str, Any]) -> Verdict:
        seq = message.get("seq")
        if not isinstance(seq, int) or seq <= self.last:
            return Verdict.DROP
        if seq > self.last + 1:
            return Verdict.RESYNC
        self.last = seq
        return Verdict.DELIVER
