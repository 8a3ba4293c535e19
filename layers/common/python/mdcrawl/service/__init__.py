"""The API logic, once, for every runtime: REST (``rest.handle_request``) and the
WebSocket protocol (``ws``), written over the ports. Handlers and servers only adapt
their transport to these plain values.

    rest.py     router: ApiRequest -> ApiResponse
    routes.py   one function per route
    results.py  result blobs and the lazily built pages zip
    models.py   pydantic edge models (JobRequest, JobView, errors) and ServiceLimits
    http.py     ApiRequest, ApiResponse, ApiError
    deps.py     ApiDeps, WsDeps and the callables a runtime binds (start, url check)
    ws.py       on_connect, on_disconnect, on_message, fan_out, EventCursor
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Exported names and the module each lives in, imported on first use: the websocket
# function imports ``service.ws`` alone, not the REST router and its routes.
_EXPORTS = {
    "ROUTES": "rest",
    "handle_request": "rest",
    "ApiDeps": "deps",
    "WsDeps": "deps",
    "ApiRequest": "http",
    "ApiResponse": "http",
    "JobRequest": "models",
    "JobView": "models",
    "ServiceLimits": "models",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)
