"""serve's Starlette app in-process: a slow start-URL check (the DNS lookup of a public
host) runs off the event loop, and download links are signed, bound and expiring."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path

import httpx
from mdcrawl.netguard import AddressGuard
from mdcrawl.serve.downloads import LinkSigner
from mdcrawl.serve.runner import JobRunner
from mdcrawl.serve.server import build_app, open_stores

KEY = "k" * 24
HINTS = re.compile(r'<script id="option-hints" type="application/json">(.*?)</script>', re.S)


def page_hints(page: str) -> dict:
    """The number fields' hints the served page carries for app.js."""
    found = HINTS.search(page)
    assert found, "the page has no option hints"
    return json.loads(found.group(1))


async def test_a_slow_start_url_check_does_not_stall_other_requests(tmp_path: Path) -> None:
    entered, release = threading.Event(), threading.Event()

    def slow_check(url: str) -> None:  # as AddressGuard.check_url waits on DNS
        entered.set()
        release.wait(30)

    stores = open_stores(tmp_path)
    runner = JobRunner(stores, tmp_path, AddressGuard(["127.0.0.0/8"], allow_public=False))
    app = build_app(stores, runner, KEY, slow_check)
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(
            transport=transport, base_url="http://serve.test", headers={"x-api-key": KEY}
        ) as client:
            post = asyncio.create_task(client.post("/jobs", json={"url": "http://127.0.0.1:9/"}))
            assert await asyncio.to_thread(entered.wait, 30)
            listing = await client.get("/jobs")
            # answered while the POST still waits on its check: the loop was free
            assert listing.status_code == 200 and not post.done()
            release.set()
            created = await post
            assert created.status_code == 202 and created.json()["job_id"] in runner.tasks
    finally:
        release.set()
        await runner.close()
        stores.close()


def test_a_download_link_is_bound_to_its_key_and_name_and_expires() -> None:
    now = [1000.0]
    signer = LinkSigner(b"s" * 32, clock=lambda: now[0])
    link = signer.sign("jobs/j1/docs.md", 60, "docs.md")
    sig = httpx.URL(link).params["sig"]
    assert signer.verify("jobs/j1/docs.md", "docs.md", sig)
    assert not signer.verify("jobs/j2/docs.md", "docs.md", sig)  # another job's file
    assert not signer.verify("jobs/j1/docs.md", "evil.html", sig)  # another name
    assert not signer.verify("jobs/j1/docs.md", "docs.md", sig[:-2] + "xx")  # forged
    assert not LinkSigner(b"t" * 32, clock=lambda: now[0]).verify(
        "jobs/j1/docs.md", "docs.md", sig
    )  # another server's secret
    now[0] = 1060.0
    assert signer.verify("jobs/j1/docs.md", "docs.md", sig)
    now[0] = 1061.0
    assert not signer.verify("jobs/j1/docs.md", "docs.md", sig)  # expired


async def test_the_servers_caps_bound_and_default_what_a_job_asks_for(tmp_path: Path) -> None:
    """`mdcrawl serve --max-pages 10`: more is refused, nothing asked for gets 10, and the
    web page's fields say so."""
    stores = open_stores(tmp_path)
    runner = JobRunner(stores, tmp_path, AddressGuard(["127.0.0.0/8"], allow_public=False))
    app = build_app(stores, runner, KEY, lambda url: None, caps={"max_pages": 10})
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://serve.test",
            headers={"x-api-key": KEY},
        ) as client:
            refused = await client.post(
                "/jobs", json={"url": "http://127.0.0.1:9/", "max_pages": 11}
            )
            assert refused.status_code == 400
            assert refused.json()["error"]["details"][0]["field"] == "max_pages"
            taken = await client.post("/jobs", json={"url": "http://127.0.0.1:9/"})
            assert taken.status_code == 202 and taken.json()["options"]["max_pages"] == 10
            assert taken.json()["options"]["budget_s"] == 300  # the CLI default, under 3600
            # A job id of one newline names no job; it must not read as GET /jobs.
            assert (await client.get("/jobs/%0A")).status_code == 404
            hints = page_hints((await client.get("/")).text)
            assert hints["max_pages"] == {"placeholder": 10, "min": 1, "max": 10}
            assert hints["budget_s"] == {"placeholder": 300, "min": 1, "max": 3600}
    finally:
        await runner.close()
        stores.close()
