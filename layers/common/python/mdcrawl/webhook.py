"""A job's terminal event POSTed to the URL its creator gave, signed.

The body is the event as the API shows it (``type``, ``job_id``, ``seq``, ``ts``,
``data``). Headers:

- ``X-Mdcrawl-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>``
- ``X-Mdcrawl-Event: job.completed`` (or ``job.failed``), ``X-Mdcrawl-Delivery: <job>-<seq>``
  (the same on every retry: a receiver may drop repeats by it).

A receiver recomputes the HMAC over the raw body with the deployment's secret, compares
in constant time (``verify``) and refuses a timestamp more than ``TOLERANCE_S`` from its
clock: a captured request cannot be replayed later. The URL goes through the same SSRF
guard as crawl URLs (``netguard``: every resolved address checked, the connection pinned
to it), redirects are not followed, and a delivery is retried with backoff on network
errors, 408, 429 and 5xx. The outcome is returned, never raised: a webhook that fails
is recorded on the job, the job stays as it ended.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpcore
import httpx

from .errors import UnsafeUrl
from .models import Event
from .netguard import AddressGuard, GuardedNetworkBackend

SIGNATURE_HEADER = "X-Mdcrawl-Signature"
TOLERANCE_S = 300
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class Delivery:
    """What happened to one webhook: ``ok`` after a 2xx, else why not."""

    ok: bool
    attempts: int
    status: int | None = None
    error: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "attempts": self.attempts, "status": self.status,
                "error": self.error}


def sign(secret: bytes, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def verify(
    secret: bytes, header: str, body: bytes, now: float, tolerance_s: int = TOLERANCE_S
) -> bool:
    """The receiver's check: a signature of this body, made within ``tolerance_s``."""
    parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    try:
        timestamp = int(parts.get("t", ""))
    except ValueError:
        return False
    if abs(now - timestamp) > tolerance_s:
        return False
    expected = sign(secret, timestamp, body).split("v1=", 1)[1]
    return hmac.compare_digest(expected, parts.get("v1", ""))


def event_body(event: Event) -> bytes:
    return json.dumps(event.to_dict(), separators=(",", ":"), sort_keys=True).encode()


@dataclass(frozen=True)
class Sender:
    """How deliveries go out: the guard, the retry schedule, the clock (tests shorten them)."""

    guard: AddressGuard
    attempts: int = 4
    backoff_s: float = 1.0  # 1, 2, 4 s between attempts
    timeout_s: float = 10.0
    now: Callable[[], float] = time.time
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    async def deliver(self, url: str, event: Event, secret: bytes) -> Delivery:
        try:
            self.guard.check_url(url)
        except UnsafeUrl as exc:
            return Delivery(False, 0, error=f"unsafe_url: {exc}")
        body = event_body(event)
        async with httpx.AsyncClient(transport=self._transport(), timeout=self.timeout_s,
                                     follow_redirects=False, trust_env=False) as client:
            return await self._attempts(client, url, event, body, secret)

    async def _attempts(
        self, client: httpx.AsyncClient, url: str, event: Event, body: bytes, secret: bytes
    ) -> Delivery:
        last = Delivery(False, 0)
        for attempt in range(1, self.attempts + 1):
            if attempt > 1:
                await self.sleep(self.backoff_s * 2 ** (attempt - 2))
            last = await self._once(client, url, event, body, secret, attempt)
            if last.ok or not _worth_retrying(last):
                return last
        return last

    async def _once(
        self, client: httpx.AsyncClient, url: str, event: Event, body: bytes, secret: bytes,
        attempt: int,
    ) -> Delivery:
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: sign(secret, int(self.now()), body),
            "X-Mdcrawl-Event": str(event.type),
            "X-Mdcrawl-Delivery": f"{event.job_id}-{event.seq}",
        }
        try:
            response = await client.post(url, content=body, headers=headers)
        except (httpx.HTTPError, UnsafeUrl) as exc:
            return Delivery(False, attempt, error=f"{type(exc).__name__}: {exc}"[:500])
        ok = 200 <= response.status_code < 300
        error = "" if ok else f"HTTP {response.status_code}"
        return Delivery(ok, attempt, response.status_code, error)

    def _transport(self) -> httpx.AsyncBaseTransport:
        transport = httpx.AsyncHTTPTransport(trust_env=False)
        # As fetch.py does: the guard's backend connects only to an address it checked.
        transport._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            network_backend=GuardedNetworkBackend(self.guard),
        )
        return transport


def _worth_retrying(delivery: Delivery) -> bool:
    return delivery.status is None or delivery.status in RETRY_STATUSES
