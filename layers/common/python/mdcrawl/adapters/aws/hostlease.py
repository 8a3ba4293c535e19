"""Per-host politeness across crawler invocations and jobs: a host serves at most
``limit`` of our requests at once, however many crawler invocations run.

The fetcher (fetch.py) caps requests per host inside one invocation; on AWS the
orchestrator keeps several crawler invocations in flight and several jobs may crawl
the same site, so the cap must live in shared storage. A host has ``limit`` slots, all
in one item ``host#<netloc>`` of the cache table (shared by every job, like the content
cache; the key cannot collide with a URL hash): slot ``i`` is held while the item has
``e<i>`` (when its lease ends: a crawler that died mid-request frees it after
``lease_s``) and ``o<i>`` (the holder's token). A job asking for concurrency N uses
slots 0..N-1, so jobs together never exceed the largest concurrency any of them asked
for.

Cost: one item for all of a host's slots lets one conditional UpdateItem claim every
slot a batch wants and another give them back together (a write unit each), where a
conditional put per slot tried (a failed one billed too) and a delete per request made
~3 write units per fetched page. A request finding no slot free waits on reads (a
strongly consistent GetItem, a fifth of a write's price), not on failing writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ...errors import FetchTimeout
from ...fetch import RobotsCache
from ...models import FetchResult
from ...names import TTL_ATTRIBUTE
from .calls import call, call_if

SLOT_PREFIX = "host#"
# How long a claim waits for the batch's other requests to line up behind it (they
# start together), so one write claims slots for them all.
GATHER_S = 0.01
# How long a slot done with waits, unused, for others finishing soon, so one write
# gives them back together (the host is idle meanwhile only for this invocation).
LINGER_S = 0.05


def slot_key(host: str) -> str:
    return f"{SLOT_PREFIX}{host}"


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
        token = new_token()
        held = await self.take(host, limit, 1, token)
        try:
            yield
        finally:
            await asyncio.to_thread(self.release, host, held, token)

    async def take(
        self, host: str, limit: int, want: int, token: str, wake: asyncio.Event | None = None
    ) -> list[int]:
        """Between 1 and ``want`` of ``host``'s ``limit`` slots, claimed in one write for
        ``token``. While none is free it waits, reading the item again with a growing
        pause; ``wake`` being set ends the wait with no slot (the caller's invocation
        has one of its own free now)."""
        give_up = time.monotonic() + self._wait_s
        pause = 0.02
        while True:
            free = await asyncio.to_thread(self.free, host, limit)
            if free:
                chosen = random.sample(free, min(max(want, 1), len(free)))
                if await asyncio.to_thread(self.claim, host, chosen, token):
                    return chosen
                # Another invocation took one of them first: read again, but after the
                # same deadline and pause as an empty read, so that hosts contended
                # without end cannot keep a request failing billed writes past its wait.
            if time.monotonic() > give_up:
                raise FetchTimeout(f"no free request slot for {host} in {self._wait_s:.0f} s")
            if await _pause(pause * (0.5 + random.random()), wake):
                return []
            pause = min(pause * 2, 0.5)

    def free(self, host: str, limit: int) -> list[int]:
        """The slots below ``limit`` nobody holds (or whose lease ended)."""
        found = call(
            self._client.get_item,
            TableName=self._table,
            Key={"url_hash": {"S": slot_key(host)}},
            ConsistentRead=True,
        )
        item, now = found.get("Item", {}), self._now()
        return [i for i in range(max(limit, 1)) if float(item.get(f"e{i}", {}).get("N", 0)) < now]

    def claim(self, host: str, slots: list[int], token: str) -> bool:
        """All of ``slots`` for ``token``, or none (another holder got one first)."""
        now = self._now()
        names = {f"#e{i}": f"e{i}" for i in slots} | {f"#o{i}": f"o{i}" for i in slots}
        taken = call_if(
            self._client.update_item,
            TableName=self._table,
            Key={"url_hash": {"S": slot_key(host)}},
            UpdateExpression="SET "
            + ", ".join([f"#e{i} = :end, #o{i} = :token" for i in slots] + ["#ttl = :ttl"]),
            ConditionExpression=" AND ".join(
                f"(attribute_not_exists(#e{i}) OR #e{i} < :now)" for i in slots
            ),
            ExpressionAttributeNames={**names, "#ttl": TTL_ATTRIBUTE},
            ExpressionAttributeValues={
                ":end": {"N": repr(now + self._lease_s)},
                ":token": {"S": token},
                ":now": {"N": repr(now)},
                ":ttl": {"N": str(int(now + self._lease_s + 3600))},
            },
        )
        return taken is not None

    def release(self, host: str, slots: list[int], token: str) -> None:
        """Give ``slots`` back in one write; one by one if some are no longer
        ``token``'s (a lease that ended and was taken by another holder)."""
        if not slots or self._release(host, slots, token) or len(slots) == 1:
            return
        for slot in slots:
            self._release(host, [slot], token)

    def _release(self, host: str, slots: list[int], token: str) -> bool:
        names = {f"#e{i}": f"e{i}" for i in slots} | {f"#o{i}": f"o{i}" for i in slots}
        given = call_if(
            self._client.update_item,
            TableName=self._table,
            Key={"url_hash": {"S": slot_key(host)}},
            UpdateExpression="REMOVE " + ", ".join(f"#e{i}, #o{i}" for i in slots),
            ConditionExpression=" AND ".join(f"#o{i} = :token" for i in slots),
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={":token": {"S": token}},
        )
        return given is not None


def new_token() -> str:
    return uuid.uuid4().hex[:16]


@dataclass
class _Pool:
    """One host's slots as one invocation sees them."""

    held: set[int] = field(default_factory=set)  # claimed from the table, not given back
    free: list[int] = field(default_factory=list)  # held and not in use
    waiting: int = 0  # requests waiting for a slot
    claiming: bool = False  # a request is claiming from the table for the waiters
    changed: asyncio.Event = field(default_factory=asyncio.Event)  # a slot came free
    lingering: asyncio.Task[None] | None = None  # a give-back, still waiting LINGER_S
    giving_back: set[asyncio.Task[None]] = field(default_factory=set)  # every give-back


class LeasedFetcher:
    """A ``Fetcher`` whose every network use holds one of its host's shared slots.
    robots.txt is asked once per host per invocation (the inner fetcher caches it):
    only that first ask takes a slot.

    The invocation keeps the slots it claimed in a pool: a request done with one hands
    it to a request of the invocation waiting for one (no write, no pause); requests
    waiting together are claimed for together (one write), and slots done with within
    ``LINGER_S`` of each other are given back together (one write). A slot is held at
    most the invocation's time (60 s), inside its lease (90 s)."""

    def __init__(
        self, inner: Any, leases: HostLeases, limit: int, robots: RobotsCache | None = None
    ) -> None:
        self._inner, self._leases, self._limit = inner, leases, max(limit, 1)
        self._robots = robots  # the inner fetcher's robots.txt cache (robots.py): no
        # request, so no slot, when it already holds the site's robots.txt
        self._robots_known: set[str] = set()
        self._robots_locks: dict[str, asyncio.Lock] = {}
        self._token = new_token()
        self._pools: dict[str, _Pool] = {}

    @contextlib.asynccontextmanager
    async def _slot(self, host: str) -> AsyncIterator[None]:
        slot = await self._acquire(host)
        try:
            yield
        finally:
            self._done_with(host, slot)

    async def _acquire(self, host: str) -> int:
        pool = self._pools.setdefault(host, _Pool())
        pool.waiting += 1
        try:
            while not pool.free:
                if pool.claiming or len(pool.held) >= self._limit:
                    pool.changed.clear()
                    await pool.changed.wait()  # a slot done with, or the claim's answer
                else:
                    await self._claim(host, pool)
            return pool.free.pop()
        finally:
            pool.waiting -= 1

    async def _claim(self, host: str, pool: _Pool) -> None:
        """Slots from the table for the requests waiting (this one included)."""
        pool.claiming = True
        try:
            await asyncio.sleep(GATHER_S)  # the batch's other requests line up
            if pool.free:
                return  # one came free meanwhile
            want = min(pool.waiting, self._limit - len(pool.held))
            pool.changed.clear()  # set again by a slot coming free: the claim stops
            got = await self._leases.take(host, self._limit, want, self._token, pool.changed)
            pool.held.update(got)
            pool.free.extend(got)
        finally:
            pool.claiming = False
            pool.changed.set()

    def _done_with(self, host: str, slot: int) -> None:
        pool = self._pools[host]
        pool.free.append(slot)
        pool.changed.set()  # a waiter takes it
        if pool.lingering is None:
            task = asyncio.ensure_future(self._give_back_idle(host, pool))
            pool.lingering = task
            pool.giving_back.add(task)
            task.add_done_callback(pool.giving_back.discard)

    async def _give_back_idle(self, host: str, pool: _Pool) -> None:
        """After ``LINGER_S``, the pool's slots nobody took, in one write."""
        try:
            await asyncio.sleep(LINGER_S)
        finally:
            pool.lingering = None
        idle = pool.free[pool.waiting :]  # as many kept as requests wait for one
        if not idle:
            return
        del pool.free[pool.waiting :]
        pool.held.difference_update(idle)
        await asyncio.to_thread(self._leases.release, host, idle, self._token)

    async def aclose(self) -> None:
        """Give back every slot still held (waiting ones' give-backs included)."""
        for host, pool in self._pools.items():
            if pool.lingering is not None:
                pool.lingering.cancel()
            # Give-backs under way finish before the invocation answers (Lambda freezes
            # what is still running then: a slot would stay held until its lease ends).
            await asyncio.gather(*pool.giving_back, return_exceptions=True)
            held, pool.held, pool.free = sorted(pool.held), set(), []
            if held:
                await asyncio.to_thread(self._leases.release, host, held, self._token)

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


async def _pause(seconds: float, wake: asyncio.Event | None) -> bool:
    """Sleep ``seconds``, or less when ``wake`` is set; whether it was."""
    if wake is None:
        await asyncio.sleep(seconds)
        return False
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(wake.wait(), seconds)
    return wake.is_set()


def _host(url: str) -> str:
    return urlsplit(url).netloc.lower()
