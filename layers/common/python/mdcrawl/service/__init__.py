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

from .deps import ApiDeps, WsDeps
from .http import ApiRequest, ApiResponse
from .models import JobRequest, JobView, ServiceLimits
from .rest import ROUTES, handle_request

__all__ = [
    "ROUTES",
    "ApiDeps",
    "ApiRequest",
    "ApiResponse",
    "JobRequest",
    "JobView",
    "ServiceLimits",
    "WsDeps",
    "handle_request",
]
