"""A fresh crawl starts its conversion workers' forkserver before its first request; a
re-crawl whose start page is cached starts it only if a page needs converting."""

from __future__ import annotations

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
