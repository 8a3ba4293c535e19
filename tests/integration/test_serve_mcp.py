"""/mcp inside `mdcrawl serve`: the same MCP tools over streamable HTTP, driven by the mcp
SDK's client, behind the API key and the server's host allow-list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.integration.test_serve_support import run_serve
from tests.support.server import serve_directory
from tests.support.sites import require_site


def _client(url: str, key: str) -> Client:
    http = httpx2.AsyncClient(headers={"x-api-key": key}, timeout=httpx2.Timeout(30, read=300))
    return Client(streamable_http_client(url, http_client=http))


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    content = result.structured_content
    return content["result"] if set(content) == {"result"} else content


async def test_mcp_over_http_in_serve(tmp_path: Path) -> None:
    site = require_site("flask")
    state, extra = tmp_path / "state", ("--max-pages", "60")
    with serve_directory(site.root) as docs, run_serve(state, extra=extra) as server:
        endpoint = f"{server.base_url}/mcp"
        refused = httpx.post(endpoint, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401
        async with _client(endpoint, server.api_key) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"crawl_docs", "search_docs", "read_page", "get_job"} <= names
            crawled = _data(
                await client.call_tool(
                    "crawl_docs", {"url": docs.url(site.start), "max_pages": 40}
                )
            )
            assert 10 < crawled["pages"] <= 40
            assert any("truncated" in w for w in crawled["warnings"])
            hits = _data(
                await client.call_tool("search_docs", {"query": "register a blueprint"})
            )
            assert hits and all(h["url"].startswith(docs.url("/")) for h in hits)
            page = _data(await client.call_tool("read_page", {"url": hits[0]["url"]}))
            assert page["markdown"].startswith("# ")
            over = await client.call_tool("crawl_docs", {"url": docs.url(site.start), "max_pages": 61})
            assert over.is_error and "at most 60" in over.content[0].text  # serve's own cap
            outside = await client.call_tool("crawl_docs", {"url": "http://10.1.2.3/docs/"})
            assert outside.is_error and "only crawls public addresses" in outside.content[0].text
