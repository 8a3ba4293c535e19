"""Politeness and limits, through the CLI: robots, scope, concurrency, budget, page cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.demo import crawl, read_manifest, write_site
from tests.support.server import serve_directory


def _links(*paths: str) -> str:
    return "".join(f'<p><a href="{p}">{p}</a></p>' for p in paths)


@pytest.fixture
def small_site(tmp_path: Path) -> Path:
    return write_site(
        tmp_path / "site",
        {
            "/robots.txt": "User-agent: *\nDisallow: /docs/private/\n",
            "/outside.html": "outside the docs folder",
            "/docs/index.html": _links(
                "a.html", "b.html", "private/secret.html", "../outside.html"
            ),
            "/docs/a.html": _links("b.html", "index.html"),
            "/docs/b.html": _links("a.html"),
            "/docs/private/secret.html": "secret",
        },
    )


def test_robots_disallow_is_honoured_and_can_be_ignored(small_site: Path, tmp_path: Path) -> None:
    with serve_directory(small_site) as server:
        url = server.url("/docs/index.html")
        assert crawl(url, tmp_path / "cache", tmp_path / "out") == 0
        polite = server.stats.paths()
        server.stats.reset()
        assert crawl(url, tmp_path / "cache2", tmp_path / "out2", "--ignore-robots") == 0
        rude = server.stats.paths()
    assert "/docs/private/secret.html" not in polite
    skipped = {
        m["url"]: m["reason"] for m in read_manifest(tmp_path / "out") if m["status"] == "skipped"
    }
    assert skipped == {server.url("/docs/private/secret.html"): "robots_disallowed"}
    assert "/docs/private/secret.html" in rude


def test_scope_keeps_to_host_and_folder(tmp_path: Path) -> None:
    with serve_directory(tmp_path / "site") as server:
        other_host = server.base_url.replace("127.0.0.1", "localhost")
        write_site(
            tmp_path / "site",
            {
                "/outside.html": "outside",
                "/docs/index.html": _links("a.html", "/outside.html", f"{other_host}/docs/a.html"),
                "/docs/a.html": "in scope",
            },
        )
        assert crawl(server.url("/docs/index.html"), tmp_path / "cache", tmp_path / "out") == 0
        hosts = {r.headers.get("host") for r in server.stats.requests}
        paths = server.stats.paths()
    assert "/outside.html" not in paths
    assert hosts == {server.base_url.removeprefix("http://")}
    urls = {m["url"] for m in read_manifest(tmp_path / "out")}
    assert urls == {server.url("/docs/"), server.url("/docs/a.html")}


def _wide_site(root: Path, pages: int) -> Path:
    names = [f"p{i:02d}.html" for i in range(pages)]
    return write_site(root, {"/index.html": _links(*names), **{f"/{n}": n for n in names}})


def test_server_never_sees_more_than_the_concurrency(tmp_path: Path) -> None:
    with serve_directory(_wide_site(tmp_path / "site", 24), latency=0.05) as server:
        code = crawl(server.url("/"), tmp_path / "cache", tmp_path / "out", "--concurrency", "3")
        assert code == 0
        assert 2 <= server.stats.max_in_flight <= 3
    assert len([m for m in read_manifest(tmp_path / "out") if m["status"] == "ok"]) == 25


def test_budget_cut_delivers_a_truncated_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve_directory(_wide_site(tmp_path / "site", 30), latency=0.3) as server:
        flags = ("--concurrency", "1", "--budget", "1")
        assert crawl(server.url("/"), tmp_path / "cache", tmp_path / "out", *flags) == 0
    summary = capsys.readouterr().out
    assert "truncated" in summary
    left = int(summary.split("truncated: ")[1].split(" ")[0])
    manifest = read_manifest(tmp_path / "out")
    ok = [m for m in manifest if m["status"] == "ok"]
    # URLs in flight when the budget ended were cut there: a line each, reason timeout.
    cut = [m for m in manifest if m["status"] != "ok"]
    assert all((m["status"], m["reason"]) == ("failed", "timeout") for m in cut)
    assert 1 <= len(ok) < 31 and left == 31 - len(ok) - len(cut)
    assert f"{left} URLs left" in (tmp_path / "out" / "docs.md").read_text()


def test_page_cap_stops_discovery(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve_directory(_wide_site(tmp_path / "site", 30)) as server:
        assert crawl(server.url("/"), tmp_path / "cache", tmp_path / "out", "--max-pages", "5") == 0
        page_gets = [p for p in server.stats.paths() if p.endswith((".html", "/"))]
    assert len(page_gets) == 5
    assert len(read_manifest(tmp_path / "out")) == 5
    assert "truncated: 26 URLs left" in capsys.readouterr().out
