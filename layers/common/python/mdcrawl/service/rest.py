"""The REST API: a tiny router over plain values, shared by every runtime.

``handle_request`` is the one entry point: the Lambda handler (API Gateway proxy event)
and the local server (``mdcrawl serve``) each adapt their request to ``ApiRequest`` and
write back the ``ApiResponse``. Bad input is always a 4xx; a storage failure is a 503
with ``Retry-After`` (the client may retry the same request); anything else is a bug and
propagates to the adapter, which logs it and answers 500.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import errors
from . import routes
from .deps import ApiDeps
from .http import ApiError, ApiRequest, ApiResponse

RouteFn = Callable[[ApiRequest, ApiDeps, "str | None"], ApiResponse]
RETRY_AFTER_S = 2


@dataclass(frozen=True)
class Route:
    method: str
    template: str  # "/jobs/{job_id}/events": segments in braces are parameters
    handler: RouteFn

    def match(self, path: str) -> tuple[bool, str | None]:
        """Whether ``path`` fits the template, and the job id it names (if any)."""
        want, got = self.template.split("/"), path.split("/")
        if len(want) != len(got):
            return False, None
        job_id = None
        for pattern, segment in zip(want, got, strict=True):
            if pattern.startswith("{"):
                if not segment:
                    return False, None
                job_id = segment
            elif pattern != segment:
                return False, None
        return True, job_id


ROUTES: tuple[Route, ...] = (
    Route("POST", "/jobs", routes.create_job),
    Route("GET", "/jobs", routes.list_jobs),
    Route("GET", "/jobs/{job_id}", routes.get_job),
    Route("GET", "/jobs/{job_id}/result", routes.get_result),
    Route("POST", "/jobs/{job_id}/cancel", routes.cancel_job),
    Route("GET", "/jobs/{job_id}/events", routes.list_events),
)


def handle_request(req: ApiRequest, deps: ApiDeps) -> ApiResponse:
    """Route ``req`` and answer it; never raises for anything a client can send."""
    try:
        route, job_id = _resolve(req)
        if not req.owner:
            raise ApiError(401, "unauthorized", "send your API key in the x-api-key header")
        return route.handler(req, deps, job_id)
    except ApiError as exc:
        return exc.response()
    except errors.MdcrawlError as exc:
        return _translate(exc).response()


def _resolve(req: ApiRequest) -> tuple[Route, str | None]:
    path = req.path.rstrip("/") or "/"
    allowed: list[str] = []
    for route in ROUTES:
        matched, job_id = route.match(path)
        if matched and route.method == req.method.upper():
            return route, job_id
        if matched:
            allowed.append(route.method)
    if allowed:
        raise ApiError(
            405,
            "method_not_allowed",
            f"use {' or '.join(allowed)} here",
            headers={"Allow": ", ".join(allowed)},
        )
    raise ApiError(404, "not_found", f"no route {req.path!r}")


def _translate(exc: errors.MdcrawlError) -> ApiError:
    if isinstance(exc, errors.UnsafeUrl):
        return ApiError(400, "unsafe_url", str(exc))
    if isinstance(exc, errors.InvalidInput):
        return ApiError(400, "invalid_input", str(exc))
    if isinstance(exc, errors.JobNotFound):
        return ApiError(404, "not_found", str(exc) or "no such job")
    if isinstance(exc, errors.Conflict):
        return ApiError(409, "conflict", str(exc))
    if isinstance(exc, errors.StoreError):
        return ApiError(
            503,
            "unavailable",
            "storage is unavailable; retry shortly",
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )
    # CrawlFailed / FetchError while seeding: the start URL itself cannot be crawled.
    return ApiError(422, "cannot_crawl", str(exc))
