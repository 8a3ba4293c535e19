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
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from ...errors import FetchTimeout
from ...fetch import RobotsCache
from ...models import FetchResult
from ...names import TTL_ATTRIBUTE
from .calls import call_if

SLOT_PREFIX = "host#"


class Held(NamedTuple):
    """A slot taken: its item, and the token that proves it is ours."""

    slot: str
    token: str


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
        held = await self.take(host, limit)
        try:
            yield
        finally:
            await self.give_back(held)

    async def take(
        self,
        host: str,
        limit: int,
        wake: asyncio.Event | None = None,
        handed: Callable[[], Held | None] | None = None,
        holding: Callable[[], bool] | None = None,
    ) -> Held:
        """One of ``host``'s ``limit`` slots, held until ``give_back``. While none is
        free, ``handed()`` is asked between rounds (and at once when ``wake`` is set) for
        a slot its caller's own invocation is handing over instead of giving it back;
        after a first round, while ``holding()`` (the invocation holds slots of the host,
        soon handed over) it waits for one of those rather than try the table again
        (a conditional put that fails is billed a write unit)."""
        token = uuid.uuid4().hex
        give_up = time.monotonic() + self._wait_s
        pause = 0.02
        slots = [f"{SLOT_PREFIX}{host}#{i}" for i in range(max(limit, 1))]
        first = True
        while True:
            random.shuffle(slots)  # no thundering herd on slot 0
            tries = slots if first or holding is None or not holding() else []
            first = False
            for slot in tries:
                if await asyncio.to_thread(self._take, slot, token):
                    return Held(slot, token)
            if time.monotonic() > give_up:
                raise FetchTimeout(f"no free request slot for {host} in {self._wait_s:.0f} s")
            await _pause(pause * (0.5 + random.random()), wake)
            pause = min(pause * 2, 0.5)
            given = handed() if handed is not None else None
            if given is not None:
                return given

    async def give_back(self, held: Held) -> None:
        await asyncio.to_thread(self._release, held.slot, held.token)

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
    only that first ask takes a slot.

    A slot a request is done with goes straight to a request of the same invocation
    waiting for one (the batch's URLs start together and wait together when the host's
    slots are taken): no DeleteItem and PutItem (two write units) between them, and no
    backoff pause. Slots handed over and then not wanted are given back by ``aclose``;
    a slot is held at most the invocation's time (60 s), inside its lease (90 s)."""

    def __init__(
        self, inner: Any, leases: HostLeases, limit: int, robots: RobotsCache | None = None
    ) -> None:
        self._inner, self._leases, self._limit = inner, leases, limit
        self._robots = robots  # the inner fetcher's robots.txt cache (robots.py): no
        # request, so no slot, when it already holds the site's robots.txt
        self._robots_known: set[str] = set()
        self._robots_locks: dict[str, asyncio.Lock] = {}
        self._handed: dict[str, list[Held]] = {}  # per host: slots handed over, not yet taken
        self._waiting: dict[str, int] = {}  # per host: requests waiting for a slot
        self._holding: dict[str, int] = {}  # per host: slots this invocation holds
        self._wakes: dict[str, asyncio.Event] = {}

    @contextlib.asynccontextmanager
    async def _slot(self, host: str) -> AsyncIterator[None]:
        held = self._pop_handed(host) or await self._wait_for_slot(host)
        try:
            yield
        finally:
            await self._done_with(host, held)

    async def _wait_for_slot(self, host: str) -> Held:
        """A slot from the table, or one a request of this invocation hands over."""
        self._waiting[host] = self._waiting.get(host, 0) + 1
        wake = self._wakes.setdefault(host, asyncio.Event())
        handed: list[Held] = []

        def take_handed() -> Held | None:
            held = self._pop_handed(host)
            if held is not None:
                handed.append(held)
            return held

        try:
            held = await self._leases.take(
                host, self._limit, wake, take_handed, lambda: self._holding.get(host, 0) > 0
            )
        finally:
            self._waiting[host] -= 1
        if not handed:  # a slot of the table's: this invocation holds one more
            self._holding[host] = self._holding.get(host, 0) + 1
            await self._give_back_unwanted(host)
        return held

    async def _give_back_unwanted(self, host: str) -> None:
        """Slots handed over to requests that then found one of their own: given back
        at once, not held idle (other invocations would find them taken)."""
        handed = self._handed.get(host) or []
        while len(handed) > self._waiting.get(host, 0):
            self._holding[host] -= 1
            await self._leases.give_back(handed.pop())

    def _pop_handed(self, host: str) -> Held | None:
        handed = self._handed.get(host)
        if not handed:
            if host in self._wakes:
                self._wakes[host].clear()
            return None
        return handed.pop()

    async def _done_with(self, host: str, held: Held) -> None:
        handed = self._handed.setdefault(host, [])
        if self._waiting.get(host, 0) > len(handed):
            handed.append(held)  # a request of this invocation waits: it takes this one
            self._wakes[host].set()
            return
        self._holding[host] -= 1
        await self._leases.give_back(held)

    async def aclose(self) -> None:
        """Give back the slots handed over that no request took (it found one itself)."""
        for host, handed in self._handed.items():
            while handed:
                self._holding[host] -= 1
                await self._leases.give_back(handed.pop())

    async def fetch(
        self, url: str, etag: str | None = None, last_modified: str | None = None
    ) -> FetchResult:
        async with self._slot(_host(url)):
            result: FetchResult = await self._inner.fetch(url, etag, last_modified)
            return result

    async def allowed(self, url: str) -> bool:
        host = _host(url)
        # A batch asks for its URLs at once: the first ask fetches robots.txt (holding a
        # slot), the others wait for it and are answered from the inner fetcher's copy.
        async with self._robots_locks.setdefault(host, asyncio.Lock()):
            if host not in self._robots_known and not await self._robots_cached(url):
                async with self._slot(host):
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
        async with self._slot(_host(start_url)):
            return list(await self._inner.sitemap_urls(start_url))


async def _pause(seconds: float, wake: asyncio.Event | None) -> None:
    """Sleep ``seconds``, or less when ``wake`` is set."""
    if wake is None:
        await asyncio.sleep(seconds)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(wake.wait(), seconds)


def _host(url: str) -> str:
    return urlsplit(url).netloc.lower()
