"""A re-crawl of an unchanged site converts nothing, so it pays for no converter: no pool
worker starts, and the converter's modules (bs4, markdownify, readability, the
extractor) are never imported; importing them was a third of such a run's start-up.
Each crawl runs in a fresh interpreter, as the CLI does, with ``process_pool`` counted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.demo import write_site
from tests.support.server import serve_directory
from tests.support.sites import require_site
from tests.support.templated_site import PAGES, page_html

CONVERTER = {
    "mdcrawl.convert",
    "mdcrawl.extract",
    "mdcrawl.markdown",
    "bs4",
    "markdownify",
    "readability",
}
# Counts the pools started and the markdown cache documents the process steps decoded.
PROBE = """
import json, sys
from mdcrawl.pipeline import process
from mdcrawl.runtime import local
started, decoded = [], []
real_pool, real_decode = local.process_pool, process._from_json
def counted(root):
    started.append(root)
    return real_pool(root)
def decoding(data):
    decoded.append(len(data))
    return real_decode(data)
local.process_pool, process._from_json = counted, decoding
from mdcrawl.cli import main
code = main(sys.argv[1:])
print(json.dumps({
    "code": code, "pools": len(started), "decoded": len(decoded), "modules": sorted(sys.modules)
}))
"""


def crawl_probed(url: str, tmp: Path) -> dict:
    cmd = [sys.executable, "-c", PROBE, "crawl", url, "--quiet"]
    cmd += ["--cache-dir", str(tmp / "cache"), "--out", str(tmp / "out")]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=600)
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    assert probe["code"] == 0, done.stderr
    return probe


def templated_site(root: Path) -> Path:
    """A site no generator rule recognises: its pages wait for the learnt template."""
    pages = {f"/p{n}.html": page_html(n) for n in range(PAGES)}
    index = "".join(f'<a href="p{n}.html">page {n}</a> ' for n in range(PAGES))
    return write_site(root, {**pages, "/index.html": f"<p>{index}</p>"})


def site_of_kind(kind: str, tmp_path: Path) -> tuple[Path, str]:
    """The site's folder and start path: a Sphinx site, or one no rule recognises."""
    if kind == "sphinx":
        site = require_site("requests")
        return site.root, site.start
    return templated_site(tmp_path / "site"), "/index.html"


@pytest.mark.parametrize("kind", ["sphinx", "no-rule"])
def test_an_unchanged_recrawl_starts_no_worker_and_imports_no_converter(
    kind: str, tmp_path: Path
) -> None:
    root, start = site_of_kind(kind, tmp_path)
    with serve_directory(root) as server:
        fresh = crawl_probed(server.url(start), tmp_path)
        again = crawl_probed(server.url(start), tmp_path)
    # The probe sees both: a fresh crawl starts the pool; the crawl's modules are listed.
    assert fresh["pools"] == 1 and "mdcrawl.runtime.local" in again["modules"]
    assert again["pools"] == 0
    assert CONVERTER & set(again["modules"]) == set()



@pytest.mark.parametrize("kind", ["sphinx", "no-rule"])
def test_an_unchanged_recrawl_decodes_each_pages_cache_document_once_at_most(
    kind: str, tmp_path: Path
) -> None:
    """Whether the page needs a worker, then its record: one reading of its document,
    not one for the question and another for the answer."""
    root, start = site_of_kind(kind, tmp_path)
    with serve_directory(root) as server:
        crawl_probed(server.url(start), tmp_path)
        again = crawl_probed(server.url(start), tmp_path)["decoded"]
    manifest = (tmp_path / "out" / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    pages = sum(1 for line in manifest if json.loads(line)["status"] == "ok")
    assert 0 < again <= pages
