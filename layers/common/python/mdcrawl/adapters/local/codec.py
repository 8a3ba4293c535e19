"""Record <-> JSON: the value types as the SQLite ``doc`` columns store them.

JSON has no tuples or enums, so each decoder rebuilds them; a record read back is
equal to the record written.
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from ...models import (
    CacheEntry,
    CrawlOptions,
    Job,
    JobStatus,
    PageRecord,
    PageStatus,
    stored_job_value,
)

# Job attributes kept in their own columns (queried or updated in place).
JOB_COLUMNS = ("owner", "status", "created_at")
# Job attributes that only the store itself may set.
JOB_READ_ONLY = ("job_id", "counters")
JOB_DOC_FIELDS = tuple(f.name for f in fields(Job) if f.name not in (*JOB_COLUMNS, *JOB_READ_ONLY))
# Each record's attribute names, read once: ``fields()`` per row was a fifth of the time
# a store spent listing a job's pages (finalize, the library and recovery each list them).
_CACHE_FIELDS = tuple(f.name for f in fields(CacheEntry))
_PAGE_FIELDS = tuple(f.name for f in fields(PageRecord))
_NAMES = {CacheEntry: frozenset(_CACHE_FIELDS), PageRecord: frozenset(_PAGE_FIELDS)}


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def job_doc(job: Job) -> dict[str, Any]:
    return {name: stored_job_value(name, getattr(job, name)) for name in JOB_DOC_FIELDS}


def job_from_doc(doc: dict[str, Any], **columns: Any) -> Job:
    """Rebuild a Job from its doc plus the column values (job_id, owner, counters...)."""
    known = {k: v for k, v in doc.items() if k in JOB_DOC_FIELDS}
    known["options"] = CrawlOptions.from_dict(known.get("options", {}))
    known["result_keys"] = dict(known.get("result_keys") or {})
    columns["status"] = JobStatus(columns["status"])
    return Job(**known, **columns)


def cache_doc(entry: CacheEntry) -> str:
    return dumps({name: getattr(entry, name) for name in _CACHE_FIELDS})


def _known(doc: dict[str, Any], record: type) -> dict[str, Any]:
    """Drop keys the record no longer has, so rows written by a later version still load."""
    names = _NAMES[record]
    if names.issuperset(doc):
        return doc
    return {k: v for k, v in doc.items() if k in names}


def cache_from_doc(text: str) -> CacheEntry:
    doc = _known(json.loads(text), CacheEntry)
    doc["links"] = tuple(doc.get("links") or ())
    return CacheEntry(**doc)


def page_doc(page: PageRecord) -> str:
    doc = {name: getattr(page, name) for name in _PAGE_FIELDS}
    doc["status"] = str(page.status)
    return dumps(doc)


def page_from_doc(text: str) -> PageRecord:
    doc = _known(json.loads(text), PageRecord)
    doc["status"] = PageStatus(doc["status"])
    doc["nav"] = tuple(doc.get("nav") or ())
    return PageRecord(**doc)
