"""Per-host politeness across crawler invocations and jobs: a host serves at most
``limit`` of our requests at once, however many crawler invocations run.

The fetcher (fetch.py) caps requests per host inside one invocation; on AWS the
orchestrator keeps several crawler invocations in flight and several jobs may crawl
the same site, so the cap must live in shared storage. A host has ``limit`` slots,
items ``host#<netloc>#<i>`` in the cache table (shared by every job, like the
content cache; the key cannot collide with a URL hash). A fetch takes a free slot
with one conditional PutItem (free: absent, or its lease expired: a crawler that died
mid-request frees its slot after ``lease_s``) and gives it back with a conditional
DeleteItem. A job asking for concurrency N uses slots 0..N-1, so jobs together never
exceed the largest concurrency any of them asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

from ...errors import FetchTimeout
from ...fetch import RobotsCache
from ...models import FetchResult
from ...names import TTL_ATTRIBUTE
from .calls import call_if

SLOT_PREFIX = "host#"


class HostLeases:
    def __init__(
        self,
        client: Any,
        table: str,
        *,
        lease_s: float = 90.0,
        wait_s: float = 60.0,
        now: Callable[[], float] = time.time,
    ) -> None:
        self._client, self._table = client, table
        self._lease_s, self._wait_s, self._now = lease_s, wait_s, now

    @contextlib.asynccontextmanager
    async def hold(self, host: str, limit: int) -> AsyncIterator[None]:
        """One of ``host``'s ``limit`` slots for the duration of the block."""
        token = uuid.uuid4().hex
        slot = await self._acquire(host, max(limit, 1), token)
        try:
            yield
        finally:
            await asyncio.to_thread(self._release, slot, token)

    async def _acquire(self, host: str, limit: int, token: str) -> str:
        give_up = time.monotonic() + self._wait_s
        pause = 0.02
        slots = [f"{SLOT_PREFIX}{host}#{i}" for i in range(limit)]
        while True:
            random.shuffle(slots)  # no thundering herd on slot 0
            for slot in slots:
                if await asyncio.to_thread(self._take, slot, token):
                    return slot
            if time.monotonic() > give_up:
                raise FetchTimeout(f"no free request slot for {host} in {self._wait_s:.0f} s")
            await asyncio.sleep(pause * (0.5 + random.random()))
            pause = min(pause * 2, 0.5)

    def _take(self, slot: str, token: str) -> bool:
        now = self._now()
        taken = call_if(
            self._client.put_item,
            TableName=self._table,
            Item={
                "url_hash": {"S": slot},
                "owner": {"S": token},
                "lease_expires": {"N": repr(now + self._lease_s)},
                TTL_ATTRIBUTE: {"N": str(int(now + self._lease_s + 3600))},
            },
            ConditionExpression="attribute_not_exists(url_hash) OR lease_expires < :now",
            ExpressionAttributeValues={":now": {"N": repr(now)}},
        )
        return taken is not None

    def _release(self, slot: str, token: str) -> None:
        call_if(
            self._client.delete_item,
            TableName=self._table,
            Key={"url_hash": {"S": slot}},
            ConditionExpression="#o = :token",
            ExpressionAttributeNames={"#o": "owner"},
            ExpressionAttributeValues={":token": {"S": token}},
        )


class LeasedFetcher:
    """A ``Fetcher`` whose every network use holds one of its host's shared slots.
    robots.txt is asked once per host per invocation (the inner fetcher caches it):
    only that first ask takes a slot."""

    def __init__(
        self, inner: Any, leases: HostLeases, limit: int, robots: RobotsCache | None = None
    ) -> None:
        self._inner, self._leases, self._limit = inner, leases, limit
        self._robots = robots  # the inner fetcher's robots.txt cache (robots.py): no
        # request, so no slot, when it already holds the site's robots.txt
        self._robots_known: set[str] = set()
        self._robots_locks: dict[str, asyncio.Lock] = {}

    async def fetch(
        self, url: str, etag: str | None = None, last_modified: str | None = None
    ) -> FetchResult:
        async with self._leases.hold(_host(url), self._limit):
            result: FetchResult = await self._inner.fetch(url, etag, last_modified)
            return result

    async def allowed(self, url: str) -> bool:
        host = _host(url)
        # A batch asks for its URLs at once: the first ask fetches robots.txt (holding a
        # slot), the others wait for it and are answered from the inner fetcher's copy.
        async with self._robots_locks.setdefault(host, asyncio.Lock()):
            if host not in self._robots_known and not await self._robots_cached(url):
                async with self._leases.hold(host, self._limit):
                    answer = bool(await self._inner.allowed(url))
                self._robots_known.add(host)
                return answer
            self._robots_known.add(host)
        return bool(await self._inner.allowed(url))

    async def _robots_cached(self, url: str) -> bool:
        if self._robots is None:
            return False
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}".lower()
        return await asyncio.to_thread(self._robots.get, origin) is not None

    async def sitemap_urls(self, start_url: str) -> list[str]:
        async with self._leases.hold(_host(start_url), self._limit):
            return list(await self._inner.sitemap_urls(start_url))


def _host(url: str) -> str:
    return urlsplit(url).netloc.lower()
