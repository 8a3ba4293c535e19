"""A crawl with credentials keeps its content cache entries to itself: a later crawl of
the same URL without them (or with other ones) fetches the page again; the same
credentials find their entries (a re-crawl of a private site still uses its cache)."""

from __future__ import annotations

import stat
from pathlib import Path

from mdcrawl.adapters.local.private import KEY_FILE, PrivateContentCache, credentials_namespace
from mdcrawl.models import CacheEntry

from tests.support.demo import crawl, read_manifest, write_site
from tests.support.server import serve_directory


class _DictCache:
    def __init__(self) -> None:
        self.entries: dict[str, CacheEntry] = {}

    def get(self, url_hash: str) -> CacheEntry | None:
        return self.entries.get(url_hash)

    def put(self, entry: CacheEntry) -> None:
        self.entries[entry.url_hash] = entry


def _entry(url_hash: str) -> CacheEntry:
    return CacheEntry(
        url_hash, "https://x.example/", "https://x.example/", 200, "text/html", 0, 1, "c"
    )


def test_entries_are_found_with_the_same_credentials_only(tmp_path: Path) -> None:
    shared = _DictCache()
    alice = PrivateContentCache(shared, credentials_namespace(tmp_path, ("alice", "pw")))
    alice.put(_entry("a" * 16))
    assert alice.get("a" * 16) == _entry("a" * 16)  # its own key, given back as asked
    assert shared.get("a" * 16) is None  # not under the public key
    assert [len(key) for key in shared.entries] == [16]
    again = PrivateContentCache(shared, credentials_namespace(tmp_path, ("alice", "pw")))
    assert again.get("a" * 16) is not None
    for other in (("alice", "pw2"), ("bob", "pw")):
        assert (
            PrivateContentCache(shared, credentials_namespace(tmp_path, other)).get("a" * 16)
            is None
        )


def test_the_namespace_is_keyed_by_a_secret_of_the_cache_folder(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    assert credentials_namespace(one, ("u", "p")) == credentials_namespace(one, ("u", "p"))
    assert credentials_namespace(one, ("u", "p")) != credentials_namespace(two, ("u", "p"))
    assert stat.S_IMODE((one / KEY_FILE).stat().st_mode) == 0o600
    assert not [p for p in one.iterdir() if p.name != KEY_FILE]  # no temporary file left


def test_a_crawl_without_credentials_does_not_get_what_a_signed_in_crawl_fetched(
    tmp_path: Path,
) -> None:
    site = write_site(tmp_path / "site", {"/index.html": "<p>Members only.</p>"})
    cache = tmp_path / "cache"
    with serve_directory(site) as server:
        url = server.url("/index.html")
        signed_in = url.replace("http://", "http://reader:s3cret@")
        assert crawl(signed_in, cache, tmp_path / "a") == 0
        assert crawl(url, cache, tmp_path / "b") == 0  # fresh cache: would not even ask
        assert crawl(signed_in, cache, tmp_path / "c") == 0
        pages = [r for r in server.stats.requests if r.path not in ("/robots.txt", "/sitemap.xml")]
    assert [("authorization" in r.headers) for r in pages] == [True, False]
    from_cache = [read_manifest(tmp_path / run)[0]["from_cache"] for run in "abc"]
    assert from_cache == [False, False, True]  # the signed-in re-crawl still used its cache


def test_crawls_racing_to_make_the_key_all_get_the_same_one(tmp_path: Path) -> None:
    """Crawls in threads of one process (the MCP server's) make the folder's key at once:
    one key wins, every crawl reads it, no temporary file is left."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        names = set(pool.map(lambda _: credentials_namespace(tmp_path, ("u", "p")), range(32)))
    assert len(names) == 1
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE]
