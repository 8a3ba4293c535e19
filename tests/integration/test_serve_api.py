"""`mdcrawl serve` over real HTTP, crawling a real docs site served on 127.0.0.1: the REST
routes of docs/api.md, two crawls at once, cancel, kill -9 and resume, the client commands."""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from pathlib import Path

import httpx
from mdcrawl.adapters.local import open_local_stores
from mdcrawl.serve.server import state_root

from tests.integration.test_serve_support import (
    all_events,
    create,
    job,
    run_serve,
    wait_for,
    wait_status,
)
from tests.support.server import serve_directory
from tests.support.sites import require_site

TERMINAL = {"job.completed", "job.failed", "job.cancelled"}


def assert_gapless(events: list[dict]) -> None:
    """seq 1..n without gaps or repeats, exactly one terminal event, and it is last."""
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] in TERMINAL for e in events].count(True) == 1
    assert events[-1]["type"] in TERMINAL


def page_done_urls(events: list[dict]) -> list[str]:
    return [e["data"]["url"] for e in events if e["type"] == "page.done"]


def test_rest_routes_crawl_a_real_site(tmp_path: Path) -> None:
    site = require_site("requests")
    with serve_directory(site.root) as docs, run_serve(tmp_path / "state") as server:
        client = server.client()
        view = create(client, docs.url(site.start), max_pages=500)
        assert view["status"] in ("queued", "running") and view["links"]["result"] is None
        done = wait_status(client, view["job_id"], "completed", "failed")

        assert done["status"] == "completed", done["error"]
        assert done["counters"]["processed"] == done["counters"]["crawled"] > 10
        events = all_events(client, view["job_id"])
        assert_gapless(events)
        assert events[0]["type"] == "job.started" and events[-1]["type"] == "job.completed"
        assert len(set(page_done_urls(events))) == events[-1]["data"]["pages"]
        docs_md = _result(client, done, "markdown").decode()
        assert docs_md.startswith("# ") and docs_md.count("Source: ") >= events[-1]["data"]["pages"]
        assert _result(client, done, "llms").startswith(b"# ")
        archive = zipfile.ZipFile(io.BytesIO(_result(client, done, "pages")))
        assert len(archive.namelist()) == events[-1]["data"]["pages"]
        assert [view["job_id"]] == [j["job_id"] for j in client.get("/jobs").json()["jobs"]]
        # a job that is over cannot be cancelled
        assert client.post(f"/jobs/{view['job_id']}/cancel").status_code == 409


def _result(client: httpx.Client, view: dict, fmt: str) -> bytes:
    """The result as a browser gets it: a redirect to this server's signed link, no key."""
    redirect = client.get(view["links"]["result"][fmt])
    assert redirect.status_code == 302 and redirect.headers["cache-control"] == "no-store"
    link = redirect.headers["location"]
    assert link.startswith("/files/")
    download = httpx.get(client.base_url.join(link))  # no API key: the link is the grant
    assert download.status_code == 200
    assert download.headers["content-disposition"].startswith("attachment")
    tampered = httpx.get(client.base_url.join(link.replace("sig=", "sig=0")))
    assert tampered.status_code == 404
    return download.content


def test_requests_without_the_key_are_refused(tmp_path: Path) -> None:
    with run_serve(tmp_path / "state") as server:
        for headers in ({}, {"x-api-key": "wrong"}):
            answer = httpx.get(server.base_url + "/jobs", headers=headers)
            assert answer.status_code == 401
            assert answer.json()["error"]["code"] == "unauthorized"
        answer = httpx.post(server.base_url + "/jobs", json={"url": "http://127.0.0.1/"})
        assert answer.status_code == 401
        assert server.client().get("/jobs").json() == {"jobs": []}  # nothing was created
        # fenced to loopback (--allow-hosts): another address is refused before any traffic
        refused = server.client().post("/jobs", json={"url": "http://10.0.0.1/docs/"})
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "unsafe_url"
        # the page itself is public: it asks for the key
        page = httpx.get(server.base_url + "/")
        assert page.status_code == 200 and "app.js" in page.text


def test_two_crawls_run_at_once(tmp_path: Path) -> None:
    site = require_site("requests")
    with serve_directory(site.root, latency=0.02) as docs, run_serve(tmp_path / "state") as server:
        client = server.client()
        first = create(client, docs.url(site.start), concurrency=2)
        second = create(client, docs.url("/user/"), concurrency=2)
        # both are running before either has finished: they share the server, not a queue
        wait_for(
            lambda: all(job(client, j["job_id"])["status"] == "running" for j in (first, second)),
            "both jobs running together",
        )
        views = [wait_status(client, j["job_id"], "completed", "failed") for j in (first, second)]
        user_pages = page_done_urls(all_events(client, second["job_id"]))
    assert [v["status"] for v in views] == ["completed", "completed"]
    assert user_pages and all("/user/" in url for url in user_pages)
    assert views[0]["counters"]["processed"] > views[1]["counters"]["processed"]


def test_cancel_stops_a_running_crawl(tmp_path: Path) -> None:
    site = require_site("requests")
    with serve_directory(site.root, latency=0.2) as docs, run_serve(tmp_path / "state") as server:
        client = server.client()
        view = create(client, docs.url(site.start), concurrency=1)
        wait_for(lambda: page_done_urls(all_events(client, view["job_id"])), "a first page")
        answer = client.post(f"/jobs/{view['job_id']}/cancel")
        assert answer.status_code == 202 and answer.json()["cancel_requested"] is True
        cancelled = wait_status(client, view["job_id"], "cancelled", "completed")
        assert client.get(cancelled["links"]["self"] + "/result").status_code == 409
        events = all_events(client, view["job_id"])
    assert cancelled["status"] == "cancelled"
    assert cancelled["counters"]["discovered"] > cancelled["counters"]["crawled"]
    assert_gapless(events)
    assert events[-1]["type"] == "job.cancelled"


def test_a_killed_server_resumes_its_crawl_on_restart(tmp_path: Path) -> None:
    site = require_site("requests")
    state = tmp_path / "state"
    with serve_directory(site.root, latency=0.1) as docs:
        with run_serve(state) as server:
            client = server.client()
            job_id = create(client, docs.url(site.start), concurrency=1)["job_id"]
            wait_for(lambda: len(page_done_urls(all_events(client, job_id))) >= 3, "3 pages")
            server.kill()  # kill -9, mid-crawl
        converted_before = page_done_urls(all_events_stored(state, job_id))
        assert stored_status(state, job_id) == "running"
        with run_serve(state) as restarted:
            client = restarted.client()
            done = wait_status(client, job_id, "completed", "failed")
            events = all_events(client, job_id)
    assert done["status"] == "completed", done["error"]
    assert_gapless(events)
    assert [e["type"] for e in events].count("job.started") == 1
    pages = page_done_urls(events)
    assert len(pages) == len(set(pages)) == events[-1]["data"]["pages"]
    # pages converted before the kill were not fetched again (one in flight may be)
    page_gets = docs.stats.paths()
    for url in converted_before:
        assert page_gets.count(url.removeprefix(docs.base_url)) == 1, url


def stored_status(state: Path, job_id: str) -> str:
    """The job as SQLite holds it while no server runs (starting one would resume it)."""
    with open_local_stores(state_root(state)) as stores:
        stored = stores.jobs.get(job_id)
    assert stored is not None
    return str(stored.status)


def all_events_stored(state: Path, job_id: str) -> list[dict]:
    with open_local_stores(state_root(state)) as stores:
        return [e.to_dict() for e in stores.events.after(job_id, 0, 100_000)]


def test_submit_and_watch_commands(tmp_path: Path) -> None:
    site = require_site("requests")
    with serve_directory(site.root) as docs, run_serve(tmp_path / "state") as server:
        common = ["--api", server.base_url, "--api-key", server.api_key]
        submitted = _mdcrawl("submit", docs.url(site.start), "--max-pages", "5", *common, "--watch")
        job_id = submitted.stdout.strip()
        assert submitted.returncode == 0, submitted.stderr
        assert "completed: 5 pages" in submitted.stderr
        watched = _mdcrawl("watch", job_id, *common)  # a finished job: its whole log, then exit
        assert watched.returncode == 0 and watched.stderr.count("  ok   ") == 5
        refused = _mdcrawl("watch", job_id, "--api", server.base_url, "--api-key", "wrong")
        assert refused.returncode == 1 and "refused" in refused.stderr
        unknown = _mdcrawl("watch", "no-such-job", *common)
        assert unknown.returncode == 1 and "not_found" in unknown.stderr


def _mdcrawl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mdcrawl.cli", *args], capture_output=True, text=True, timeout=120
    )
