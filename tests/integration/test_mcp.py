"""`mdcrawl mcp` driven by the mcp SDK's own stdio client: list the tools, crawl a real
docs site served on 127.0.0.1, search it, read a page and a section, and get errors as
tool errors (the server stays up)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.server import serve_directory
from tests.support.sites import require_site

TOOLS = {"crawl_docs", "list_docs", "search_docs", "read_page", "get_job", "cancel_job"}


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    content = result.structured_content
    return content["result"] if set(content) == {"result"} else content


async def test_stdio_server_crawls_searches_and_reads(tmp_path: Path) -> None:
    site = require_site("requests")
    command = [sys.executable, "-m", "mdcrawl.cli", "mcp", "--cache-dir", str(tmp_path)]
    params = StdioServerParameters(command=command[0], args=command[1:])
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    with serve_directory(site.root) as server:
        async with Client(params) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            crawled = _data(
                await client.call_tool(
                    "crawl_docs",
                    {"url": server.url(site.start), "label": "2.x"},
                    progress_callback=on_progress,
                )
            )
            assert crawled["pages"] > 20 and crawled["version"] == "2.x"
            assert crawled["site"].startswith("127.0.0.1:")
            assert progress and progress[-1][0] > 0  # notifications arrived while crawling
            listed = _data(await client.call_tool("list_docs", {}))
            assert [(d["site"], d["version"]) for d in listed] == [(crawled["site"], "2.x")]

            hits = _data(
                await client.call_tool(
                    "search_docs", {"query": "how do I upload a multipart file?", "limit": 3}
                )
            )
            assert len(hits) == 3
            assert {"title", "heading_path", "url", "text", "link"} <= set(hits[0])
            assert any("files=" in h["text"] for h in hits)

            page = _data(await client.call_tool("read_page", {"url": hits[0]["url"]}))
            assert page["markdown"].startswith("# ")
            part = _data(
                await client.call_tool(
                    "read_page", {"url": server.url("/user/advanced.html"), "section": "Timeouts"}
                )
            )
            assert part["markdown"].startswith("## Timeouts\n")
            assert len(part["markdown"]) < len(
                _data(await client.call_tool("read_page", {"url": part["url"]}))["markdown"]
            )
            job = _data(await client.call_tool("get_job", {"job_id": crawled["job_id"]}))
            assert job["status"] == "completed"

            missing = await client.call_tool("read_page", {"url": server.url("/nope.html")})
            assert missing.is_error and "no page" in missing.content[0].text
            unknown = await client.call_tool("get_job", {"job_id": "no-such-job"})
            assert unknown.is_error and "no-such-job" in unknown.content[0].text
            bad = await client.call_tool("crawl_docs", {"url": "ftp://example.org/"})
            assert bad.is_error
            assert _data(await client.call_tool("list_docs", {}))  # still serving


async def test_a_running_crawl_can_be_watched_and_cancelled(tmp_path: Path) -> None:
    site = require_site("requests")
    command = [sys.executable, "-m", "mdcrawl.cli", "mcp", "--cache-dir", str(tmp_path)]
    params = StdioServerParameters(command=command[0], args=command[1:])
    started = anyio.Event()
    job_ids: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        if message and not job_ids:
            job_ids.append(message.split(":", 1)[0])
            started.set()

    with serve_directory(site.root, latency=0.2) as server:
        async with Client(params) as client, anyio.create_task_group() as tasks:
            results: list[Any] = []

            async def crawl() -> None:
                arguments = {"url": server.url(site.start)}
                results.append(
                    await client.call_tool("crawl_docs", arguments, progress_callback=on_progress)
                )

            tasks.start_soon(crawl)
            with anyio.fail_after(60):
                await started.wait()
            running = _data(await client.call_tool("get_job", {"job_id": job_ids[0]}))
            assert running["status"] == "running"
            cancelled = _data(await client.call_tool("cancel_job", {"job_id": job_ids[0]}))
            assert cancelled["cancel_requested"] is True
    [result] = results
    assert result.is_error and "cancelled" in result.content[0].text
