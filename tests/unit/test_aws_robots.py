"""robots.txt in the shared cache table: one request per site per day, across crawler
invocations and jobs, not one per batch."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mdcrawl.adapters.aws.robots import DynamoDbRobotsCache
from mdcrawl.fetch import HttpxFetcher
from mdcrawl.models import CrawlOptions
from mdcrawl.names import Table

from tests.support.aws import moto_clients
from tests.support.server import serve_directory


@pytest.fixture
def table():
    with moto_clients() as aws:
        yield aws.session.client("dynamodb"), aws.names[Table.CACHE]


def test_a_text_is_kept_while_fresh(table) -> None:
    client, name = table
    clock = [1000.0]
    DynamoDbRobotsCache(client, name, fresh_s=60, now=lambda: clock[0]).put(
        "http://a.test", "User-agent: *\nDisallow: /x\n"
    )
    later = DynamoDbRobotsCache(client, name, fresh_s=60, now=lambda: clock[0])
    assert later.get("http://a.test") == "User-agent: *\nDisallow: /x\n"
    clock[0] += 61
    assert DynamoDbRobotsCache(client, name, fresh_s=60, now=lambda: clock[0]).get(
        "http://a.test"
    ) is None
    assert later.get("http://b.test") is None


def test_invocations_share_one_robots_fetch(table, tmp_path: Path) -> None:
    client, name = table
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    (tmp_path / "index.html").write_text("<html><body><p>hi</p></body></html>")
    with serve_directory(tmp_path) as server:

        async def one_invocation() -> tuple[bool, bool]:
            robots = DynamoDbRobotsCache(client, name)  # a new invocation: new memory
            async with HttpxFetcher(CrawlOptions(), robots_cache=robots) as fetcher:
                return (
                    await fetcher.allowed(server.url("/index.html")),
                    await fetcher.allowed(server.url("/private/a.html")),
                )

        answers = [asyncio.run(one_invocation()) for _ in range(3)]
        assert answers == [(True, False)] * 3
        assert server.stats.paths().count("/robots.txt") == 1
