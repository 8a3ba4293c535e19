"""Hostile sites and hostile clients (issue 9), over real sockets on loopback: a gzip bomb,
long Retry-After, a one-byte-a-second page, robots.txt and sitemaps pointing elsewhere, an
exponential include glob, 100k nested divs, Latin-1 served as UTF-8, and clients sending
what they should not. 127.0.0.2 plays "another host": the tests assert what reaches it."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from mdcrawl.deadline import fetch_deadline
from mdcrawl.errors import OutOfTime, RateLimited, TooLarge
from mdcrawl.fetch import HttpxFetcher
from mdcrawl.models import CrawlOptions
from mdcrawl.netguard import AddressGuard
from websockets.asyncio.client import connect

from tests.integration.test_serve_support import (
    create,
    job,
    run_serve,
    wait_for,
    wait_status,
)
from tests.support.demo import read_manifest
from tests.support.hostile import (
    LATIN1_HEADING,
    ORDINARY,
    HostileSite,
    serve_hostile,
)
from tests.support.server import serve_directory
from tests.support.sites import require_site

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = CrawlOptions(timeout_s=20.0, retries=3)
EXPONENTIAL_GLOB = "/**?**?**?**?**?**?**?**?**?**?**?**?**?**Z"
# The refusal every address outside the allowed ones gets (no port-scan oracle).
REFUSED_WORDS = "only crawls public addresses"


def _loopback() -> AddressGuard:
    return AddressGuard(allow_networks=("127.0.0.0/8",))


# -- the fetcher alone -----------------------------------------------------------------


async def test_a_double_gzip_bomb_stops_at_the_cap_in_bounded_memory() -> None:
    """1.8 KB inflating to 1 GiB: refused at the 10 MB cap without ever holding much more
    (on main every network chunk was inflated whole: over 1 GiB at once)."""
    with serve_hostile() as site:
        async with HttpxFetcher(OPTIONS, guard=_loopback()) as fetcher:
            tracemalloc.start()
            try:
                with pytest.raises(TooLarge):
                    await fetcher.fetch(site.url("/bomb.html"))
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
    assert peak < 100 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB while refusing the bomb"


@pytest.mark.parametrize("path", ["/limited.html", "/busy.html"])
async def test_a_retry_after_past_the_deadline_is_not_waited_for(path: str) -> None:
    """429 / 503 with Retry-After: 3600 under a 5 s deadline: rate_limited at once (on
    main: three waits of 60 s)."""
    with serve_hostile() as site:
        async with HttpxFetcher(OPTIONS, guard=_loopback()) as fetcher:
            started = time.monotonic()
            with fetch_deadline(time.time() + 5), pytest.raises(RateLimited):
                await fetcher.fetch(site.url(path))
    assert time.monotonic() - started < 5
    assert RateLimited.reason == "rate_limited"


async def test_a_trickling_page_ends_at_the_deadline() -> None:
    """One byte a second, a 20 s timeout, 3 retries: the 4 s deadline ends it (on main:
    80 s and more)."""
    with serve_hostile() as site:
        async with HttpxFetcher(OPTIONS, guard=_loopback()) as fetcher:
            started = time.monotonic()
            with fetch_deadline(time.time() + 4), pytest.raises(OutOfTime):
                await fetcher.fetch(site.url("/trickle.html"))
    assert time.monotonic() - started < 4 + 3  # slack: a loaded machine, never a speed claim
    assert OutOfTime.reason == "timeout"


# -- the CLI -------------------------------------------------------------------------------


def _cli(*args: str, timeout: float = 300) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run `mdcrawl` in a child; returns its result and the peak RSS (KiB) of it and its
    workers, measured by a wrapper process that waits for nothing else."""
    measure = (
        "import resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:])\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(r.returncode)\n"
    )
    command = [sys.executable, "-c", measure, sys.executable, "-m", "mdcrawl.cli", *args]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    return done, peak_kib


@pytest.mark.slow
def test_a_site_full_of_traps_is_crawled_within_budget(tmp_path: Path) -> None:
    """The done-when check: --budget 30 over every trap at once ends within 45 s, under
    600 MB, exit 0; every trap URL has a manifest line with a reason; ordinary pages,
    the deep page and the Latin-1 page are delivered."""
    with serve_hostile("127.0.0.2") as elsewhere:
        robots = f"User-agent: *\nAllow: /\nSitemap: {elsewhere.url('/sitemap.xml')}\n"
        with serve_hostile(site=HostileSite(robots=robots)) as site:
            out = tmp_path / "out"
            started = time.monotonic()
            done, peak_kib = _cli(
                "crawl",
                site.url("/"),
                "--out",
                str(out),
                "--cache-dir",
                str(tmp_path / "c"),
                "--budget",
                "30",
                "--quiet",
            )
            elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert elapsed < 45, f"{elapsed:.0f} s"
    assert peak_kib < 600 * 1024, f"peak RSS {peak_kib / 1024:.0f} MB"
    rows = {str(r["url"]).removeprefix(site.base_url): r for r in read_manifest(out)}
    assert rows["/bomb.html"]["reason"] == "too_large"
    assert rows["/limited.html"]["reason"] == "rate_limited"
    assert rows["/busy.html"]["reason"] == "rate_limited"
    assert rows["/trickle.html"]["reason"] == "timeout"
    for path in (*ORDINARY[1:], "/deep.html", "/latin1.html"):
        assert rows[path]["status"] == "ok", rows[path]
    docs = (out / "docs.md").read_text()
    assert "the bottom of the well" in docs and "after the well" in docs
    assert LATIN1_HEADING in docs and "gre-caf-nave" not in docs


def test_bad_out_is_refused_before_crawling(tmp_path: Path) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("not a folder")
    with serve_hostile() as site:
        for out in (a_file, a_file / "inside"):
            done, _ = _cli("crawl", site.url("/"), "--out", str(out), "--cache-dir", str(tmp_path))
            assert done.returncode == 2, done.stderr
            assert "--out" in done.stderr and "Traceback" not in done.stderr
        assert site.site.paths() == []  # refused before any request


def test_credentials_are_used_but_never_written(tmp_path: Path) -> None:
    with serve_hostile() as site:
        url = site.url("/").replace("http://", "http://reader:s3cret@")
        out = tmp_path / "out"
        done, _ = _cli(
            "crawl", url, "--out", str(out), "--cache-dir", str(tmp_path / "c"), "--max-depth", "0"
        )
    assert done.returncode == 0, done.stderr
    sent = base64.b64encode(b"reader:s3cret").decode()
    assert site.site.authorizations and set(site.site.authorizations) == {f"Basic {sent}"}
    for path in out.rglob("*"):
        if path.is_file():
            assert "s3cret" not in path.read_text(), path
    assert "s3cret" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http:/127.0.0.1/", "did you mean http://127.0.0.1/ ?"),
        ("http://127.0.0.1:99999/", "port '99999'"),
    ],
)
def test_mistyped_urls_get_clear_messages(tmp_path: Path, url: str, words: str) -> None:
    done, _ = _cli("crawl", url, "--out", str(tmp_path / "o"), "--cache-dir", str(tmp_path))
    assert done.returncode == 2 and words in done.stderr, done.stderr


# -- serve ---------------------------------------------------------------------------------


def test_serve_without_flags_refuses_internal_addresses_before_any_connection(
    tmp_path: Path,
) -> None:
    with serve_hostile() as site, run_serve(tmp_path / "state", allow_hosts=None) as server:
        client = server.client()
        answers = [
            client.post("/jobs", json={"url": url})
            for url in (
                site.url("/"),
                "http://127.0.0.2:9/",
                "http://10.0.0.1/",
                "http://169.254.169.254/latest/meta-data/",
                "http://[fd00:ec2::254]/",
                "http://localhost:8000/",
                "http://2130706433/",
            )
        ]
        credentials = client.post("/jobs", json={"url": "https://user:pw@docs.example.com/"})
        assert client.get("/jobs").json() == {"jobs": []}
    messages = {a.json()["error"]["message"] for a in answers}
    assert {a.status_code for a in answers} == {400}
    assert len(messages) == 1 and REFUSED_WORDS in messages.pop()  # one answer for all
    assert site.site.paths() == []
    assert credentials.status_code == 400 and "credentials" in credentials.text


def test_serve_fenced_to_one_address_never_reaches_another(tmp_path: Path) -> None:
    """--allow-hosts 127.0.0.1/32: a robots.txt Sitemap line and a robots.txt redirect
    both point at 127.0.0.2, which never sees a request (on main both reached it)."""
    with serve_hostile("127.0.0.2") as elsewhere:
        robots = f"User-agent: *\nSitemap: {elsewhere.url('/sitemap.xml')}\n"
        sites = [
            HostileSite(robots=robots),
            HostileSite(robots_redirect=elsewhere.url("/robots.txt")),
        ]
        with (
            serve_hostile(site=sites[0]) as first,
            serve_hostile(site=sites[1]) as second,
            run_serve(tmp_path / "state", allow_hosts="127.0.0.1/32") as server,
        ):
            client = server.client()
            for start in (first.url("/guide.html"), second.url("/guide.html")):
                started = create(client, start, max_pages=3, budget_s=20)
                view = wait_status(client, started["job_id"], "completed", "failed")
                assert view["status"] == "completed", view
            refused = client.post("/jobs", json={"url": elsewhere.url("/")})
            assert refused.status_code == 400
    assert "/robots.txt" in first.site.paths() and "/robots.txt" in second.site.paths()
    assert elsewhere.site.paths() == []


def test_serve_answers_while_an_exponential_glob_job_runs(tmp_path: Path) -> None:
    """On main the glob's regex backtracked on the event loop: serve stopped answering."""
    docs_site = require_site("requests")
    with (
        serve_directory(docs_site.root) as docs,
        run_serve(tmp_path / "state") as server,
    ):
        client = server.client()
        started = create(client, docs.url(docs_site.start), include=[EXPONENTIAL_GLOB], budget_s=60)
        slowest = 0.0
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            before = time.monotonic()
            answer = client.get(f"/jobs/{started['job_id']}", timeout=10)
            slowest = max(slowest, time.monotonic() - before)
            assert answer.status_code == 200
            if answer.json()["status"] in ("completed", "failed"):
                break
            time.sleep(0.1)
        view = wait_status(client, started["job_id"], "completed", "failed")
    assert slowest < 1.0, f"an answer took {slowest:.2f} s"
    assert view["status"] == "completed"


async def test_websocket_after_beyond_any_seq_is_invalid_input(tmp_path: Path) -> None:
    with serve_hostile() as site, run_serve(tmp_path / "state") as server:
        created = create(server.client(), site.url("/guide.html"), max_pages=1)
        async with connect(server.ws_url) as sock:
            message = {"action": "subscribe", "job_id": created["job_id"], "after": 10**30}
            await sock.send(json.dumps(message))
            answer = json.loads(await sock.recv())
            assert answer["type"] == "error"
            assert answer["error"]["code"] == "invalid_input"
            await sock.send(json.dumps({"action": "ping"}))  # the connection is still up
            assert json.loads(await sock.recv())["type"] == "pong"
        wait_for(lambda: job(server.client(), created["job_id"])["status"] == "completed", "job")


def test_the_rss_measure_sees_a_child(tmp_path: Path) -> None:
    """The RSS wrapper above measures the child, not this process: a child holding 200 MB
    reports at least that much."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource, subprocess, sys\n"
            "subprocess.run([sys.executable, '-c', 'x = bytearray(200 * 2**20); x[::4096] = "
            'b"1" * len(x[::4096])\'])\n'
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(done.stdout) > 200 * 1024
