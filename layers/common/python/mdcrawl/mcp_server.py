"""The MCP server for coding agents, on the official ``mcp`` SDK (``mdcrawl[mcp]``).

Tools (names fixed by docs/api.md): ``crawl_docs``, ``list_docs``, ``search_docs``,
``read_page``, ``get_job``, ``cancel_job``. Each is a thin wrapper over
``library.tools.DocsTools``; blocking work (a crawl, SQLite) runs in a worker thread so
the server keeps answering (``get_job`` / ``cancel_job`` while a crawl runs). A failure
the agent can act on comes back as an MCP tool error with its message (``ToolError``);
the server itself never goes down with a tool.

``mdcrawl mcp`` serves it on stdio; ``mdcrawl serve`` mounts the same server at ``/mcp``
(streamable HTTP, behind the API key).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from . import __version__
from .errors import MdcrawlError
from .library.tools import CrawlRequest, DocsTools
from .models import Job

T = TypeVar("T")
INSTRUCTIONS = (
    "Documentation sites crawled into clean markdown. search_docs finds passages (with "
    "their URL and heading path) across every site in the library; read_page returns a "
    "page or one section of it; crawl_docs adds a site (or a new version of one)."
)


async def _run(work: Callable[[], T]) -> T:
    """``work`` in a thread, its MdcrawlError turned into a tool error for the agent."""
    try:
        return await anyio.to_thread.run_sync(work)
    except MdcrawlError as exc:
        raise ToolError(str(exc)) from exc


def build_server(
    root: Path, check_url: Callable[[str], None] | None = None, page_cap: int | None = None
) -> MCPServer[Any]:
    """The server over the library and cache in ``root``; ``check_url`` vets start URLs,
    ``page_cap`` bounds a crawl's pages (serve's cap)."""
    tools = DocsTools(root, check_url, page_cap)
    server: MCPServer[Any] = MCPServer(
        "mdcrawl", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    @server.tool()
    async def crawl_docs(
        url: str,
        ctx: Context,
        max_pages: int | None = None,
        include: list[str] | None = None,
        exclude: list[str] | None = None,
        label: str | None = None,
    ) -> dict[str, Any]:
        """Crawl a documentation site into the library (a re-crawl revalidates the cache
        and reports what changed). Returns the site, version, pages, tokens, warnings."""
        request = CrawlRequest(url, max_pages, tuple(include or ()), tuple(exclude or ()), label)

        def progress(job: Job) -> None:
            c = job.counters
            message = f"{job.job_id}: {c.crawled} fetched, {c.processed} converted"
            anyio.from_thread.run(ctx.report_progress, c.processed, c.discovered, message)

        return await _run(lambda: tools.crawl(request, progress))

    @server.tool()
    async def list_docs() -> list[dict[str, Any]]:
        """The sites and versions in the library, with pages, tokens and crawl time."""
        return await _run(tools.list_docs)

    @server.tool()
    async def search_docs(
        query: str, site: str | None = None, version: str | None = None, limit: int = 5
    ) -> list[dict[str, Any]]:
        """Ranked passages (BM25) for a question, each with its title, heading path, URL
        and markdown text. ``site`` and ``version`` narrow the search."""
        return await _run(lambda: tools.search(query, site, version, limit))

    @server.tool()
    async def read_page(url: str, section: str | None = None) -> dict[str, str]:
        """A page's markdown by URL, or only the section whose heading text or anchor is
        ``section``."""
        return await _run(lambda: tools.read_page(url, section))

    @server.tool()
    async def get_job(job_id: str) -> dict[str, Any]:
        """A crawl job's status and counters."""
        return await _run(lambda: tools.get_job(job_id))

    @server.tool()
    async def cancel_job(job_id: str) -> dict[str, Any]:
        """Ask a running crawl to stop; what it fetched so far is still delivered."""
        return await _run(lambda: tools.cancel_job(job_id))

    return server


def run_stdio(root: Path) -> None:
    """``mdcrawl mcp``: serve on stdin/stdout until the client closes them."""
    anyio.run(build_server(root).run_stdio_async)
