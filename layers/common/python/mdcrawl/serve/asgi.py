"""ASGI plumbing: an HTTP scope and body become an ``ApiRequest``; an ``ApiResponse`` (or
a file) goes back. The service never sees ASGI, as it never sees API Gateway."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from ..service import ApiRequest, ApiResponse

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

LOCAL_OWNER = "local"  # docs/api.md: jobs made through `mdcrawl serve` belong to "local"
API_KEY_HEADER = "x-api-key"
CHUNK = 64 * 1024


def headers_of(scope: Scope) -> dict[str, str]:
    """Header names as sent; repeated headers joined with ", " (RFC 9110)."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def query_of(scope: Scope) -> dict[str, str]:
    text = scope.get("query_string", b"").decode("latin-1")
    return dict(parse_qsl(text, keep_blank_values=True))


def owner_for(presented: str | None, api_key: str) -> str:
    """The local owner for the right key; "" (the router answers 401) for anything else."""
    if presented is not None and hmac.compare_digest(presented.encode(), api_key.encode()):
        return LOCAL_OWNER
    return ""


async def read_body(receive: Receive, max_bytes: int) -> bytes:
    """The request body, stopping one byte past ``max_bytes``: enough for the service to
    answer 413 without holding a huge upload in memory."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        if size <= max_bytes:
            parts.append(chunk[: max_bytes + 1 - size])
            size += len(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(parts)


async def to_request(scope: Scope, receive: Receive, api_key: str, max_bytes: int) -> ApiRequest:
    headers = headers_of(scope)
    presented = next((v for k, v in headers.items() if k.lower() == API_KEY_HEADER), None)
    return ApiRequest(
        method=scope["method"],
        path=scope["path"],
        query=query_of(scope),
        headers=headers,
        body=await read_body(receive, max_bytes),
        owner=owner_for(presented, api_key),
    )


async def send_response(send: Send, response: ApiResponse) -> None:
    await send_head(send, response.status, response.headers)
    await send({"type": "http.response.body", "body": response.body})


async def send_head(send: Send, status: int, headers: dict[str, str]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(k.lower().encode(), v.encode("latin-1")) for k, v in headers.items()],
        }
    )


async def send_file(send: Send, path: Path, headers: dict[str, str]) -> None:
    """Stream a file in chunks: a large docs.md never sits whole in memory."""
    size = path.stat().st_size
    await send_head(send, 200, {**headers, "Content-Length": str(size)})
    with path.open("rb") as stream:
        while chunk := stream.read(CHUNK):
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b""})
