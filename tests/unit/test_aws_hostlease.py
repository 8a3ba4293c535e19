"""Per-host request slots shared through DynamoDB: however many crawler invocations
(here: several HostLeases on one table, run concurrently) fetch from a host, at most
``limit`` requests are in flight; a dead holder's slot frees itself after its lease."""

from __future__ import annotations

import asyncio
import re

import pytest
from mdcrawl.adapters.aws.hostlease import HostLeases, LeasedFetcher
from mdcrawl.errors import FetchTimeout
from mdcrawl.names import Table

from tests.support.aws import moto_clients


@pytest.fixture
def table():
    with moto_clients() as aws:
        yield aws.dynamodb, aws.names[Table.CACHE]


def slots_held(client, name) -> list[str]:
    """The slot attributes held in the table, over every host."""
    items = client.scan(TableName=name)["Items"]
    return [f"{i['url_hash']['S']}:{a}" for i in items for a in i if re.fullmatch(r"e\d+", a)]


def counting(leases: HostLeases) -> list[str]:
    """The writes ``leases`` makes from now on: claim / tried (a claim that lost a race)
    / give (one release write of any number of slots)."""
    writes: list[str] = []
    claim, release = leases.claim, leases._release

    def counted_claim(host, slots, token):
        taken = claim(host, slots, token)
        writes.append("claim" if taken else "tried")
        return taken

    def counted_release(host, slots, token):
        writes.append("give")
        return release(host, slots, token)

    leases.claim = counted_claim  # type: ignore[method-assign]
    leases._release = counted_release  # type: ignore[method-assign]
    return writes


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
    assert slots_held(client, name) == []  # every slot was given back


async def test_a_slot_whose_holder_died_is_taken_after_its_lease(table) -> None:
    client, name = table
    clock = [1000.0]
    dead = HostLeases(client, name, lease_s=30, now=lambda: clock[0])
    assert dead.claim("h", [0], "dead-token")
    alive = HostLeases(client, name, lease_s=30, wait_s=0.2, now=lambda: clock[0])
    with pytest.raises(FetchTimeout):
        async with alive.hold("h", 1):
            pass
    clock[0] += 31
    async with alive.hold("h", 1):
        pass


def test_a_give_back_leaves_a_slot_another_holder_took_after_its_lease(table) -> None:
    client, name = table
    clock = [1000.0]
    slow = HostLeases(client, name, lease_s=30, now=lambda: clock[0])
    assert slow.claim("h", [0, 1], "slow")
    clock[0] += 31  # slot 1's lease ends; another holder takes it
    assert HostLeases(client, name, now=lambda: clock[0]).claim("h", [1], "other")
    slow.release("h", [0, 1], "slow")
    assert slots_held(client, name) == ["host#h:e1"]


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
    await fetcher.aclose()
    assert slots_held(client, name) == []


async def test_robots_is_asked_under_a_slot_once_per_host_per_invocation(table) -> None:
    client, name = table
    leases = HostLeases(client, name)
    writes = counting(leases)
    fetcher = LeasedFetcher(Inner(), leases, 4)
    urls = [f"https://docs.example.com/{i}" for i in range(4)]
    assert await asyncio.gather(*(fetcher.allowed(u) for u in urls)) == [True] * 4
    assert writes == ["claim"]


class Slow(Inner):
    """Counts the requests in flight at once."""

    def __init__(self, seconds: float = 0.05) -> None:
        super().__init__()
        self.seconds, self.inflight, self.peak = seconds, 0, 0

    async def fetch(self, url, etag=None, last_modified=None):
        self.inflight += 1
        self.peak = max(self.peak, self.inflight)
        await asyncio.sleep(self.seconds)
        self.inflight -= 1
        return url


async def test_a_slot_done_with_goes_to_a_request_of_the_same_invocation_waiting(table) -> None:
    """Four requests of one invocation, one slot: each finished request hands its slot to
    the next (one claim, one give-back in all), and the host never sees two at once."""
    client, name = table
    leases = HostLeases(client, name, wait_s=30)
    writes = counting(leases)
    slow = Slow()
    fetcher = LeasedFetcher(slow, leases, 1)
    urls = [f"https://docs.example.com/{i}" for i in range(4)]
    assert await asyncio.gather(*(fetcher.fetch(u) for u in urls)) == urls
    await fetcher.aclose()
    assert slow.peak == 1
    assert writes == ["claim", "give"]
    assert slots_held(client, name) == []


async def test_a_batch_claims_its_slots_in_one_write_and_gives_them_back_in_one(table) -> None:
    client, name = table
    leases = HostLeases(client, name)
    writes = counting(leases)
    slow = Slow(0.01)
    fetcher = LeasedFetcher(slow, leases, 8)
    urls = [f"https://docs.example.com/{i}" for i in range(4)]
    assert await asyncio.gather(*(fetcher.fetch(u) for u in urls)) == urls
    assert slow.peak == 4  # all four at once: the batch waited for none
    await asyncio.sleep(0.1)  # past the linger: given back, not only at the end
    assert writes == ["claim", "give"]
    assert slots_held(client, name) == []
    await fetcher.aclose()
    assert writes == ["claim", "give"]


async def test_invocations_of_leased_fetchers_never_exceed_the_limit(table) -> None:
    """Three invocations' batches at once against a host allowing 3: the host never
    sees more than 3, every slot is given back, and the writes are far fewer than the
    three per request a put and a delete per slot made."""
    client, name = table
    slow = Slow(0.02)
    leases = [HostLeases(client, name) for _ in range(3)]
    writes = [counting(leases_) for leases_ in leases]

    async def invocation(n: int) -> None:
        fetcher = LeasedFetcher(slow, leases[n], 3)
        urls = [f"https://docs.example.com/{n}/{i}" for i in range(4)]
        await asyncio.gather(*(fetcher.fetch(u) for u in urls))
        await fetcher.aclose()

    await asyncio.gather(*(invocation(n) for n in range(3)))
    assert slow.peak == 3
    assert slots_held(client, name) == []
    assert sum(len(w) for w in writes) < 12


async def test_a_claim_that_always_loses_gives_up_at_the_wait(table) -> None:
    """Slots that read free but are always taken first (a host contended without end)
    end the wait with FetchTimeout, after a bounded number of billed tries."""
    client, name = table
    leases = HostLeases(client, name, wait_s=0.3)
    tries: list[int] = []

    def losing(host, slots, token):
        tries.append(len(slots))
        return False

    leases.claim = losing  # type: ignore[method-assign]
    with pytest.raises(FetchTimeout):
        await asyncio.wait_for(leases.take("docs.test", 2, 1, "t"), timeout=10)
    assert 1 <= len(tries) < 60  # paused between tries, not a busy loop of failing writes
