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

from ..service.deps import UrlChecker
from ..service.http import ApiError
from .asgi import (
    API_KEY_HEADER,
    LOCAL_OWNER,
    Receive,
    Scope,
    Send,
    headers_of,
    owner_for,
    send_response,
)

MCP_PATH = "/mcp"


def mcp_available() -> bool:
    return importlib.util.find_spec("mcp") is not None


class McpMount:
    """An ASGI app for ``/mcp`` over the library in ``root``."""

    def __init__(self, root: Path, api_key: str, host: str, check_url: UrlChecker) -> None:
        from ..mcp_server import build_server

        self._server = build_server(root, check_url)
        self._app: Any = self._server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
        self._api_key = api_key

    @staticmethod
    def handles(path: str) -> bool:
        return path == MCP_PATH or path.startswith(MCP_PATH + "/")

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self._server.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if owner_for(_presented_key(scope), self._api_key) != LOCAL_OWNER:
            error = ApiError(401, "unauthorized", "send the API key in x-api-key")
            await send_response(send, error.response())
            return
        await self._app(scope, receive, send)


def _presented_key(scope: Scope) -> str | None:
    headers = {k.lower(): v for k, v in headers_of(scope).items()}
    if API_KEY_HEADER in headers:
        return headers[API_KEY_HEADER]
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None
