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


def test_a_broken_link_is_not_asked_again_within_the_max_age(tmp_path: Path) -> None:
    """A re-crawl does not re-request the site's 404s (Django's docs have 77 of 768 URLs),
    and the URL still ends failed with the same reason and detail."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        "<html><head><title>Home</title></head><body><main><h1>Home</h1>"
        "<p>Read <a href='guide.html'>the guide</a> and <a href='missing.html'>a lost page</a>."
        "</p></main></body></html>"
    )
    (site / "guide.html").write_text(
        "<html><head><title>Guide</title></head><body><main><h1>Guide</h1>"
        "<p>Some words of guidance for the reader.</p></main></body></html>"
    )
    with serve_directory(site) as server:
        url = server.url("/index.html")
        assert crawl(url, tmp_path / "cache", tmp_path / "first") == 0
        asked = [r.path for r in server.stats.requests if r.path == "/missing.html"]
        server.stats.reset()
        assert crawl(url, tmp_path / "cache", tmp_path / "second") == 0
        again = [r.path for r in server.stats.requests if r.path == "/missing.html"]
        server.stats.reset()
        assert crawl(url, tmp_path / "cache", tmp_path / "third", "--no-cache") == 0
        forced = [r.path for r in server.stats.requests if r.path == "/missing.html"]
    assert (asked, again, forced) == (["/missing.html"], [], ["/missing.html"])

    def failed(out: str) -> list[tuple[str, str, str]]:
        return [
            (m["url"], m["reason"], m.get("detail", ""))
            for m in read_manifest(tmp_path / out)
            if m["status"] == "failed"
        ]

    assert failed("first") == failed("second") == failed("third")
    assert [reason for _, reason, _ in failed("first")] == ["http_404"]
