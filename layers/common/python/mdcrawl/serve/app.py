"""The ASGI app of `mdcrawl serve`: the page, result downloads, REST and WebSocket.

GET /, /static/*   the web page (files beside this module, no build step, no CDN)
GET /files/<key>   a result download, by a link the REST API signed
everything else    service.rest.handle_request (docs/api.md), with x-api-key
WebSocket /        service.ws (the key in ?api_key=, as on AWS)
/mcp               the MCP server over streamable HTTP (mcp_mount.py), with x-api-key
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from ..service import ApiDeps, ApiResponse, handle_request, ws
from ..service.http import ApiError
from .asgi import (
    Receive,
    Scope,
    Send,
    owner_for,
    query_of,
    send_file,
    send_response,
    to_request,
)
from .downloads import FILES_PREFIX, SignedBlobStore, content_type
from .hub import Hub
from .mcp_mount import McpMount

log = logging.getLogger(__name__)
STATIC_DIR = Path(__file__).parent / "static"
STATIC_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
}
WS_REFUSED = 4401  # close code for a connection without a valid key


@dataclass
class ServeApp:
    api: ApiDeps
    blobs: SignedBlobStore
    hub: Hub
    api_key: str
    mcp: McpMount | None = None  # /mcp, when the mcp extra is installed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        # "lifespan" is handled by the server (server.py), not here

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path, method = scope["path"], scope["method"]
        if self.mcp is not None and self.mcp.handles(path):
            await self.mcp(scope, receive, send)
        elif method in ("GET", "HEAD") and path in STATIC_FILES:
            name, kind = STATIC_FILES[path]
            await send_file(send, STATIC_DIR / name, {"Content-Type": kind, **NO_CACHE})
        elif method in ("GET", "HEAD") and path.startswith(FILES_PREFIX):
            await self._download(scope, send)
        else:
            request = await to_request(scope, receive, self.api_key, self.api.limits.max_body_bytes)
            await send_response(send, self._answer(request))

    def _answer(self, request) -> ApiResponse:  # type: ignore[no-untyped-def]
        try:
            return handle_request(request, self.api)
        except Exception:
            # The router answers everything a client can send; this is a bug. Log it and
            # answer 500 like API Gateway does for a crashed Lambda, keep serving others.
            log.exception("unhandled error for %s %s", request.method, request.path)
            return ApiError(500, "internal_error", "internal server error").response()

    async def _download(self, scope: Scope, send: Send) -> None:
        key = unquote(scope["path"].removeprefix(FILES_PREFIX))
        query = query_of(scope)
        name = query.get("name", "")
        signed = self.blobs.signer.verify(key, query.get("expires", ""), name, query.get("sig", ""))
        path = self._blob_path(key) if signed else None
        if path is None or not path.is_file():
            error = ApiError(404, "not_found", "this download link is unknown or has expired")
            await send_response(send, error.response())
            return
        disposition = f'attachment; filename="{name}"'
        headers = {"Content-Type": content_type(name), "Content-Disposition": disposition}
        await send_file(send, path, headers)

    def _blob_path(self, key: str) -> Path | None:
        try:
            return self.blobs.path(key)
        except ValueError:  # a key that would leave the store (cannot be signed by us)
            return None

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        owner = owner_for(query_of(scope).get("api_key"), self.api_key)
        connection_id, queue = self.hub.pusher.open()
        if not ws.on_connect(connection_id, owner, self.hub.deps):
            self.hub.pusher.close(connection_id)
            await send({"type": "websocket.close", "code": WS_REFUSED})
            return
        await send({"type": "websocket.accept"})
        sender = asyncio.create_task(_send_queued(queue, send))
        try:
            await self._read_messages(connection_id, receive)
        finally:
            self.hub.pusher.close(connection_id)
            ws.on_disconnect(connection_id, self.hub.deps)
            sender.cancel()
            # The client may be gone already: a last send failing then is expected.
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender

    async def _read_messages(self, connection_id: str, receive: Receive) -> None:
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                text = (message.get("bytes") or b"").decode("utf-8", "replace")
            self.hub.handle_message(connection_id, text)


NO_CACHE = {"Cache-Control": "no-cache"}


async def _send_queued(queue: asyncio.Queue, send: Send) -> None:  # type: ignore[type-arg]
    """One writer per socket: messages leave in the order they were pushed."""
    while (message := await queue.get()) is not None:
        await send({"type": "websocket.send", "text": json.dumps(message)})
    await send({"type": "websocket.close", "code": 1008})  # dropped: too far behind
