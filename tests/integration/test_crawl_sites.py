"""Whole real docs sites (Sphinx, MkDocs) crawled end to end through the CLI."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

import pytest

from tests.support.demo import crawl, read_manifest
from tests.support.server import serve_directory
from tests.support.sites import require_site

_A_HREF = re.compile(r"<a\s[^>]*?href=\"([^\"#?]+)", re.I)


def linked_pages(root: Path, start: str) -> set[str]:
    """Every HTML file some page links to with <a href> (plus the start): a naive oracle
    of what a crawl from the start page can reach, independent of mdcrawl's own parsing."""
    found = {start}
    for file in root.rglob("*.html"):
        folder = PurePosixPath("/" + str(file.parent.relative_to(root)).replace(".", ""))
        for href in _A_HREF.findall(file.read_text(errors="replace")):
            if "://" in href or href.startswith(("mailto:", "javascript:")):
                continue
            target = (PurePosixPath(href) if href.startswith("/") else folder / href).as_posix()
            target = _resolve(target)
            target += "index.html" if target.endswith("/") else ""
            if (root / target.lstrip("/")).is_file() and target.endswith(".html"):
                found.add(target)
    return found


def _resolve(path: str) -> str:
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            parts = parts[:-1]
        elif part not in ("", "."):
            parts.append(part)
    return "/" + "/".join(parts) + ("/" if path.endswith("/") else "")


def _page_path(url: str, base: str) -> str:
    path = url.removeprefix(base)
    return path + "index.html" if path.endswith("/") else path


@pytest.mark.parametrize("name", ["requests", "mkdocs"])
def test_whole_site_crawled_to_markdown(name: str, tmp_path: Path) -> None:
    site = require_site(name)
    with serve_directory(site.root) as server:
        code = crawl(server.url(site.start), tmp_path / "cache", tmp_path / "out")
        requested = server.stats.paths()
    assert code == 0
    out = tmp_path / "out"
    manifest = read_manifest(out)
    ok = [m for m in manifest if m["status"] == "ok"]
    got = {_page_path(str(m["url"]), server.base_url) for m in manifest}
    assert linked_pages(site.root, site.start) - got == set()
    # nothing off-site; a failure only where the site itself links to a missing page
    # (the Debian mkdocs build keeps some directory-style links); nothing asked twice
    assert all(str(m["url"]).startswith(server.base_url + "/") for m in manifest)
    for failed in (m for m in manifest if m["status"] == "failed"):
        assert failed["reason"] == "http_404"
        assert not (site.root / _page_path(str(failed["url"]), server.base_url)[1:]).exists()
    page_gets = [p for p in requested if p.endswith((".html", "/"))]
    assert len(page_gets) == len(set(page_gets))
    # the outputs: one file per ok page, the combined document, the index
    files = sorted((out / "pages").glob("*.md"))
    assert len(files) == len(ok) and {str(m["file"]) for m in ok} == {
        f"pages/{f.name}" for f in files
    }
    docs = (out / "docs.md").read_text()
    assert docs.startswith("# ") and docs.count("Source: ") >= len(ok)
    assert (out / "llms.txt").read_text().startswith("# ")
    assert all(m["words"] > 0 for m in ok)
