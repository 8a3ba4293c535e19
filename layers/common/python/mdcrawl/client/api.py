"""The client side of the API, for `mdcrawl submit` and `mdcrawl watch`: the same REST and
WebSocket protocol a deployed stack speaks (docs/api.md), so a terminal drives either.

``watch`` keeps ``EventCursor`` (service.ws): it handles each event once, in seq order,
re-subscribes with ``after`` on a gap, and after a dropped connection reconnects and
subscribes with ``after`` = the last seq it handled, so nothing is lost or repeated.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from ..service.ws import EventCursor, Verdict, events_in, resume_after

TERMINAL = {"job.completed": 0, "job.failed": 1, "job.cancelled": 1}
RECONNECT_MAX_S = 5.0
GIVE_UP_AFTER_FAILURES = 30  # consecutive failed connects (about two minutes)


class ApiFailure(Exception):
    """The API answered an error (its body's message), or could not be reached."""


@dataclass(frozen=True)
class Endpoint:
    api: str  # REST base, e.g. http://127.0.0.1:8000 or https://x.execute-api.../prod
    api_key: str
    ws: str = ""  # WebSocket URL; default: the REST base with a ws(s) scheme

    @property
    def ws_url(self) -> str:
        base = self.ws or _as_ws(self.api)
        parts = urlsplit(base)
        query = urlencode({"api_key": self.api_key})
        return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", query, ""))


def _as_ws(url: str) -> str:
    return "wss" + url[5:] if url.startswith("https") else "ws" + url.removeprefix("http")


def submit(endpoint: Endpoint, body: dict[str, Any], idempotency_key: str | None = None) -> dict:
    headers = {"x-api-key": endpoint.api_key}
    if idempotency_key:
        headers["Idempotency-Key"] = idempotency_key
    try:
        response = httpx.post(f"{endpoint.api.rstrip('/')}/jobs", json=body, headers=headers)
    except httpx.HTTPError as exc:
        raise ApiFailure(f"cannot reach {endpoint.api}: {exc}") from exc
    if response.status_code != 202:
        raise ApiFailure(_error_text(response))
    return dict(response.json())


def _error_text(response: httpx.Response) -> str:
    try:
        error = response.json()["error"]
        return f"{response.status_code} {error['code']}: {error['message']}"
    except (ValueError, KeyError, TypeError):
        return f"HTTP {response.status_code}"


async def watch(endpoint: Endpoint, job_id: str, show: Callable[[dict], None]) -> int:
    """Follow the job until its terminal event; returns 0 if it completed, else 1."""
    cursor, failures = EventCursor(), 0
    while True:
        try:
            async with connect(endpoint.ws_url, open_timeout=10) as socket:
                failures = 0
                outcome = await _follow(socket, job_id, cursor, show)
                if outcome is not None:
                    return outcome
        except InvalidStatus as exc:
            raise ApiFailure(f"the server refused the connection ({exc})") from exc
        except (ConnectionClosed, InvalidHandshake, OSError, TimeoutError):
            failures += 1
            if failures >= GIVE_UP_AFTER_FAILURES:
                raise ApiFailure(f"lost the connection to {endpoint.ws_url}") from None
            await asyncio.sleep(min(RECONNECT_MAX_S, 0.2 * 2**failures))


async def _follow(socket, job_id: str, cursor: EventCursor, show) -> int | None:  # type: ignore[no-untyped-def]
    await _subscribe(socket, job_id, cursor.last)
    async for text in socket:
        message = json.loads(text)
        if message.get("type") == "error":
            raise ApiFailure(f"{message['error']['code']}: {message['error']['message']}")
        if resume_after(message) is not None:  # the server's replay stopped short: go on
            await _subscribe(socket, job_id, cursor.last)
            continue
        for event in events_in(message):  # a frame of events, in seq order
            verdict = cursor.accept(event)
            if verdict is Verdict.RESYNC:
                await _subscribe(socket, job_id, cursor.last)
                break  # the rest of this frame comes again after the re-subscribe
            if verdict is Verdict.DELIVER:
                show(event)
                if event["type"] in TERMINAL:
                    return TERMINAL[event["type"]]
    return None  # closed by the server: reconnect and resume from cursor.last


async def _subscribe(socket, job_id: str, after: int) -> None:  # type: ignore[no-untyped-def]
    await socket.send(json.dumps({"action": "subscribe", "job_id": job_id, "after": after}))


def describe(event: dict[str, Any]) -> str:
    """One terminal line per event."""
    data, kind = event.get("data") or {}, event["type"]
    if kind == "job.progress":
        c = data.get("counters", {})
        elapsed = float(data.get("elapsed") or 0.0)
        rate = c.get("processed", 0) / elapsed if elapsed > 0 else 0.0
        return (
            f"  {c.get('discovered', 0)} found · {c.get('crawled', 0)} crawled · "
            f"{c.get('processed', 0)} converted · {c.get('failed', 0)} failed · "
            f"{rate:.1f} pages/s · {elapsed:.0f}/{float(data.get('budget') or 0):.0f} s"
        )
    if kind == "page.done":
        return f"  ok   {data.get('url', '')} ({data.get('words', 0)} words)"
    if kind == "page.failed":
        return f"  FAIL {data.get('url', '')}: {data.get('reason', '')}"
    if kind == "job.completed":
        cut = f", truncated ({data.get('left', 0)} left)" if data.get("truncated") else ""
        return f"completed: {data.get('pages', 0)} pages, {data.get('words', 0):,} words{cut}"
    if kind == "job.failed":
        return f"failed: {data.get('error', '')}"
    if kind == "job.cancelled":
        return "cancelled"
    return f"{kind}: {event['job_id']}"
