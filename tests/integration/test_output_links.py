"""Every in-bundle link of a crawl's outputs resolves, fragments included; the quality
report is in the manifest and the summary line.

The links are walked by tests/support/linkcheck.py (markdown-it-py and github-slugger
rules), not by the code that wrote them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mdcrawl.cli import main as mdcrawl_main

from tests.support.demo import read_manifest
from tests.support.linkcheck import check_bundle
from tests.support.server import serve_directory
from tests.support.sites import require_site

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", ["requests", "mkdocs", "flask"])
def test_every_in_bundle_link_resolves(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = require_site(name)
    out = tmp_path / "out"
    with serve_directory(site.root) as server:
        args = ["crawl", server.url(site.start), "--out", str(out), "--quiet"]
        code = mdcrawl_main([*args, "--cache-dir", str(tmp_path / "cache")])
    assert code == 0
    report = check_bundle(out)
    fragments = sum(1 for _ in _fragment_links(out))
    assert report.in_bundle > 500 and fragments > 100  # the walk saw the cross-references
    assert report.unresolved == []
    assert report.unsafe == [] and report.absolute_to_bundle == []

    manifest = [m for m in read_manifest(out) if m["file"]]
    assert all(isinstance(m["tokens"], int) and m["tokens"] > 0 for m in manifest)
    assert all(isinstance(m["warnings"], dict) for m in manifest)
    warned = sum(1 for m in manifest if m["warnings"])
    summary = capsys.readouterr().out
    assert (f"{warned} page{'s' * (warned != 1)} with warnings" in summary) == (warned > 0)


def _fragment_links(out: Path):  # noqa: ANN202 - a generator of link targets
    for file in [out / "docs.md", *(out / "pages").glob("*.md")]:
        text = file.read_text(encoding="utf-8")
        yield from (part for part in text.split("](")[1:] if "#" in part.split(")")[0])
