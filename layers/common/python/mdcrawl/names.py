"""Names shared by the code and the infrastructure, declared once.

``infra/`` reads these to name tables, indexes and environment variables, and the
AWS adapters and the moto fixtures read them too, so the two cannot drift.
"""

from __future__ import annotations

from enum import StrEnum


class Table(StrEnum):
    """Logical DynamoDB tables; the physical name arrives through an env var."""

    JOBS = "jobs"
    FRONTIER = "frontier"
    CACHE = "cache"
    PAGES = "pages"
    EVENTS = "events"
    CONNECTIONS = "connections"


# Index over jobs by owner (API key id), for listing a caller's jobs.
JOBS_OWNER_INDEX = "by_owner"
# Index over connections by subscribed job, to fan events out.
CONNECTIONS_JOB_INDEX = "by_job"
# Attribute DynamoDB's TTL reads on the tables whose data expires.
TTL_ATTRIBUTE = "expires_at"


ENV_PREFIX = "MDCRAWL_"


def cap_env(option: str) -> str:
    """The variable that carries a capped crawl option's cap (options.py) to the
    functions: ``MDCRAWL_MAX_PAGES``, ``MDCRAWL_BUDGET_S``..."""
    return f"{ENV_PREFIX}{option.upper()}"


class EnvVar(StrEnum):
    """Environment variables the Lambda functions read (runtime/settings.py), besides one
    per capped crawl option (``cap_env``)."""

    JOBS_TABLE = "MDCRAWL_JOBS_TABLE"
    FRONTIER_TABLE = "MDCRAWL_FRONTIER_TABLE"
    CACHE_TABLE = "MDCRAWL_CACHE_TABLE"
    PAGES_TABLE = "MDCRAWL_PAGES_TABLE"
    EVENTS_TABLE = "MDCRAWL_EVENTS_TABLE"
    CONNECTIONS_TABLE = "MDCRAWL_CONNECTIONS_TABLE"
    BUCKET = "MDCRAWL_BUCKET"
    CRAWLER_FUNCTION = "MDCRAWL_CRAWLER_FUNCTION"
    PROCESSOR_FUNCTION = "MDCRAWL_PROCESSOR_FUNCTION"
    STATE_MACHINE_ARN = "MDCRAWL_STATE_MACHINE_ARN"
    WEBSOCKET_ENDPOINT = "MDCRAWL_WEBSOCKET_ENDPOINT"
    # Hosts/CIDRs the crawler may reach despite the SSRF guard (tests use 127.0.0.1).
    ALLOW_NETWORKS = "MDCRAWL_ALLOW_NETWORKS"
    RETENTION_DAYS = "MDCRAWL_RETENTION_DAYS"
    # Days a cached body/markdown lives in S3 (the bucket's lifecycle rule): cache entries
    # should not outlive the body they point to.
    CACHE_RETENTION_DAYS = "MDCRAWL_CACHE_RETENTION_DAYS"
    # EventBridge bus that hears job.completed / job.failed / job.cancelled (AWS only).
    EVENT_BUS = "MDCRAWL_EVENT_BUS"
    # The REST usage plan whose API keys the WebSocket $connect accepts.
    USAGE_PLAN_ID = "MDCRAWL_USAGE_PLAN_ID"
    # The Secrets Manager secret (ARN) whose value signs webhooks (webhook.py); unset:
    # POST /jobs refuses a webhook.
    WEBHOOK_SECRET = "MDCRAWL_WEBHOOK_SECRET"


TABLE_ENV: dict[Table, EnvVar] = {
    Table.JOBS: EnvVar.JOBS_TABLE,
    Table.FRONTIER: EnvVar.FRONTIER_TABLE,
    Table.CACHE: EnvVar.CACHE_TABLE,
    Table.PAGES: EnvVar.PAGES_TABLE,
    Table.EVENTS: EnvVar.EVENTS_TABLE,
    Table.CONNECTIONS: EnvVar.CONNECTIONS_TABLE,
}


class BlobPrefix(StrEnum):
    """Key prefixes in the blob store (S3 bucket or the local cache folder)."""

    CACHE_BODIES = "cache/bodies/"  # content-addressed raw HTML, shared by all jobs
    CACHE_MARKDOWN = "cache/markdown/"  # converted pages by content hash + converter version
    CACHE_LINKS = "cache/links/"  # a page's link list too large for its cache item (AWS)
    CACHE_ROBOTS = "cache/robots/"  # robots.txt by origin, fresh for a day (local runs)
    CACHE_SITEMAPS = "cache/sitemaps/"  # a start URL's sitemap seeds, fresh for a day (local)
    JOBS = "jobs/"  # jobs/{job_id}/pages/*.md, jobs/{job_id}/docs.md, llms.txt, manifest.jsonl


CRAWL_SPILL = "crawl/"  # jobs/{job_id}/crawl/*.json: crawler answers over Lambda's 6 MB


def job_key(job_id: str, name: str) -> str:
    """Blob key of one of a job's outputs, e.g. ``job_key(j, "docs.md")``."""
    return f"{BlobPrefix.JOBS}{job_id}/{name}"


def anchors_key(markdown_key: str) -> str:
    """Where the process step keeps a page's ``{id: heading}`` beside its markdown blob
    (here, not in anchors.py, so readers of stored pages need not load the converter)."""
    return markdown_key.removesuffix(".md") + ".anchors.json"
