"""The notify step: a job's terminal event sent to the job's webhook, once delivered.

Run on AWS by an EventBridge rule on ``job.completed`` / ``job.failed`` (the event
arrives with it). EventBridge delivers at least once: a job whose webhook was already
delivered is not sent again. The outcome, good or bad, is recorded on the job
(``webhook_delivery``); nothing here changes the job's status or raises for a receiver
that fails.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..models import Event, EventType
from ..ports import Clock, JobStore
from ..webhook import Delivery, Sender

NOTIFIED = (EventType.JOB_COMPLETED, EventType.JOB_FAILED)


@dataclass(frozen=True)
class NotifyDeps:
    jobs: JobStore
    sender: Sender
    secret: Callable[[], bytes]  # the deployment's signing secret, read when needed
    clock: Clock


def notify(job_id: str, event: Mapping[str, Any], deps: NotifyDeps) -> Delivery | None:
    """Send ``event`` to the job's webhook; None when there is nothing to send."""
    job = deps.jobs.get(job_id)
    if job is None or not job.webhook or (job.webhook_delivery or {}).get("ok"):
        return None
    terminal = _event(job_id, event)
    if terminal is None:
        return None
    delivery = asyncio.run(deps.sender.deliver(job.webhook, terminal, deps.secret()))
    record = {**delivery.to_dict(), "event": str(terminal.type), "at": deps.clock.now()}
    deps.jobs.update(job_id, webhook_delivery=record)
    return delivery


def _event(job_id: str, data: Mapping[str, Any]) -> Event | None:
    try:
        kind = EventType(data.get("type"))
    except ValueError:
        return None
    if kind not in NOTIFIED or data.get("job_id") != job_id:
        return None
    return Event(kind, job_id, int(data.get("seq") or 0), float(data.get("ts") or 0.0),
                 dict(data.get("data") or {}))
