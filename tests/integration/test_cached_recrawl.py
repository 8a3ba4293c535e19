"""A re-crawl of an unchanged site converts nothing, so it pays for no converter: no pool
worker starts, and the converter's modules (bs4, markdownify, readability, the
extractor) are never imported; importing them was a third of such a run's start-up.
Each crawl runs in a fresh interpreter, as the CLI does, with ``process_pool`` counted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.server import serve_directory
from tests.support.sites import require_site

CONVERTER = {
    "mdcrawl.convert",
    "mdcrawl.extract",
    "mdcrawl.markdown",
    "bs4",
    "markdownify",
    "readability",
}
PROBE = """
import json, sys
from mdcrawl.runtime import local
started = []
real = local.process_pool
def counted(root):
    started.append(root)
    return real(root)
local.process_pool = counted
from mdcrawl.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "pools": len(started), "modules": sorted(sys.modules)}))
"""


def crawl_probed(url: str, tmp: Path) -> dict:
    cmd = [sys.executable, "-c", PROBE, "crawl", url, "--quiet"]
    cmd += ["--cache-dir", str(tmp / "cache"), "--out", str(tmp / "out")]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=600)
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    assert probe["code"] == 0, done.stderr
    return probe


def test_an_unchanged_recrawl_starts_no_worker_and_imports_no_converter(tmp_path: Path) -> None:
    site = require_site("requests")
    with serve_directory(site.root) as server:
        fresh = crawl_probed(server.url(site.start), tmp_path)
        again = crawl_probed(server.url(site.start), tmp_path)
    # The probe sees both: a fresh crawl starts the pool; the crawl's modules are listed.
    assert fresh["pools"] == 1 and "mdcrawl.runtime.local" in again["modules"]
    assert again["pools"] == 0
    assert CONVERTER & set(again["modules"]) == set()
