"""``/mcp`` inside ``mdcrawl serve``: the MCP server (``mdcrawl.mcp_server``) over
streamable HTTP, behind the same API key as the REST API (``x-api-key``, or
``Authorization: Bearer <key>`` as MCP clients send it). Without the ``mcp`` extra
installed, ``serve`` runs without it.

The SDK's session manager keeps a task group for the sessions; ``running()`` holds it
open for as long as the server runs (uvicorn runs with lifespan off).
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..service.deps import UrlChecker
from ..service.http import ApiError
from .keys import LOCAL_OWNER, owner_for, presented_key

MCP_PATH = "/mcp"


def mcp_available() -> bool:
    return importlib.util.find_spec("mcp") is not None


class McpMount:
    """An ASGI app for ``/mcp`` over the library in ``root``."""

    def __init__(
        self,
        root: Path,
        api_key: str,
        host: str,
        check_url: UrlChecker,
        page_cap: int | None = None,
    ) -> None:
        from ..mcp_server import build_server

        self._server = build_server(root, check_url, page_cap)
        self._app: Any = self._server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
        self._api_key = api_key

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self._server.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        presented = presented_key(Headers(scope=scope), bearer=True)
        if owner_for(presented, self._api_key) != LOCAL_OWNER:
            answer = ApiError(401, "unauthorized", "send the API key in x-api-key").response()
            await Response(answer.body, answer.status, answer.headers)(scope, receive, send)
            return
        await self._app(scope, receive, send)
