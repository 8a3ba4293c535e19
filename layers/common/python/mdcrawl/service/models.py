"""Pydantic models at the API edge: what a client may send, what it gets back.

The crawl options are ``options.CrawlOptionsModel`` (declared once, with their bounds):
``JobRequest`` is that model plus the start URL and an optional job id. Hosted limits are
not read here (no env): a ``ServiceLimits`` value is passed in by the composition root,
and ``JobRequest.parse`` checks a request against its caps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, ValidationError

from ..models import CrawlOptions, Job, JobStatus
from ..options import CrawlOptionsModel, OptionLimits, Profile, request_values

JOB_ID_PATTERN = r"^[A-Za-z0-9_-]{8,64}$"
MAX_URL_LENGTH = 2048
ResultFormat = Literal["markdown", "llms", "manifest", "pages", "llms_full", "chunks", "parts"]
RESULT_FORMATS: tuple[str, ...] = (
    "markdown",
    "llms",
    "manifest",
    "pages",
    "llms_full",
    "chunks",
    "parts",
)


@dataclass(frozen=True)
class ServiceLimits:
    """What one service instance allows: the options' caps (options.py: the hosted
    profile by default; ``mdcrawl serve`` and a deployment may change them) and the API's
    own limits."""

    options: OptionLimits = field(default_factory=lambda: OptionLimits.of(Profile.HOSTED))
    max_body_bytes: int = 64 * 1024
    link_expires_s: int = 900  # lifetime of a pre-signed result URL
    list_limit: int = 100  # most jobs GET /jobs returns
    events_limit: int = 1000  # most events one GET /jobs/{id}/events returns


class RequestInvalid(ValueError):
    """A request body that does not validate; ``details`` lists field -> message."""

    def __init__(self, message: str, details: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.details = details or []


class MalformedJson(RequestInvalid):
    pass


class JobRequest(CrawlOptionsModel):
    """The body of ``POST /jobs``: a start URL and the crawl options (options.py)."""

    not_options: ClassVar[tuple[str, ...]] = ("url", "job_id")
    url: str = Field(
        min_length=1,
        max_length=MAX_URL_LENGTH,
        description="http(s) start URL; its folder is the crawl's scope",
    )
    job_id: str | None = Field(
        default=None,
        pattern=JOB_ID_PATTERN,
        description="client-chosen id (makes the POST idempotent)",
    )

    @classmethod
    def parse(cls, body: bytes, limits: ServiceLimits) -> JobRequest:
        """Validate a raw body; raises ``MalformedJson`` or ``RequestInvalid``."""
        try:
            request = cls.model_validate_json(body or b"")
        except ValidationError as exc:
            raise _translate(exc) from None
        request.check_limits(limits)
        return request

    def check_limits(self, limits: ServiceLimits) -> None:
        given = {name: getattr(self, name) for name in self.model_fields_set}
        for name in self.not_options:
            given.pop(name, None)
        details = limits.options.problems(given, type(self))
        if details:
            raise RequestInvalid(_summary(details), details)

    def to_options(self, limits: ServiceLimits) -> CrawlOptions:
        """The crawl options: given values, else the defaults lowered to the service caps."""
        return CrawlOptions(**limits.options.core_options(self))


def _translate(exc: ValidationError) -> RequestInvalid:
    errors = exc.errors(include_url=False)
    if any(e["type"] == "json_invalid" for e in errors):
        return MalformedJson("the body is not valid JSON")
    details = [{"field": _field(e["loc"]), "message": _message(e)} for e in errors]
    return RequestInvalid(_summary(details), details)


def _field(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "body"


def _message(error: Any) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown field"
    return str(error["msg"]).removeprefix("Value error, ")


def _summary(details: list[dict[str, str]]) -> str:
    return "; ".join(f"{d['field']}: {d['message']}" for d in details)


def request_options(options: CrawlOptions) -> dict[str, Any]:
    """A job's options in the shape a client sent them (the inverse of ``to_options``)."""
    return request_values(options.to_dict())


class JobLinks(BaseModel):
    self: str
    events: str
    cancel: str
    result: dict[str, str] | None = None  # format -> GET link, once completed


class JobView(BaseModel):
    """What ``GET /jobs/{id}`` answers (and ``POST /jobs``, and each item of ``GET /jobs``)."""

    job_id: str
    url: str
    status: str
    options: dict[str, Any]
    counters: dict[str, int]
    truncated: bool
    left: int
    error: str | None
    cancel_requested: bool
    created_at: float
    started_at: float | None
    finished_at: float | None
    links: JobLinks

    @classmethod
    def of(cls, job: Job, base: str = "") -> JobView:
        return cls(
            job_id=job.job_id,
            url=job.url,
            status=str(job.status),
            options=request_options(job.options),
            counters=job.counters.to_dict(),
            truncated=job.truncated,
            left=job.left,
            error=job.error,
            cancel_requested=job.cancel_requested,
            created_at=job.created_at,
            started_at=job.started_at,
            finished_at=job.finished_at,
            links=job_links(job, base),
        )


def job_links(job: Job, base: str = "") -> JobLinks:
    root = f"{base}/jobs/{job.job_id}"
    result = None
    if job.status == JobStatus.COMPLETED:
        result = {fmt: f"{root}/result?format={fmt}" for fmt in RESULT_FORMATS}
    return JobLinks(self=root, events=f"{root}/events", cancel=f"{root}/cancel", result=result)


class ErrorDetail(BaseModel):
    code: str
    message: str
    details: list[dict[str, str]] | None = None


class ErrorBody(BaseModel):
    """Every 4xx/5xx body: ``{"error": {"code", "message"}}``."""

    error: ErrorDetail
