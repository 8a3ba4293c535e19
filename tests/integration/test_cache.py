"""A second crawl against a server that counts requests proves the shared cache."""

from __future__ import annotations

from pathlib import Path

from tests.support.demo import crawl, read_manifest
from tests.support.server import RunningServer, serve_directory
from tests.support.sites import require_site


def _page_requests(server: RunningServer) -> list[tuple[str, int, dict[str, str]]]:
    return [
        (r.path, r.status, r.headers)
        for r in server.stats.requests
        if r.method == "GET" and r.path.endswith((".html", "/"))
    ]


def test_fresh_pages_are_not_fetched_again(tmp_path: Path) -> None:
    site = require_site("requests")
    with serve_directory(site.root) as server:
        url = server.url(site.start)
        assert crawl(url, tmp_path / "cache", tmp_path / "first") == 0
        first = _page_requests(server)
        server.stats.reset()
        assert crawl(url, tmp_path / "cache", tmp_path / "second") == 0
        second = _page_requests(server)
    assert len(first) > 20
    assert second == []
    manifest = read_manifest(tmp_path / "second")
    assert manifest and all(m["from_cache"] for m in manifest if m["status"] == "ok")
    for name in ("docs.md", "llms.txt"):
        assert (tmp_path / "first" / name).read_text() == (tmp_path / "second" / name).read_text()


def test_stale_pages_are_revalidated_with_304(tmp_path: Path) -> None:
    site = require_site("requests")
    with serve_directory(site.root) as server:
        url = server.url(site.start)
        assert crawl(url, tmp_path / "cache", tmp_path / "first") == 0
        pages = len(_page_requests(server))
        server.stats.reset()
        assert crawl(url, tmp_path / "cache", tmp_path / "second", "--max-age", "0") == 0
        again = _page_requests(server)
    assert len(again) == pages
    # validators sent: the ETag where the server gave one (files), else Last-Modified
    assert all(status == 304 for _, status, _ in again)
    assert all("if-none-match" in h or "if-modified-since" in h for _, _, h in again)
    assert sum("if-none-match" in h for _, _, h in again) >= len(again) - 2
    assert (tmp_path / "first" / "docs.md").read_text() == (
        tmp_path / "second" / "docs.md"
    ).read_text()


def test_no_cache_fetches_everything_again(tmp_path: Path) -> None:
    site = require_site("requests")
    with serve_directory(site.root) as server:
        url = server.url(site.start)
        assert crawl(url, tmp_path / "cache", tmp_path / "first") == 0
        pages = len(_page_requests(server))
        server.stats.reset()
        assert crawl(url, tmp_path / "cache", tmp_path / "second", "--no-cache") == 0
        again = _page_requests(server)
    assert len(again) == pages and all(status == 200 for _, status, _ in again)
