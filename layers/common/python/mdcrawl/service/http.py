"""Framework-free HTTP values: what a Lambda proxy event or an ASGI scope adapts to.

The service never sees API Gateway or a socket: an adapter builds an ``ApiRequest``
(with ``owner`` = the authenticated API key id) and writes back the ``ApiResponse``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .models import ErrorBody, ErrorDetail

JSON = "application/json"


@dataclass(frozen=True)
class ApiRequest:
    method: str
    path: str  # without the stage prefix, e.g. "/jobs/abc"
    query: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    owner: str = ""  # API key id (hosted) or "local" (serve); "" means unauthenticated
    base: str = ""  # prefix for links in answers, e.g. "/prod" behind an API stage

    def header(self, name: str) -> str | None:
        """Header value by case-insensitive name (HTTP names are case-insensitive)."""
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), None)


@dataclass(frozen=True)
class ApiResponse:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class ApiError(Exception):
    """An answer other than success, raised anywhere below the router."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: list[dict[str, str]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers or {}

    def response(self) -> ApiResponse:
        detail = ErrorDetail(code=self.code, message=self.message, details=self.details)
        body = ErrorBody(error=detail).model_dump(exclude_none=True)
        return json_response(self.status, body, self.headers)


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> ApiResponse:
    payload = json.dumps(body, separators=(",", ":"), allow_nan=False).encode()
    return ApiResponse(status, {"Content-Type": JSON, **(headers or {})}, payload)


def redirect(location: str) -> ApiResponse:
    # no-store: a pre-signed URL expires, a cached redirect would point at a dead link.
    return ApiResponse(302, {"Location": location, "Cache-Control": "no-store"})
