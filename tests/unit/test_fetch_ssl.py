"""Fetchers share one TLS context per process: building one loads the CA bundle, which a
crawler Lambda otherwise paid twice for every batch of URLs."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from mdcrawl import fetch
from mdcrawl.fetch import HttpxFetcher
from mdcrawl.models import CrawlOptions
from mdcrawl.netguard import AddressGuard


def test_every_fetcher_of_a_process_uses_one_ssl_context(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[object] = []
    create = httpx.create_ssl_context

    def counted(*args: object, **kwargs: object) -> object:
        built.append(create(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(httpx, "create_ssl_context", counted)
    fetch._ssl_context.cache_clear()

    async def open_three() -> None:
        for _ in range(3):
            async with HttpxFetcher(CrawlOptions(), guard=AddressGuard(("127.0.0.0/8",))) as f:
                f._need_client()  # what a first request makes

    asyncio.run(open_three())
    fetch._ssl_context.cache_clear()
    assert len(built) == 1


def test_a_fetcher_asked_for_nothing_builds_no_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-crawl answered from the cache opens its fetcher and sends nothing: it pays
    for no client and no TLS context (the CA bundle's load)."""
    built: list[object] = []
    monkeypatch.setattr(httpx, "create_ssl_context", lambda *a, **k: built.append(a))
    fetch._ssl_context.cache_clear()

    async def open_and_close() -> HttpxFetcher:
        async with HttpxFetcher(CrawlOptions(), guard=AddressGuard(("127.0.0.0/8",))) as f:
            pass
        return f

    fetcher = asyncio.run(open_and_close())
    fetch._ssl_context.cache_clear()
    assert built == []
    with pytest.raises(RuntimeError, match="outside"):
        fetcher._need_client()  # closed: no client is made after the block
