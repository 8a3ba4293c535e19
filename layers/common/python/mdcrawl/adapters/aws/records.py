"""Records <-> DynamoDB attribute dicts (before ``dynamo.to_item``).

DynamoDB has no tuples, enums or floats-that-stay-floats, so each decoder rebuilds them;
a record read back equals the record written. Job counters are top-level numbers so an
``ADD`` can bump them atomically; everything else keeps the dataclass field names.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import fields
from typing import Any

from ...models import (
    CacheEntry,
    Counters,
    CrawlOptions,
    FrontierItem,
    Job,
    JobStatus,
    PageRecord,
    PageStatus,
    UrlState,
    stored_job_value,
)
from .frontierlog import Entry

COUNTER_FIELDS = tuple(f.name for f in fields(Counters))
# Job attributes only the store itself writes (the key, and counters through ADD).
JOB_READ_ONLY = ("job_id", "counters")
JOB_SETTABLE = frozenset(f.name for f in fields(Job)) - set(JOB_READ_ONLY)


def job_to_attrs(job: Job) -> dict[str, Any]:
    attrs = {name: stored_job_value(name, getattr(job, name)) for name in JOB_SETTABLE}
    return {"job_id": job.job_id, **attrs, **job.counters.to_dict()}


def job_from_attrs(attrs: dict[str, Any]) -> Job:
    known = {k: v for k, v in attrs.items() if k in JOB_SETTABLE}
    known["options"] = CrawlOptions.from_dict(known.get("options") or {})
    known["status"] = JobStatus(known["status"])
    known["result_keys"] = dict(known.get("result_keys") or {})
    counters = Counters(**{name: int(attrs.get(name, 0)) for name in COUNTER_FIELDS})
    return Job(job_id=attrs["job_id"], counters=counters, **known)


def counters_from_attrs(attrs: dict[str, Any]) -> Counters:
    return Counters(**{name: int(attrs.get(name, 0)) for name in COUNTER_FIELDS})


def check_job_fields(values: dict[str, Any]) -> None:
    unknown = set(values) - JOB_SETTABLE
    if unknown:
        raise ValueError(f"cannot set job attributes {sorted(unknown)}")


def _plain(record: Any) -> dict[str, Any]:
    return {f.name: getattr(record, f.name) for f in fields(record)}


# --- the frontier's log entries (adapters/aws/frontierlog.py) ------------------------
# One binary attribute, zlib-packed JSON: a page's new links share their parent and most
# of each URL, so an entry of 100 URLs is ~2-3 KB instead of ~15 KB (write units are
# billed by the KB). Short keys, as the entry is read back only by this module.
FRONTIER_ENTRY_ATTRIBUTE = "log"


def frontier_entry_to_attrs(job_id: str, seq: int, entry: Entry) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if entry.add:
        body["first"] = entry.add[0].order
        body["add"] = [
            [i.url, i.url_hash, i.depth, i.parent, i.sitemap_rank] for i in entry.add
        ]
    if entry.settle:
        body["settle"] = [[o, str(s), a, r] for o, s, a, r in entry.settle]
    if entry.lease:
        body["lease"], body["expires"] = entry.lease, entry.lease_expires
    if entry.bump:
        body["bump"] = [list(b) for b in entry.bump]
    if entry.overflow:
        body["over"] = entry.overflow
    packed = zlib.compress(json.dumps(body, separators=(",", ":")).encode(), 6)
    return {"job_id": job_id, "seq": seq, FRONTIER_ENTRY_ATTRIBUTE: packed}


def frontier_entry_from_attrs(attrs: dict[str, Any]) -> Entry:
    body = json.loads(zlib.decompress(bytes(attrs[FRONTIER_ENTRY_ATTRIBUTE])))
    first = body.get("first", 0)
    added = [
        FrontierItem(url, url_hash, depth, parent, first + n, sitemap_rank=rank)
        for n, (url, url_hash, depth, parent, rank) in enumerate(body.get("add", []))
    ]
    return Entry(
        add=added,
        settle=[(o, UrlState(s), a, r) for o, s, a, r in body.get("settle", [])],
        lease=list(body.get("lease", [])),
        lease_expires=body.get("expires"),
        bump=[(o, c) for o, c in body.get("bump", [])],
        overflow=list(body.get("over", [])),
    )


def cache_to_attrs(entry: CacheEntry) -> dict[str, Any]:
    return _plain(entry)


def cache_from_attrs(attrs: dict[str, Any]) -> CacheEntry:
    known = {f.name: attrs[f.name] for f in fields(CacheEntry) if f.name in attrs}
    known["links"] = tuple(known.get("links") or ())
    return CacheEntry(**known)


def page_to_attrs(page: PageRecord) -> dict[str, Any]:
    attrs = _plain(page)
    attrs["status"] = str(page.status)
    return attrs


def page_from_attrs(attrs: dict[str, Any]) -> PageRecord:
    known = {f.name: attrs[f.name] for f in fields(PageRecord) if f.name in attrs}
    known["status"] = PageStatus(known["status"])
    known["nav"] = tuple(known.get("nav") or ())
    return PageRecord(**known)
