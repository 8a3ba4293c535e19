"""The ASGI app of `mdcrawl serve`, on Starlette: the page, result downloads, REST and
WebSocket. The API logic is ``mdcrawl.service``, framework-free (the Lambdas share it);
here Starlette's requests become an ``ApiRequest`` and the ``ApiResponse`` goes back.

GET /, /static/*   the web page (files beside this module, no build step, no CDN)
GET /files/<key>   a result download, by a link the REST API signed (downloads.py)
/mcp               the MCP server over streamable HTTP (mcp_mount.py), with x-api-key
everything else    service.rest.handle_request (docs/api.md), with x-api-key; in a worker
                   thread, so its blocking work (the start URL's DNS lookup, SQLite)
                   never stalls the event loop that serves the others
WebSocket /        service.ws (the key in ?api_key=, as on AWS)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route, Router, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from ..service import ApiDeps, ApiRequest, ApiResponse, handle_request, ws
from ..service.http import ApiError
from ..service.results import content_type
from .downloads import FILES_PREFIX, SignedBlobStore
from .hub import Hub
from .keys import owner_for, presented_key
from .mcp_mount import MCP_PATH, McpMount
from .page import STATIC_DIR, render_page

log = logging.getLogger(__name__)
WS_REFUSED = 4401  # close code for a connection without a valid key
NO_CACHE = {"Cache-Control": "no-cache"}  # the page changes with the server: revalidate
ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


@dataclass
class ServeApp:
    api: ApiDeps
    blobs: SignedBlobStore
    hub: Hub
    api_key: str
    mcp: McpMount | None = None  # /mcp, when the mcp extra is installed
    router: Router = field(init=False)

    def __post_init__(self) -> None:
        self.router = Router(
            routes=[
                Route("/", self._page, methods=ALL_METHODS),
                Mount("/static", app=_FreshStaticFiles(directory=STATIC_DIR)),
                Route(FILES_PREFIX + "{key:path}", self._download, methods=ALL_METHODS),
                Route(MCP_PATH, _McpGate(self), methods=ALL_METHODS),
                Route(MCP_PATH + "/{rest:path}", _McpGate(self), methods=ALL_METHODS),
                WebSocketRoute("/", self._websocket),
            ],
            default=self._rest,
            redirect_slashes=False,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.router(scope, receive, send)

    async def _page(self, request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return await self._answer(request)
        page = render_page(self.api.limits.options)  # small: rendered per request, no state
        return Response(page, media_type="text/html; charset=utf-8", headers=NO_CACHE)

    async def _rest(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self._answer(Request(scope, receive))
        await response(scope, receive, send)

    async def _answer(self, request: Request) -> Response:
        api_request = await to_api_request(request, self.api_key, self.api.limits.max_body_bytes)
        answer = await run_in_threadpool(self._handle, api_request)
        return Response(answer.body, answer.status, headers=answer.headers)

    def _handle(self, request: ApiRequest) -> ApiResponse:
        try:
            return handle_request(request, self.api)
        except Exception:
            # The router answers everything a client can send; this is a bug. Log it and
            # answer 500 like API Gateway does for a crashed Lambda, keep serving others.
            log.exception("unhandled error for %s %s", request.method, request.path)
            return ApiError(500, "internal_error", "internal server error").response()

    async def _download(self, request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return await self._answer(request)
        key = request.path_params["key"]
        name = request.query_params.get("name", "")
        signed = self.blobs.signer.verify(key, name, request.query_params.get("sig", ""))
        path = self._blob_path(key) if signed else None
        if path is None or not path.is_file():
            error = ApiError(404, "not_found", "this download link is unknown or has expired")
            answer = error.response()
            return Response(answer.body, answer.status, headers=answer.headers)
        return FileResponse(path, media_type=content_type(name), filename=name)

    def _blob_path(self, key: str) -> Path | None:
        try:
            return self.blobs.path(key)
        except ValueError:  # a key that would leave the store (cannot be signed by us)
            return None

    async def _websocket(self, websocket: WebSocket) -> None:
        owner = owner_for(websocket.query_params.get("api_key"), self.api_key)
        connection_id, queue = self.hub.pusher.open()
        if not ws.on_connect(connection_id, owner, self.hub.deps):
            self.hub.pusher.close(connection_id)
            await websocket.close(code=WS_REFUSED)
            return
        await websocket.accept()
        sender = asyncio.create_task(_send_queued(queue, websocket))
        try:
            await self._read_messages(connection_id, websocket)
        finally:
            self.hub.pusher.close(connection_id)
            ws.on_disconnect(connection_id, self.hub.deps)
            sender.cancel()
            # The client may be gone already: a last send failing then is expected.
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender

    async def _read_messages(self, connection_id: str, websocket: WebSocket) -> None:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                text = (message.get("bytes") or b"").decode("utf-8", "replace")
            self.hub.handle_message(connection_id, text)


async def to_api_request(request: Request, api_key: str, max_bytes: int) -> ApiRequest:
    headers = {name: ", ".join(request.headers.getlist(name)) for name in request.headers}
    return ApiRequest(
        method=request.method,
        # The path as it arrived, percent-decoded: request.url re-parses it with urlsplit,
        # which deletes tabs and newlines, so "/jobs/%0A" would read as "/jobs/".
        path=request.scope["path"],
        query=dict(request.query_params),
        headers=headers,
        body=await read_body(request, max_bytes),
        owner=owner_for(presented_key(request.headers), api_key),
    )


async def read_body(request: Request, max_bytes: int) -> bytes:
    """The body, stopping one byte past ``max_bytes``: enough for the service to answer
    413 without holding a huge upload in memory."""
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        parts.append(chunk[: max_bytes + 1 - size])
        size += len(chunk)
        if size > max_bytes:
            break
    return b"".join(parts)


class _FreshStaticFiles(StaticFiles):
    """The page's files with ``Cache-Control: no-cache``: a browser revalidates them (a
    304 by ETag), so a new server version never meets an old app.js."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers.update(NO_CACHE)
        return response


class _McpGate:
    """/mcp as it came to the MCP server (an ASGI app of its own), when there is one;
    without the mcp extra, the API's 404."""

    def __init__(self, app: ServeApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app.mcp is None:
            await self._app._rest(scope, receive, send)
        else:
            await self._app.mcp(scope, receive, send)


async def _send_queued(queue: asyncio.Queue, websocket: WebSocket) -> None:  # type: ignore[type-arg]
    """One writer per socket: messages leave in the order they were pushed."""
    while (message := await queue.get()) is not None:
        await websocket.send_json(message)
    await websocket.close(code=1008)  # dropped: too far behind
