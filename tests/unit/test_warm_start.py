"""A fresh crawl starts its conversion workers' forkserver before its first request; a
re-crawl whose start page is cached starts it only if a page needs converting."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest
from mdcrawl.runtime import local

from tests.support.demo import crawl, write_site
from tests.support.server import serve_directory


def test_the_forkserver_starts_before_the_first_request_unless_the_start_page_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = write_site(tmp_path / "site", {"/index.html": "<a href='a.html'>A</a>", "/a.html": ""})
    cache = tmp_path / "cache"
    with serve_directory(site) as server:
        requests_before: list[int] = []
        real = local.start_workers

        def spy():  # noqa: ANN202 - the real one's future
            requests_before.append(len(server.stats.paths()))
            return real()

        monkeypatch.setattr(local, "start_workers", spy)
        assert crawl(server.url("/index.html"), cache, tmp_path / "fresh") == 0
        assert requests_before == [0]  # fresh: started before robots.txt was asked for
        assert crawl(server.url("/index.html"), cache, tmp_path / "again") == 0
    assert requests_before == [0]  # cached: not started up front


def start_page_link_asked_before_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, patience: float
) -> bool:
    """Crawl a two-page site with the workers' forkserver held back until the start
    page's link is asked for (or ``patience`` seconds): was it asked for first? Both
    pages must be converted either way."""
    from mdcrawl.runtime import workers

    site = write_site(tmp_path / "site", {"/index.html": "<a href='a.html'>A</a>", "/a.html": ""})
    with serve_directory(site) as server:
        real, held = workers.start_workers, Future[None]()
        asked_first: list[bool] = []

        def release_when_asked() -> None:
            deadline = time.monotonic() + patience
            while time.monotonic() < deadline and "/a.html" not in server.stats.paths():
                time.sleep(0.01)
            asked_first.append("/a.html" in server.stats.paths())
            real().result(timeout=120)
            held.set_result(None)

        releaser = threading.Thread(target=release_when_asked, daemon=True)

        def holding() -> Future[None]:
            if releaser.ident is None:
                releaser.start()
            return held

        monkeypatch.setattr(local, "start_workers", holding)
        monkeypatch.setattr(workers, "start_workers", holding)
        assert crawl(server.url("/index.html"), tmp_path / "cache", tmp_path / "out") == 0
    pages = (tmp_path / "out" / "docs.md").read_text(encoding="utf-8")
    assert "Page index.html" in pages and "Page a.html" in pages  # both converted
    return asked_first == [True]


def test_the_start_pages_links_are_asked_for_while_the_workers_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing else can be fetched before the start page's links are known: it is read
    for them at once, not after the workers' forkserver is up (~0.3 s of start-up)."""
    assert start_page_link_asked_before_the_workers(tmp_path, monkeypatch, patience=10.0)


def test_a_big_start_page_waits_for_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past START_READ_HERE_BYTES its tree would stay in the crawl's own heap: a worker
    reads it, as any page."""
    from mdcrawl.runtime import workers

    monkeypatch.setattr(workers, "START_READ_HERE_BYTES", 16)
    assert not start_page_link_asked_before_the_workers(tmp_path, monkeypatch, patience=1.0)
