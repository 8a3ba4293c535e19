"""A crawler invocation answers before its timeout: URLs still being fetched come
back PENDING (``timeout``) for the orchestrator to retry, instead of the function
being killed with the whole batch."""

from __future__ import annotations

from pathlib import Path

from mdcrawl.adapters.aws.crawling import CrawlerPorts
from mdcrawl.adapters.aws.stores import aws_stores
from mdcrawl.models import CrawlOptions, FrontierItem, UrlState
from mdcrawl.netguard import AddressGuard
from mdcrawl.pipeline.batch import CRAWL_STOP_MARGIN_S
from mdcrawl.ports import CrawlRequest
from mdcrawl.urls import scope_for, url_hash

from tests.support.aws import moto_clients
from tests.support.server import serve_directory


async def test_urls_unfinished_near_the_timeout_come_back_pending(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.html").write_text(f"<html><body><h1>{name}</h1></body></html>")
    with moto_clients() as aws, serve_directory(tmp_path, latency=3.0) as server:
        stores = aws_stores(aws.session, aws.names, aws.bucket)
        ports = CrawlerPorts(stores.cache, stores.blobs, stores.clock,
                             AddressGuard(("127.0.0.0/8",)))
        urls = [server.url(f"/{n}.html") for n in ("a", "b")]
        items = tuple(FrontierItem(u, url_hash(u), depth=1) for u in urls)
        options = CrawlOptions(respect_robots=False)
        request = CrawlRequest("job-1", scope_for(urls[0]), options, items)

        late = await ports.crawl(request, time_left_s=CRAWL_STOP_MARGIN_S + 1.0)
        assert [(o.state, o.reason) for o in late.outcomes] == [(UrlState.PENDING, "timeout")] * 2

        on_time = await ports.crawl(request, time_left_s=CRAWL_STOP_MARGIN_S + 30.0)
        assert [o.state for o in on_time.outcomes] == [UrlState.DONE] * 2
