"""Pydantic models at the API edge: what a client may send, what it gets back.

Hosted limits are not read here (no env): a ``ServiceLimits`` value is passed in by
the composition root, and ``JobRequest.parse`` checks a request against it. Bounds that
never change (a page count is at least 1) live on the fields themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..models import CrawlOptions, Job, JobStatus

JOB_ID_PATTERN = r"^[A-Za-z0-9_-]{8,64}$"
MAX_URL_LENGTH = 2048
MAX_GLOBS = 50
MAX_GLOB_LENGTH = 500
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
    """What one service instance allows (hosted caps; ``mdcrawl serve`` may loosen them)."""

    max_pages: int = 5000
    max_depth: int = 100
    budget_s: float = 3600.0
    concurrency: int = 16
    max_body_bytes: int = 64 * 1024
    allow_ignore_robots: bool = False  # hosted mode honours robots.txt, always
    link_expires_s: int = 900  # lifetime of a pre-signed result URL
    list_limit: int = 100  # most jobs GET /jobs returns
    events_limit: int = 1000  # most events one GET /jobs/{id}/events returns
    webhooks: bool = False  # POST /jobs may name a webhook (the AWS stack sends them)


class RequestInvalid(ValueError):
    """A request body that does not validate; ``details`` lists field -> message."""

    def __init__(self, message: str, details: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.details = details or []


class MalformedJson(RequestInvalid):
    pass


class _Strict(BaseModel):
    # Strict: "10" is not a page count and true is not 1; unknown fields are a typo.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class JobRequest(_Strict):
    """The body of ``POST /jobs``: a start URL and the CLI's crawl options."""

    url: str = Field(min_length=1, max_length=MAX_URL_LENGTH)
    job_id: str | None = Field(default=None, pattern=JOB_ID_PATTERN)
    max_pages: int | None = Field(default=None, ge=1)
    max_depth: int | None = Field(default=None, ge=0)
    budget_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    concurrency: int | None = Field(default=None, ge=1)
    include: tuple[str, ...] = Field(default=(), max_length=MAX_GLOBS)
    exclude: tuple[str, ...] = Field(default=(), max_length=MAX_GLOBS)
    max_age_s: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    no_cache: bool = False
    ignore_robots: bool = False
    max_tokens: int | None = Field(default=None, ge=200)  # also the docs-001.md… parts
    # POSTed, signed, when the job completes or fails (webhook.py; AWS only)
    webhook: str | None = Field(default=None, min_length=1, max_length=MAX_URL_LENGTH)

    @model_validator(mode="after")
    def _globs_are_short(self) -> JobRequest:
        for pattern in (*self.include, *self.exclude):
            if not pattern or len(pattern) > MAX_GLOB_LENGTH:
                raise ValueError(f"include/exclude patterns must be 1-{MAX_GLOB_LENGTH} chars")
        return self

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
        caps = (
            ("max_pages", self.max_pages, limits.max_pages),
            ("max_depth", self.max_depth, limits.max_depth),
            ("budget_s", self.budget_s, limits.budget_s),
            ("concurrency", self.concurrency, limits.concurrency),
        )
        details = [
            {"field": name, "message": f"must be at most {cap} on this service"}
            for name, value, cap in caps
            if value is not None and value > cap
        ]
        if self.ignore_robots and not limits.allow_ignore_robots:
            details.append({"field": "ignore_robots", "message": "not allowed on this service"})
        if details:
            raise RequestInvalid(_summary(details), details)

    def to_options(self, limits: ServiceLimits) -> CrawlOptions:
        """The crawl options: given values, else the defaults lowered to the service caps."""
        base = CrawlOptions()
        return CrawlOptions(
            max_pages=_pick(self.max_pages, base.max_pages, limits.max_pages),
            max_depth=_pick(self.max_depth, base.max_depth, limits.max_depth),
            budget_s=float(_pick(self.budget_s, base.budget_s, limits.budget_s)),
            concurrency=_pick(self.concurrency, base.concurrency, limits.concurrency),
            include=self.include,
            exclude=self.exclude,
            max_age_s=base.max_age_s if self.max_age_s is None else float(self.max_age_s),
            use_cache=not self.no_cache,
            respect_robots=not self.ignore_robots,
            max_tokens=self.max_tokens,
        )


def _pick(given: Any, default: Any, cap: Any) -> Any:
    return given if given is not None else min(default, cap)


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
    return {
        "max_pages": options.max_pages,
        "max_depth": options.max_depth,
        "budget_s": options.budget_s,
        "concurrency": options.concurrency,
        "include": list(options.include),
        "exclude": list(options.exclude),
        "max_age_s": options.max_age_s,
        "no_cache": not options.use_cache,
        "ignore_robots": not options.respect_robots,
        "max_tokens": options.max_tokens,
    }


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
    webhook_delivery: dict[str, Any] | None = None

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
            webhook_delivery=job.webhook_delivery,
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
