"""A start URL's sitemap seeds kept in the local cache folder (adapters/local/sitemaps.py),
as robots.txt is: fresh for a day (or the crawl's --max-age), so a re-crawl answered from
the content cache sends no request at all."""

from __future__ import annotations

from pathlib import Path

import pytest
from mdcrawl.adapters.local.blobs import FileBlobStore
from mdcrawl.adapters.local.notes import FRESH_S, note_key
from mdcrawl.adapters.local.sitemaps import FileSitemapCache, crawl_sitemap_cache
from mdcrawl.models import CrawlOptions
from mdcrawl.names import BlobPrefix

from tests.support.demo import crawl, read_manifest, write_site
from tests.support.server import serve_directory

START = "https://docs.test/guide/"


def cache_at(tmp_path: Path, clock: list[float], fresh_s: float = FRESH_S) -> FileSitemapCache:
    return FileSitemapCache(FileBlobStore(tmp_path), lambda: clock[0], fresh_s)


def test_seeds_are_kept_while_fresh(tmp_path: Path) -> None:
    clock = [1000.0]
    cache = cache_at(tmp_path, clock)
    assert cache.get(START) is None
    cache.put(START, [START + "a.html", START + "b.html"])
    clock[0] += FRESH_S - 1
    assert cache_at(tmp_path, clock).get(START) == [START + "a.html", START + "b.html"]
    assert cache.get("https://docs.test/other/") is None
    clock[0] += 1
    assert cache.get(START) is None  # a day old: asked for again


def test_a_damaged_or_foreign_note_is_not_trusted(tmp_path: Path) -> None:
    clock = [1000.0]
    cache, blobs = cache_at(tmp_path, clock), FileBlobStore(tmp_path)
    cache.put(START, [])
    assert cache.get(START) == []  # no sitemap, for good: kept too
    key = note_key(BlobPrefix.CACHE_SITEMAPS, START)
    blobs.put(key, b"{not json")
    assert cache.get(START) is None
    blobs.put(key, b'{"name": "%s", "fetched_at": 1000, "value": "not a list"}' % START.encode())
    assert cache.get(START) is None
    blobs.put(key, b'{"name": "https://elsewhere.test/", "fetched_at": 1000, "value": []}')
    assert cache.get(START) is None
    cache.put(START, ["x"])
    clock[0] -= 10  # a clock set back: a note "from the future" is not trusted
    assert cache.get(START) is None


def test_no_cache_and_max_age_decide_the_crawls_cache(tmp_path: Path) -> None:
    blobs = FileBlobStore(tmp_path)
    clock = [1000.0]
    assert crawl_sitemap_cache(CrawlOptions(use_cache=False), blobs, lambda: 0.0) is None
    short = crawl_sitemap_cache(CrawlOptions(max_age_s=60.0), blobs, lambda: clock[0])
    assert short is not None
    short.put(START, ["x"])
    clock[0] += 60
    assert short.get(START) is None  # --max-age 60: a sitemap a minute old is asked again


@pytest.mark.parametrize(
    ("flags", "asked"), [((), 1), (("--no-cache",), 2), (("--max-age", "0"), 2)]
)
def test_a_recrawl_sends_no_sitemap_request_unless_told_to(
    tmp_path: Path, flags: tuple[str, ...], asked: int
) -> None:
    site = write_site(
        tmp_path / "site",
        {"/index.html": "<p>Home.</p>", "/hidden.html": "<p>Only the sitemap links here.</p>"},
    )
    cache, out = tmp_path / "cache", tmp_path / "out"
    with serve_directory(site) as server:
        (site / "sitemap.xml").write_text(
            f"<urlset><url><loc>{server.url('/hidden.html')}</loc></url></urlset>"
        )
        for run_flags in ((), flags):
            assert crawl(server.url("/index.html"), cache, out, *run_flags) == 0
            urls = {entry["url"] for entry in read_manifest(out)}
            assert server.url("/hidden.html") in urls  # the seed is there, cached or not
        sitemaps = [path for path in server.stats.paths() if path == "/sitemap.xml"]
    assert len(sitemaps) == asked


def test_what_a_crawl_with_credentials_read_is_not_kept(tmp_path: Path) -> None:
    """A site may answer robots.txt and sitemaps otherwise to a signed-in reader: a later
    crawl without the credentials must not inherit them."""
    site = write_site(tmp_path / "site", {"/index.html": "<p>Home.</p>"})
    (site / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    cache = tmp_path / "cache"
    with serve_directory(site) as server:
        signed_in = server.url("/index.html").replace("http://", "http://reader:s3cret@")
        assert crawl(signed_in, cache, tmp_path / "a") == 0
        assert crawl(server.url("/index.html"), cache, tmp_path / "b") == 0
        paths = server.stats.paths()
    assert paths.count("/robots.txt") == 2 and paths.count("/sitemap.xml") == 2
    notes = [p for p in cache.rglob("*.json") if p.parent.name in {"robots", "sitemaps"}]
    assert len(notes) == 2  # the second crawl's only
