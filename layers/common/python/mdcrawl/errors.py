"""The exception tree. Adapters translate third-party errors into these at the boundary.

    MdcrawlError
    ├── InvalidInput          bad URL, bad option (CLI exit 2, HTTP 400)
    │   └── UnsafeUrl         scheme or address not allowed (SSRF guard)
    ├── FetchError            one URL could not be fetched; the crawl goes on
    │   ├── TooLarge          body over the size cap
    │   ├── NotHtml           content type we do not convert
    │   ├── TooManyRedirects  redirect cap or loop
    │   ├── OutOfScope        redirected off the crawl's scope
    │   ├── RobotsDisallowed  robots.txt forbids it
    │   ├── FetchTimeout      no answer in time, after retries
    │   │   └── OutOfTime     the crawl's time budget ended before an answer (final)
    │   ├── RateLimited       429/503 asking to wait longer than the cap or the budget
    │   ├── ConnectFailed     no connection (DNS, refused), after retries
    │   └── HttpStatusError   4xx/5xx after retries
    ├── CrawlFailed           the job cannot proceed (start URL unreachable, not HTML)
    ├── JobNotFound           unknown job id, or a job the caller does not own
    ├── Conflict              a state transition that is not allowed now
    └── StoreError            a storage adapter failed (wraps sqlite3.Error, ClientError)
"""

from __future__ import annotations


class MdcrawlError(Exception):
    """Base of every error mdcrawl raises on purpose."""


class InvalidInput(MdcrawlError):
    pass


class UnsafeUrl(InvalidInput):
    pass


class FetchError(MdcrawlError):
    """One URL failed; ``reason`` is a short machine-friendly word for the manifest."""

    reason = "fetch_error"


class TooLarge(FetchError):
    reason = "too_large"


class NotHtml(FetchError):
    reason = "not_html"


class TooManyRedirects(FetchError):
    reason = "too_many_redirects"


class OutOfScope(FetchError):
    reason = "out_of_scope"


class RobotsDisallowed(FetchError):
    reason = "robots_disallowed"


class FetchTimeout(FetchError):
    reason = "timeout"


class OutOfTime(FetchTimeout):
    """The job's deadline cut the request (or a wait before it): trying again later is
    pointless, the budget is spent."""


class RateLimited(FetchError):
    """The server asked to come back later than the crawl can wait (Retry-After over
    ``fetch.RETRY_AFTER_MAX_S`` or past the job's deadline)."""

    reason = "rate_limited"


class ConnectFailed(FetchError):
    reason = "connect_error"


class HttpStatusError(FetchError):
    reason = "http_error"

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class CrawlFailed(MdcrawlError):
    pass


class JobNotFound(MdcrawlError):
    pass


class Conflict(MdcrawlError):
    pass


class StoreError(MdcrawlError):
    pass
