"""The Python API, `from mdcrawl import crawl`, on a small site served on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest
from mdcrawl import crawl
from mdcrawl.errors import InvalidInput
from mdcrawl.tokens import estimate_tokens

from tests.support.demo import read_manifest, write_site
from tests.support.server import serve_directory

LINKS = '<a href="guide.html">Guide</a> <a href="api.html">API</a> <a href="gone.html">Gone</a>'
GUIDE = "<h2>Install</h2><p>Run <code>pip install widget</code>.</p><pre><code>import widget\n</code></pre>"


def test_crawl_returns_pages_with_markdown_tokens_and_status(tmp_path: Path) -> None:
    write_site(
        tmp_path / "site",
        {"/docs/index.html": LINKS, "/docs/guide.html": GUIDE, "/docs/api.html": "<p>The API.</p>"},
    )
    with serve_directory(tmp_path / "site") as server:
        result = crawl(
            server.url("/docs/"),
            out_dir=tmp_path / "out",
            cache_dir=tmp_path / "cache",
            max_pages=10,
            label="v1",
            max_tokens=500,
        )
    assert result.job.status == "completed"
    by_url = {p.url: p for p in result.pages}
    guide = by_url[server.url("/docs/guide.html")]
    assert guide.status == "ok" and guide.title == "Page guide.html"
    assert "```\nimport widget\n```" in guide.markdown
    assert guide.tokens == estimate_tokens(guide.markdown) > 0
    gone = by_url[server.url("/docs/gone.html")]
    assert (gone.status, gone.reason, gone.markdown) == ("failed", "http_404", "")
    assert len(result.ok) == 3 and result.tokens == sum(p.tokens for p in result.ok)
    assert result.version == "v1" and result.site and result.site.endswith("/docs/")
    assert (result.out_dir / "docs-001.md").is_file() and (
        result.out_dir / "llms-full.txt"
    ).is_file()


def test_unknown_options_are_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="max_page"):
        crawl("http://127.0.0.1:9/", cache_dir=tmp_path, max_page=3)


def test_prefer_native_uses_markdown_twins_and_the_manifest_says_so(tmp_path: Path) -> None:
    write_site(
        tmp_path / "site",
        {
            "/docs/index.html": LINKS,
            "/docs/guide.html": GUIDE,
            "/docs/api.html": "<p>The API.</p>",
            "/docs/index.md": "# Widgets\n\n<!-- build: 42 -->\nRead the [guide](guide.md).\n",
            "/docs/guide.md": "# Guide\n\nThe author's own text, see [the API](api.md#top).\n",
            "/docs/llms.txt": "# Widgets\n\n> The widget docs.\n",
        },
    )
    with serve_directory(tmp_path / "site") as server:
        result = crawl(
            server.url("/docs/"),
            out_dir=tmp_path / "out",
            cache_dir=tmp_path / "cache",
            prefer_native=True,
        )
        plain = crawl(
            server.url("/docs/"), out_dir=tmp_path / "plain", cache_dir=tmp_path / "cache"
        )
    manifest = {m["url"]: m["native"] for m in read_manifest(tmp_path / "out")}
    assert manifest[server.url("/docs/")] == manifest[server.url("/docs/guide.html")] == "md_twin"
    assert manifest[server.url("/docs/api.html")] is None  # no twin: converted as usual
    assert manifest[server.url("/docs/llms.txt")] == "llms.txt"  # the site publishes one
    assert server.url("/docs/llms-full.txt") not in manifest
    guide = next(p for p in result.ok if p.url.endswith("guide.html"))
    assert (
        guide.markdown
        == f"# Guide\n\nThe author's own text, see [the API]({server.url('/docs/api.html')}#top).\n"
    )
    docs = (tmp_path / "out" / "docs.md").read_text()
    assert "build: 42" not in docs and "Read the [guide](#guide)" in docs
    assert all(m["native"] is None for m in read_manifest(tmp_path / "plain"))
    assert (
        "pip install widget" in next(p for p in plain.ok if p.url.endswith("guide.html")).markdown
    )
