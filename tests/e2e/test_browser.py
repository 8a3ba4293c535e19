"""The web page of `mdcrawl serve` in headless Chromium (Debian's, driven by Playwright):
start two crawls of a real docs site, watch progress arrive, cancel one, let the other
finish, download its results and compare docs.md with what `mdcrawl crawl` writes."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright

from tests.integration.test_serve_support import run_serve
from tests.support.server import serve_directory
from tests.support.sites import require_site

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
WAIT_MS = 120_000  # a safety net for a hung crawl, never a performance claim
# The crawl note names the day and counts; nothing else in docs.md may differ.
CRAWL_NOTE = re.compile(r"^Crawled by mdcrawl.*$", re.M)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing: apt-get install -y chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def start_job(page: Page, url: str, concurrency: int | None = None) -> Locator:
    page.fill("#url", url)
    if concurrency is not None:
        page.click("#options summary")
        page.fill("#concurrency", str(concurrency))
    count = page.locator(".job").count()
    page.click("#start")
    expect(page.locator(".job")).to_have_count(count + 1)
    return page.locator(".job").first  # the newest card is on top


def test_start_watch_cancel_finish_download(browser: Browser, tmp_path: Path) -> None:
    site = require_site("requests")
    with (
        serve_directory(site.root, latency=0.3) as slow_docs,
        serve_directory(site.root) as docs,
        run_serve(tmp_path / "state") as server,
    ):
        page = browser.new_page(accept_downloads=True)
        page.goto(f"{server.base_url}/#key={server.api_key}")
        expect(page.locator("#connection")).to_have_attribute("data-state", "open")

        slow = start_job(page, slow_docs.url(site.start), concurrency=1)
        # live progress: pages appear while the job is still running
        expect(slow.locator(".page-count")).not_to_have_text("0", timeout=WAIT_MS)
        expect(slow).to_have_attribute("data-status", "running")
        slow.locator(".cancel").click()
        expect(slow).to_have_attribute("data-status", "cancelled", timeout=WAIT_MS)

        done = start_job(page, docs.url(site.start))
        expect(done).to_have_attribute("data-status", "completed", timeout=WAIT_MS)
        pages = int(done.locator(".page-count").inner_text())
        assert pages > 10 and done.locator("[data-counter=processed]").inner_text() != "0"
        served_docs = download(page, done, "markdown").decode()
        assert len(zipfile.ZipFile(io.BytesIO(download(page, done, "pages"))).namelist()) == pages
        assert download(page, done, "llms").startswith(b"# ")
        done.locator(".preview-box summary").click()
        expect(done.locator(".preview")).to_contain_text("Source: ")

        cli_out = tmp_path / "cli"
        assert cli_crawl(docs.url(site.start), tmp_path / "cli-cache", cli_out) == 0
    cli_docs = (cli_out / "docs.md").read_text()
    assert CRAWL_NOTE.sub("", served_docs) == CRAWL_NOTE.sub("", cli_docs)


def download(page: Page, card: Locator, fmt: str) -> bytes:
    with page.expect_download(timeout=WAIT_MS) as started:
        card.locator(f"button[data-format={fmt}]").click()
    saved = Path(started.value.path())
    data = saved.read_bytes()
    shutil.rmtree(saved.parent, ignore_errors=True)
    return data


def cli_crawl(url: str, cache_dir: Path, out: Path) -> int:
    """`mdcrawl crawl` in its own process (Playwright's loop owns this thread)."""
    command = [sys.executable, "-m", "mdcrawl.cli", "crawl", url, "--quiet",
               "--cache-dir", str(cache_dir), "--out", str(out)]  # fmt: skip
    return subprocess.run(command, capture_output=True, timeout=300).returncode
