"""One function per REST route: ``(request, deps, job_id) -> ApiResponse``.

Each raises ``ApiError`` (or an ``errors`` exception the router translates) for any
answer but success. Validation always comes before the first write, so bad input
stores nothing.
"""

from __future__ import annotations

import hashlib
import re

from ..models import CrawlOptions, Job, JobStatus
from ..pipeline import jobs as pipeline_jobs
from ..urls import validate_start_url
from .deps import ApiDeps
from .http import ApiError, ApiRequest, ApiResponse, json_response, redirect
from .models import RESULT_FORMATS, JobRequest, JobView, MalformedJson, RequestInvalid
from .results import RESULT_FILES, ensure_result

# Ids we could have issued; anything else cannot name a job (and must not reach a store).
_JOB_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_IDEMPOTENCY_KEY_RE = re.compile(r"^[\x21-\x7e]{1,255}$")
IDEMPOTENCY_HEADER = "Idempotency-Key"


def create_job(req: ApiRequest, deps: ApiDeps, _: str | None = None) -> ApiResponse:
    _check_json_body(req, deps.limits.max_body_bytes)
    try:
        body = JobRequest.parse(req.body, deps.limits)
    except MalformedJson as exc:
        raise ApiError(400, "invalid_json", str(exc)) from None
    except RequestInvalid as exc:
        raise ApiError(400, "invalid_input", str(exc), exc.details) from None
    url = validate_start_url(body.url)
    options = body.to_options(deps.limits)
    job_id = body.job_id or _idempotent_id(req)
    if job_id and (job := deps.jobs.get(job_id)) is not None:
        return _replay(job, url, options, req, deps)
    deps.check_url(url)
    webhook = _checked_webhook(body.webhook, deps)
    job = pipeline_jobs.create_job(url, options, req.owner, deps.job_deps, job_id, webhook)
    # With a given id, create_job returns whatever job already holds it (a racing POST
    # may have won): check that it is ours and the same request before starting it.
    _check_same_request(job, url, options, req.owner)
    deps.start_job(job.job_id)
    return _accepted(job, req)


def _checked_webhook(url: str | None, deps: ApiDeps) -> str | None:
    """A webhook URL passes the crawl's SSRF guard (and again when it is sent)."""
    if url is None:
        return None
    if not deps.limits.webhooks:
        raise ApiError(400, "invalid_input", "this service sends no webhooks")
    if not url.startswith(("https://", "http://")):
        raise ApiError(400, "invalid_input", "webhook: an http(s) URL is expected")
    deps.check_url(url)
    return url


def _check_json_body(req: ApiRequest, max_bytes: int) -> None:
    if len(req.body) > max_bytes:
        raise ApiError(413, "payload_too_large", f"the body is over {max_bytes} bytes")
    content_type = (req.header("content-type") or "application/json").split(";")[0].strip()
    if content_type.lower() != "application/json":
        raise ApiError(415, "unsupported_media_type", "send the body as application/json")


def _idempotent_id(req: ApiRequest) -> str | None:
    """A job id derived from the owner and the Idempotency-Key: a retry finds the same job,
    and two owners using the same key never meet."""
    key = req.header(IDEMPOTENCY_HEADER)
    if key is None:
        return None
    if not _IDEMPOTENCY_KEY_RE.fullmatch(key):
        raise ApiError(400, "invalid_input", "Idempotency-Key must be 1-255 visible ASCII chars")
    return "k" + hashlib.sha256(f"{req.owner}\n{key}".encode()).hexdigest()[:32]


def _check_same_request(job: Job, url: str, options: CrawlOptions, owner: str) -> None:
    if job.owner != owner:
        raise ApiError(409, "conflict", "that job_id is already in use; choose another")
    if job.url != url or job.options != options:
        raise ApiError(409, "idempotency_mismatch", "this job id was used for another request")


def _replay(
    job: Job, url: str, options: CrawlOptions, req: ApiRequest, deps: ApiDeps
) -> ApiResponse:
    _check_same_request(job, url, options, req.owner)
    if job.status == JobStatus.QUEUED:
        # The first POST may have died between create and start; starting is idempotent.
        deps.start_job(job.job_id)
    return _accepted(job, req, replayed=True)


def _accepted(job: Job, req: ApiRequest, replayed: bool = False) -> ApiResponse:
    view = JobView.of(job, req.base)
    headers = {"Location": view.links.self}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return json_response(202, view.model_dump(), headers)


def list_jobs(req: ApiRequest, deps: ApiDeps, _: str | None = None) -> ApiResponse:
    limit = _int_param(
        req, "limit", default=deps.limits.list_limit, low=1, high=deps.limits.list_limit
    )
    jobs = deps.jobs.list_for_owner(req.owner, limit)
    return json_response(200, {"jobs": [JobView.of(j, req.base).model_dump() for j in jobs]})


def get_job(req: ApiRequest, deps: ApiDeps, job_id: str | None) -> ApiResponse:
    job = _require_job(deps, job_id, req.owner)
    return json_response(200, JobView.of(job, req.base).model_dump())


def get_result(req: ApiRequest, deps: ApiDeps, job_id: str | None) -> ApiResponse:
    fmt = req.query.get("format", "markdown")
    if fmt not in RESULT_FORMATS:
        raise ApiError(400, "invalid_input", f"format must be one of {', '.join(RESULT_FORMATS)}")
    job = _require_job(deps, job_id, req.owner)
    if job.status != JobStatus.COMPLETED:
        raise ApiError(409, "not_ready", f"the job is {job.status}; results come once completed")
    key = ensure_result(job, fmt, deps.pages, deps.blobs)
    if key is None:
        raise ApiError(404, "not_found", f"the job has no {fmt} result")
    name = RESULT_FILES[fmt].name
    return redirect(deps.blobs.link(key, deps.limits.link_expires_s, filename=name))


def cancel_job(req: ApiRequest, deps: ApiDeps, job_id: str | None) -> ApiResponse:
    job = _require_job(deps, job_id, req.owner)
    if job.status.terminal:
        raise ApiError(409, "conflict", f"the job is already {job.status}")
    job = pipeline_jobs.cancel_job(job.job_id, deps.job_deps)
    return json_response(202, JobView.of(job, req.base).model_dump())


def list_events(req: ApiRequest, deps: ApiDeps, job_id: str | None) -> ApiResponse:
    after = _int_param(req, "after", default=0, low=0, high=2**62)
    most = deps.limits.events_limit
    limit = _int_param(req, "limit", default=most, low=1, high=most)
    job = _require_job(deps, job_id, req.owner)
    events = deps.events.after(job.job_id, after, limit)
    next_after = events[-1].seq if events else after
    body = {
        "events": [e.to_dict() for e in events],
        "next_after": next_after,
        "more": len(events) == limit,
    }
    return json_response(200, body)


def _require_job(deps: ApiDeps, job_id: str | None, owner: str) -> Job:
    """The caller's job; a job of somebody else is as unknown as one that never existed."""
    job = deps.jobs.get(job_id) if job_id and _JOB_ID_RE.fullmatch(job_id) else None
    if job is None or job.owner != owner:
        raise ApiError(404, "not_found", f"no job {job_id!r}")
    return job


def _int_param(req: ApiRequest, name: str, default: int, low: int, high: int) -> int:
    text = req.query.get(name)
    if text is None:
        return default
    if not re.fullmatch(r"[0-9]{1,19}", text) or not low <= int(text) <= high:
        raise ApiError(400, "invalid_input", f"{name} must be an integer from {low} to {high}")
    return int(text)
