"""robots.txt kept in the local cache folder (adapters/local/robots.py): fresh for a day,
then asked for again; a re-crawl within the day sends no robots.txt request."""

from __future__ import annotations

from pathlib import Path

from mdcrawl.adapters.local.blobs import FileBlobStore
from mdcrawl.adapters.local.robots import FRESH_S, FileRobotsCache, robots_key

from tests.support.demo import crawl, write_site
from tests.support.server import serve_directory

ORIGIN = "https://docs.test"


def cache_at(tmp_path: Path, clock: list[float]) -> FileRobotsCache:
    return FileRobotsCache(FileBlobStore(tmp_path), lambda: clock[0])


def test_a_robots_text_is_kept_while_fresh(tmp_path: Path) -> None:
    clock = [1000.0]
    cache = cache_at(tmp_path, clock)
    assert cache.get(ORIGIN) is None
    cache.put(ORIGIN, "User-agent: *\nDisallow: /private/\n")
    clock[0] += FRESH_S - 1
    assert cache_at(tmp_path, clock).get(ORIGIN) == "User-agent: *\nDisallow: /private/\n"
    assert cache.get("https://other.test") is None
    clock[0] += 1
    assert cache.get(ORIGIN) is None  # a day old: fetched again


def test_a_failed_fetch_is_kept_as_allow_all_and_a_damaged_note_is_unknown(
    tmp_path: Path,
) -> None:
    clock = [1000.0]
    cache = cache_at(tmp_path, clock)
    cache.put(ORIGIN, "")
    assert cache.get(ORIGIN) == ""
    FileBlobStore(tmp_path).put(robots_key(ORIGIN), b"{not json")
    assert cache.get(ORIGIN) is None
    clock[0] -= 10  # a clock set back: a note "from the future" is not trusted
    cache.put(ORIGIN, "x")
    clock[0] -= 10
    assert cache.get(ORIGIN) is None


def test_a_recrawl_sends_no_robots_request_unless_told_no_cache(tmp_path: Path) -> None:
    site = write_site(tmp_path / "site", {"/index.html": "<h1>Home</h1><p>Words here.</p>"})
    (site / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    cache = tmp_path / "cache"
    with serve_directory(site) as server:
        for flags in ((), (), ("--no-cache",)):
            assert crawl(server.url("/index.html"), cache, tmp_path / "out", *flags) == 0
        robots = [path for path in server.stats.paths() if path == "/robots.txt"]
    assert len(robots) == 2  # the first crawl and the --no-cache one
