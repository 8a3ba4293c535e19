"""The docs library end to end on the requests docs served from a copy on 127.0.0.1:
outputs for agents, a re-crawl that only revalidates and reports no change, an edited
page reported as the one change, and `mdcrawl list / search / diff`."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from mdcrawl.cli import main
from mdcrawl.rewrite import iter_lines
from mdcrawl.tokens import estimate_tokens

from tests.support.demo import crawl, read_manifest, write_site
from tests.support.server import serve_directory
from tests.support.sites import require_site

EDITED = "user/install.html"
OLD = "<p>To install Requests, simply run this simple command in your"
NEW = "<p>Brand new sentence about wheels. To install Requests, simply run this simple command in your"


def test_crawl_recrawl_and_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = require_site("requests")
    root = tmp_path / "site"
    shutil.copytree(site.root, root)
    cache = tmp_path / "cache"
    with serve_directory(root) as server:
        url = server.url(site.start)
        assert crawl(url, cache, tmp_path / "v1", "--max-tokens", "3000", "--label", "v1") == 0
        _check_agent_outputs(tmp_path / "v1", 3000)

        server.stats.reset()
        assert crawl(url, cache, tmp_path / "v2", "--max-age", "0", "--label", "v2") == 0
        gets = [r for r in server.stats.requests if r.method == "GET" and r.path.endswith(".html")]
        assert gets and all(
            "if-none-match" in r.headers or "if-modified-since" in r.headers for r in gets
        )
        assert "0 added, 0 removed, 0 changed" in (tmp_path / "v2" / "changes.md").read_text()

        page = root / EDITED
        page.write_text(page.read_text().replace(OLD, NEW, 1))
        assert crawl(url, cache, tmp_path / "v3", "--max-age", "0", "--label", "v3") == 0
    changes = (tmp_path / "v3" / "changes.md").read_text()
    assert "0 added, 0 removed, 1 changed" in changes
    assert f"({server.url('/' + EDITED)})" in changes

    capsys.readouterr()
    assert main(["diff", "127.0.0.1", "--cache-dir", str(cache), "--json", "--patch"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out[: out.index("\n}\n") + 2])
    assert report["changed"] == [server.url("/" + EDITED)] and report["previous"] == "v2"
    assert "+Brand new sentence about wheels." in out

    assert main(["list", "--cache-dir", str(cache), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted(s["version"] for s in listed) == ["v1", "v2", "v3"]
    assert main(["search", "wheels", "--cache-dir", str(cache), "--version", "v3"]) == 0
    assert server.url("/" + EDITED) in capsys.readouterr().out
    assert main(["search", "wheels", "--cache-dir", str(cache), "--version", "v2"]) == 1


def _check_agent_outputs(out: Path, budget: int) -> None:
    manifest = [m for m in read_manifest(out) if m["status"] == "ok"]
    assert all(isinstance(m["tokens"], int) and m["tokens"] > 0 for m in manifest)
    full = (out / "llms-full.txt").read_text()
    assert all(f"Source: {m['url']}" in full for m in manifest)
    chunks = [json.loads(line) for line in (out / "chunks.jsonl").read_text().splitlines()]
    assert {c["url"] for c in chunks} == {m["url"] for m in manifest}
    for chunk in chunks:
        lines = list(iter_lines(chunk["text"]))
        assert not lines[-1][1] or lines[-1][0].lstrip(" >\t").startswith(
            ("```", "~~~")
        )  # fences closed
    parts = sorted(out.glob("docs-0*.md"))
    assert len(parts) >= 5
    assert all(estimate_tokens(p.read_text()) <= budget for p in parts)
    index = (out / "docs-parts.md").read_text()
    assert all(f"]({p.name})" in index for p in parts)


def test_the_library_holds_the_pages_as_the_outputs_have_them(tmp_path: Path) -> None:
    """A site no generator rule knows: its first pages are converted before the crawl
    has learnt the site's template, and finalize converts them again with it. The
    library indexes those final conversions, the ones chunks.jsonl holds (not the first
    records, with the template's chrome and titles a timing decided)."""
    from tests.support.templated_site import PAGES, page_html

    pages = {f"/p{n}.html": page_html(n) for n in range(PAGES)}
    index = "".join(f'<a href="p{n}.html">page {n}</a> ' for n in range(PAGES))
    site = write_site(tmp_path / "site", {**pages, "/index.html": f"<p>{index}</p>"})
    cache, out = tmp_path / "cache", tmp_path / "out"
    with serve_directory(site) as server:
        assert crawl(server.url("/index.html"), cache, out) == 0
    lines = [json.loads(line) for line in (out / "chunks.jsonl").read_text().splitlines()]
    outputs = sorted((c["url"], c["title"], c["text"]) for c in lines)
    with sqlite3.connect(cache / "library.sqlite3") as db:
        indexed = sorted(db.execute("SELECT url, title, body FROM chunks").fetchall())
    assert len(outputs) > PAGES
    assert indexed == outputs
