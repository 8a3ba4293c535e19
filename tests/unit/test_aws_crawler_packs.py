"""The crawler on AWS: a batch's bodies are one S3 object; a batch of cached URLs reads
its cache entries and its bodies' locators in one BatchGetItem each (no GetItem and no
HEAD per URL), and the processor reads the bodies back by key."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from mdcrawl.adapters.aws.blobs import S3BlobStore
from mdcrawl.adapters.aws.cache import DynamoDbContentCache
from mdcrawl.adapters.aws.crawling import CrawlerPorts
from mdcrawl.adapters.aws.packs import PackedBlobs
from mdcrawl.adapters.aws.stores import SystemClock
from mdcrawl.models import CrawlOptions, FrontierItem, UrlState
from mdcrawl.names import Table
from mdcrawl.netguard import AddressGuard
from mdcrawl.ports import CrawlRequest
from mdcrawl.urls import scope_for, url_hash

from tests.support.aws import moto_clients
from tests.support.server import serve_directory

NAMES = ("a", "b", "c")


class Counted:
    def __init__(self, client: Any, calls: Counter[str]) -> None:
        self.client, self.calls = client, calls

    def __getattr__(self, name: str) -> Any:
        operation = getattr(self.client, name)
        if not callable(operation) or name.startswith("_"):
            return operation

        def counted(**kwargs: Any) -> Any:
            self.calls[name] += 1
            return operation(**kwargs)

        counted.__name__ = name
        return counted


async def test_a_batch_is_one_pack_and_a_cached_batch_reads_in_two_requests(
    tmp_path: Path,
) -> None:
    for name in NAMES:
        (tmp_path / f"{name}.html").write_text(f"<html><body><h1>{name}</h1></body></html>")
    with moto_clients() as aws, serve_directory(tmp_path) as server:
        calls: Counter[str] = Counter()
        s3, dynamodb = Counted(aws.s3, calls), Counted(aws.dynamodb, calls)
        table = aws.names[Table.CACHE]
        blobs = PackedBlobs(S3BlobStore(s3, aws.bucket), dynamodb, table, 30 * 86400.0, 86400.0)
        cache = DynamoDbContentCache(dynamodb, table)
        ports = CrawlerPorts(cache, blobs, SystemClock(), AddressGuard(("127.0.0.0/8",)))
        urls = [server.url(f"/{n}.html") for n in NAMES]
        items = tuple(FrontierItem(u, url_hash(u), depth=1) for u in urls)
        request = CrawlRequest(
            "job-1", scope_for(urls[0]), CrawlOptions(respect_robots=False), items
        )

        fresh = await ports.crawl(request)
        assert [o.state for o in fresh.outcomes] == [UrlState.DONE] * 3
        assert calls["put_object"] == 1 and calls["head_object"] == 0

        calls.clear()
        cached = await ports.crawl(request)
        assert [o.page.from_cache for o in cached.outcomes] == [True] * 3
        assert calls == Counter(batch_get_item=2)

        for name, outcome in zip(NAMES, cached.outcomes, strict=True):
            assert f"<h1>{name}</h1>".encode() in blobs.get(outcome.page.body_key)
