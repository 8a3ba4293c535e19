"""Per-host request slots shared through DynamoDB: however many crawler invocations
(here: several HostLeases on one table, run concurrently) fetch from a host, at most
``limit`` requests are in flight; a dead holder's slot frees itself after its lease."""

from __future__ import annotations

import asyncio

import pytest
from mdcrawl.adapters.aws.hostlease import HostLeases, LeasedFetcher
from mdcrawl.errors import FetchTimeout
from mdcrawl.names import Table

from tests.support.aws import moto_clients


@pytest.fixture
def table():
    with moto_clients() as aws:
        yield aws.dynamodb, aws.names[Table.CACHE]


async def test_invocations_together_never_exceed_the_limit(table) -> None:
    client, name = table
    invocations = [HostLeases(client, name) for _ in range(3)]
    inflight, peak = 0, 0

    async def request(leases: HostLeases) -> None:
        nonlocal inflight, peak
        async with leases.hold("docs.example.com", 3):
            inflight += 1
            peak = max(peak, inflight)
            await asyncio.sleep(0.02)
            inflight -= 1

    await asyncio.gather(*(request(invocations[i % 3]) for i in range(24)))
    assert peak == 3
    # Every slot was given back.
    left = client.scan(TableName=name)["Items"]
    assert left == []


async def test_a_slot_whose_holder_died_is_taken_after_its_lease(table) -> None:
    client, name = table
    clock = [1000.0]
    dead = HostLeases(client, name, lease_s=30, now=lambda: clock[0])
    assert dead._take("host#h#0", "dead-token")
    alive = HostLeases(client, name, lease_s=30, wait_s=0.2, now=lambda: clock[0])
    with pytest.raises(FetchTimeout):
        async with alive.hold("h", 1):
            pass
    clock[0] += 31
    async with alive.hold("h", 1):
        pass


class Inner:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def fetch(self, url, etag=None, last_modified=None):
        self.calls.append(url)
        return url

    async def allowed(self, url):
        return True

    async def sitemap_urls(self, start_url):
        return [start_url]


async def test_the_leased_fetcher_passes_through(table) -> None:
    client, name = table
    inner = Inner()
    fetcher = LeasedFetcher(inner, HostLeases(client, name), 2)
    assert await fetcher.fetch("https://Docs.example.com/a") == "https://Docs.example.com/a"
    assert await fetcher.allowed("https://docs.example.com/b") is True
    assert await fetcher.sitemap_urls("https://docs.example.com/") == ["https://docs.example.com/"]
    assert client.scan(TableName=name)["Items"] == []


async def test_robots_is_asked_under_a_slot_once_per_host_per_invocation(table) -> None:
    client, name = table
    takes: list[str] = []
    leases = HostLeases(client, name)
    original = leases._take
    leases._take = lambda slot, token: takes.append(slot) or original(slot, token)  # type: ignore
    fetcher = LeasedFetcher(Inner(), leases, 4)
    urls = [f"https://docs.example.com/{i}" for i in range(4)]
    assert await asyncio.gather(*(fetcher.allowed(u) for u in urls)) == [True] * 4
    assert len(takes) == 1


async def test_a_slot_done_with_goes_to_a_request_of_the_same_invocation_waiting(table) -> None:
    """Four requests of one invocation, one slot: each finished request hands its slot to
    the next (one take, one give-back in all), and the host never sees two at once."""
    # (Without the hand-over: four takes and four give-backs, and the waiters' tries.)
    client, name = table
    writes: list[str] = []
    leases = HostLeases(client, name, wait_s=30)
    take, release = leases._take, leases._release
    def counted_take(slot: str, token: str) -> bool:
        taken = take(slot, token)
        writes.append("take" if taken else "tried")
        return taken

    leases._take = counted_take  # type: ignore[method-assign]
    leases._release = lambda slot, token: writes.append("give") or release(slot, token)  # type: ignore
    inflight, peak = 0, 0

    class Slow(Inner):
        async def fetch(self, url, etag=None, last_modified=None):
            nonlocal inflight, peak
            inflight += 1
            peak = max(peak, inflight)
            await asyncio.sleep(0.05)
            inflight -= 1
            return url

    fetcher = LeasedFetcher(Slow(), leases, 1)
    urls = [f"https://docs.example.com/{i}" for i in range(4)]
    assert await asyncio.gather(*(fetcher.fetch(u) for u in urls)) == urls
    await fetcher.aclose()
    assert peak == 1
    assert (writes.count("take"), writes.count("give")) == (1, 1)
    # Each waiter tried the table once (a failed conditional put is billed), then waited
    # for the slot its invocation held.
    assert writes.count("tried") <= 3
    assert client.scan(TableName=name)["Items"] == []


async def test_a_slot_handed_to_a_request_that_found_its_own_is_given_back_at_once() -> None:
    from mdcrawl.adapters.aws.hostlease import Held

    class Leases:  # the table: a first slot at once, a second when ``free`` is set
        def __init__(self) -> None:
            self.free, self.given, self.taken = asyncio.Event(), [], 0

        async def take(self, host, limit, wake=None, handed=None, holding=None):
            self.taken += 1
            if self.taken > 1:
                await self.free.wait()  # busy, then free: this request's own slot
            return Held(f"s{self.taken}", "t")

        async def give_back(self, held) -> None:
            self.given.append(held.slot)

    gates = {"/a": asyncio.Event(), "/b": asyncio.Event()}

    class Gated(Inner):
        async def fetch(self, url, etag=None, last_modified=None):
            await gates[url[len("https://h") :]].wait()
            return url

    leases = Leases()
    fetcher = LeasedFetcher(Gated(), leases, 2)
    a = asyncio.ensure_future(fetcher.fetch("https://h/a"))
    await asyncio.sleep(0)
    b = asyncio.ensure_future(fetcher.fetch("https://h/b"))
    await asyncio.sleep(0)
    gates["/a"].set()
    await a  # s1 handed to b, still waiting for the table
    leases.free.set()  # b finds s2 free: s1 is not wanted any more
    for _ in range(5):
        await asyncio.sleep(0)
    assert leases.given == ["s1"]  # while b still fetches
    gates["/b"].set()
    await b
    await fetcher.aclose()
    assert leases.given == ["s1", "s2"]
