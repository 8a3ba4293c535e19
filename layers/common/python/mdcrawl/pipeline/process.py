"""The process step: one fetched page -> its markdown blob, a PageRecord, counters, an event.

Idempotent: the PageStore records a page once, and only the call that recorded it adds
to the counters and emits ``page.done``, so a redelivered page changes nothing twice.
Converted markdown is cached by body hash and converter version (and the base URL,
which absolute links depend on), so an unchanged page is never converted twice.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass, field, replace
from dataclasses import fields as dataclass_fields
from typing import Any

from ..models import (
    CONVERTER_VERSION,
    ConvertedPage,
    CrawledPage,
    EventType,
    PageRecord,
    PageStatus,
)
from ..names import BlobPrefix, anchors_key, job_key
from ..ports import BlobStore, Clock, EventLog, JobStore, PageStore
from ..stored import is_cache_document
from ..template import SiteTemplate, template_id
from . import templating
from .fetching import body_key
from .pagedone import page_event_data
from .templating import JobTemplate

log = logging.getLogger(__name__)


class JobFacts:
    """What every page of a job reads and, once known, never changes: the job's rules
    setting (its options are fixed when it is created) and its template once settled
    (written once; two writers write the same document). Kept for the pages one process
    step handles, so a page costs neither a job read nor a template read; a template not
    settled yet is read again each time."""

    def __init__(self) -> None:
        self._rules: dict[str, bool] = {}
        self._settled: dict[str, JobTemplate] = {}

    def rules(self, job_id: str, jobs: JobStore) -> bool:
        known = self._rules.get(job_id)
        if known is None:
            job = jobs.get(job_id)
            if job is None:
                return True  # as ``generator_rules``; not kept: the job may yet appear
            known = self._rules[job_id] = job.options.generator_rules
        return known

    def template(self, job_id: str, blobs: BlobStore) -> JobTemplate:
        state = self._settled.get(job_id)
        if state is None:
            state = templating.load(job_id, blobs)
            if state.settled:
                self._settled[job_id] = state
        return state


@dataclass(frozen=True)
class ProcessDeps:
    blobs: BlobStore
    pages: PageStore
    jobs: JobStore
    events: EventLog
    clock: Clock
    # False: the record points at the markdown cache's document instead of a copy under
    # jobs/{id}/pages/ (AWS: one S3 PUT less per fresh page, none for a cached one).
    job_copy: bool = True
    # One transaction for a page's record, counters and event (locally: Database.batch).
    batch: Callable[[], AbstractContextManager[object]] = nullcontext
    facts: JobFacts = field(default_factory=JobFacts)


class ConversionFailed(Exception):
    """Internal: the page could not be converted; becomes a failed PageRecord."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass(frozen=True)
class CachedConversion:
    """What ``cached_conversion`` answered for a page under one template and rules
    setting (``at_hand``): ``process_page`` takes it instead of reading the cache
    document again, when it processes the page under the same ones."""

    template_id: str
    rules: bool
    found: tuple[str, ConvertedPage]


def process_page(
    page: CrawledPage,
    deps: ProcessDeps,
    settle: bool = True,
    cached: CachedConversion | None = None,
) -> PageRecord:
    """Convert (or reuse) the page's markdown and record it; never raises for a bad page.
    ``settle=False``: the caller settles the template itself (``settle_template``), once
    for a batch of pages rather than once per page. ``cached``: the page's cached
    conversion as ``at_hand`` read it."""
    existing = deps.pages.get(page.job_id, page.url_hash)
    if existing is not None:
        return existing  # a redelivery: already recorded, counted and announced
    rules = deps.facts.rules(page.job_id, deps.jobs)
    state = deps.facts.template(page.job_id, deps.blobs)
    found = _still_found(cached, state, rules)
    if not state.settled and _waits_for_template(page, deps.blobs, rules, found):
        # A placeholder key (no cache document exists yet): finalize converts the page
        # and points its record at the cache's document (``reprocess``)
        record = _deferred_record(page, job_key(page.job_id, f"pages/{page.url_hash}.md"))
    else:
        try:
            key, converted = found or cached_or_converted(
                page, deps.blobs, state.template, rules
            )
        except ConversionFailed as exc:
            return record_failure(page, exc, deps)
        if deps.job_copy:
            key = job_key(page.job_id, f"pages/{page.url_hash}.md")
            _store_page(deps.blobs, key, converted)
        record = _ok_record(page, converted, key, templating.used(converted.extractor, state))
    with deps.batch():
        if deps.pages.put(record):
            deps.jobs.add_counters(page.job_id, processed=1, words=record.words)
            data, now = _event_data(record), deps.clock.now()
            deps.events.append(page.job_id, EventType.PAGE_DONE, data, now)
    if settle and not state.settled and page.order < templating.SETTLE_WINDOW:
        templating.settle(page.job_id, deps.pages.list(page.job_id), deps.blobs, rules, False)
    return record


def settle_template(job_id: str, orders: list[int], deps: ProcessDeps) -> None:
    """Learn the job's template if pages of these discovery ``orders`` (just recorded)
    may complete its sample: what ``process_page`` does after each page, done once."""
    if not any(order < templating.SETTLE_WINDOW for order in orders):
        return
    if not deps.facts.template(job_id, deps.blobs).settled:
        rules = deps.facts.rules(job_id, deps.jobs)
        templating.settle(job_id, deps.pages.list(job_id), deps.blobs, rules, False)


def convert_ahead(page: CrawledPage, deps: ProcessDeps) -> None:
    """Convert now what ``process_page`` would convert, into the markdown cache only (a
    batch converts its pages before it records any: ``process_batch``)."""
    rules = deps.facts.rules(page.job_id, deps.jobs)
    state = deps.facts.template(page.job_id, deps.blobs)
    if state.settled or not _waits_for_template(page, deps.blobs, rules):
        with suppress(ConversionFailed):  # process_page records the failure
            converted_page(page, deps.blobs, state.template, rules)


def _waits_for_template(
    page: CrawledPage,
    blobs: BlobStore,
    rules: bool,
    found: tuple[str, ConvertedPage] | None = None,
) -> bool:
    """Converting now would be converting twice: the template, not settled yet, can
    change this page's markdown (finalize converts it once it has). A page a generator
    rule recognises is converted now; so is one whose body is gone (it fails now).
    ``found``: the page's cached conversion for no template, already read."""
    if not rules:
        return True
    if found is not None:  # read under no template: the document looked for here
        return not templating.by_rule(found[1].extractor)
    cached = blobs.get(markdown_cache_key(page, None, rules))  # a re-crawl: no parse
    if cached is not None:
        return not templating.by_rule(_from_json(cached).extractor)
    if blobs.exists(_waits_key(page)):  # a re-crawl of a page no rule recognises
        return True
    body = blobs.get(page.body_key)
    if body is None or not depends_on_template(body, page.encoding, rules):
        return False
    note_waiting(page, blobs)
    return True


def note_waiting(page: CrawledPage, blobs: BlobStore) -> None:
    """Note that no generator rule recognises this body (its markdown waits for the
    template), for whoever would parse it next to ask: the process step, a re-crawl."""
    blobs.put(_waits_key(page), b"1", "text/plain")  # not empty: a packed blob has a range


def _waits_key(page: CrawledPage) -> str:
    """Where the markdown cache notes that no generator rule recognises this body (its
    markdown waits for the template): the answer of a parse, kept for the next crawl.
    Only rules-on crawls ask; ``depends_on_template`` reads the body and its encoding."""
    charset = hashlib.sha256((page.encoding or "").encode()).hexdigest()[:8]
    name = f"{page.content_hash}-{charset}.waits"
    return f"{BlobPrefix.CACHE_MARKDOWN}{CONVERTER_VERSION}/{name}"


def needs_no_converter(page: CrawledPage, deps: ProcessDeps) -> bool:
    """Can ``process_page`` record this page without converting or parsing it? Its
    markdown is cached under the key it would use now, or (the template not settled
    yet) it is known to wait for the template. Then no conversion worker is needed.
    A document under the key the process step looks up first answers without being
    decoded; else ``at_hand`` tells."""
    rules = deps.facts.rules(page.job_id, deps.jobs)
    state = deps.facts.template(page.job_id, deps.blobs)
    if deps.blobs.exists(markdown_cache_key(page, state.template, rules)):
        return True
    return at_hand(page, deps)[0]


def at_hand(page: CrawledPage, deps: ProcessDeps) -> tuple[bool, CachedConversion | None]:
    """``needs_no_converter``, and the cached conversion it read to tell, for
    ``process_page`` to take: a cached re-crawl then reads each page's cache document
    once, not twice (the question, then the process step)."""
    rules = deps.facts.rules(page.job_id, deps.jobs)
    state = deps.facts.template(page.job_id, deps.blobs)
    if not state.settled and not rules:
        return True, None  # every page waits for the template
    found = cached_conversion(page, deps.blobs, state.template, rules)
    if found is not None:
        return True, CachedConversion(state.id, rules, found)
    return not state.settled and deps.blobs.exists(_waits_key(page)), None


def _still_found(
    cached: CachedConversion | None, state: JobTemplate, rules: bool
) -> tuple[str, ConvertedPage] | None:
    """``cached``'s conversion, if it was read under the template and rules the page
    is processed under (else it is looked up again)."""
    if cached is None or cached.template_id != state.id or cached.rules != rules:
        return None
    return cached.found


def _deferred_record(page: CrawledPage, key: str) -> PageRecord:
    """Recorded (the crawl counts it, the template's sample includes it), not converted:
    no title or words until finalize converts it into ``key``."""
    return _page_record(page, key, templating.DEFERRED)


def generator_rules(job_id: str, jobs: JobStore) -> bool:
    job = jobs.get(job_id)
    return job.options.generator_rules if job is not None else True


def reprocess(record: PageRecord, state: JobTemplate, rules: bool, blobs: BlobStore) -> PageRecord:
    """A page deferred or converted before the job's template settled, converted with it
    from the cached body (finalize: the PageStore keeps its first record, the outputs get
    this one). A page already converted with the settled template comes back as it is."""
    if record.status is not PageStatus.OK or record.template in (state.id, templating.ANY):
        return record
    if not record.content_hash or not record.markdown_key:
        return record
    page = CrawledPage(
        job_id=record.job_id,
        url=record.url,
        url_hash=record.url_hash,
        final_url=record.url,
        content_hash=record.content_hash,
        body_key=body_key(record.content_hash),
        order=record.order,
        depth=0,
        from_cache=record.from_cache,
        encoding=record.encoding,
    )
    try:
        cache_key, converted = cached_or_converted(page, blobs, state.template, rules)
    except ConversionFailed as exc:
        if record.template == templating.DEFERRED:  # no first conversion to stand
            return replace(record, status=PageStatus.FAILED, reason=exc.reason, markdown_key=None)
        return record  # the first conversion stands
    key = record.markdown_key
    # The cache holds the new conversion under its own key. A deferred page points there
    # too: its placeholder key (the job's own) holds nothing yet, and which pages were
    # deferred is timing (how many came before the template settled), so a copy made for
    # them alone gave a re-crawl, whose pages find the template settled, other record
    # keys than the crawl before it, and every output was assembled again.
    if is_cache_document(key) or record.template == templating.DEFERRED:
        key = cache_key
    else:
        _store_page(blobs, key, converted, replacing=True)
    return replace(
        record,
        markdown_key=key,
        title=converted.title,
        words=converted.words,
        nav=converted.nav,
        description=converted.description,
        template=state.id,
    )


def _store_page(
    blobs: BlobStore, key: str, converted: ConvertedPage, replacing: bool = False
) -> None:
    """The page's markdown, and the ids its headings hold (read by the assembler only for
    links to an element id). A page converted again replaces both, so no stale id map."""
    blobs.put(key, converted.markdown.encode("utf-8"), "text/markdown; charset=utf-8")
    if converted.anchors or replacing:
        anchors = json.dumps(converted.anchors, ensure_ascii=False).encode("utf-8")
        blobs.put(anchors_key(key), anchors, "application/json")


def markdown_cache_key(
    page: CrawledPage, template: SiteTemplate | None = None, rules: bool = True
) -> str:
    """By body, converter version and base URL; and by template and rules setting
    when they are not the defaults (no template, rules on)."""
    base = hashlib.sha256(page.final_url.encode("utf-8")).hexdigest()[:16]
    variant = "" if template is None and rules else f"-t{template_id(template)}-r{int(rules)}"
    name = f"{page.content_hash}-{base}{variant}.json"
    return f"{BlobPrefix.CACHE_MARKDOWN}{CONVERTER_VERSION}/{name}"


def converted_page(
    page: CrawledPage, blobs: BlobStore, template: SiteTemplate | None = None, rules: bool = True
) -> ConvertedPage:
    """From the markdown cache, else converted now (and cached for next time)."""
    return cached_or_converted(page, blobs, template, rules)[1]


def cached_or_converted(
    page: CrawledPage, blobs: BlobStore, template: SiteTemplate | None = None, rules: bool = True
) -> tuple[str, ConvertedPage]:
    """``converted_page``, with the cache key it is kept under."""
    found = cached_conversion(page, blobs, template, rules)
    if found is not None:
        return found
    body = blobs.get(page.body_key)
    if body is None:
        raise ConversionFailed("body_missing", f"no stored body for {page.url}")
    try:
        converted = convert_html(body, page.final_url, page.encoding, template, rules)
    except Exception as exc:  # noqa: BLE001 - any converter bug must cost one page, not the crawl
        log.warning("conversion of %s failed: %r", page.final_url, exc)
        raise ConversionFailed("conversion_error", f"{type(exc).__name__}: {exc}") from exc
    key = conversion_key(page, template, rules, converted)
    cache_converted(blobs, key, converted)
    return key, converted


# A page a generator rule recognises is converted the same whatever the job's template
# (``templating.by_rule``): the cache keeps its conversion once, under the key of no
# template. Under the template's key, the key a page got would depend on whether the
# template had settled when the page was read, which is timing: a re-crawl would
# convert such a page again and assemble every output again (rustdoc's cargo docs, whose
# template settles mid-crawl: a cached re-crawl cost 0.28 of a fresh one, not 0.1).


def lookup_keys(page: CrawledPage, template: SiteTemplate | None, rules: bool) -> tuple[str, ...]:
    """Where the page's markdown may be cached for ``template``, in the order looked up:
    the template's key, then (a template, rules on) the key of no template, which stands
    only for a rule's conversion (``cached_conversion``)."""
    own = markdown_cache_key(page, template, rules)
    if template is None or not rules:
        return (own,)
    return (own, markdown_cache_key(page, None, rules))


def cached_conversion(
    page: CrawledPage, blobs: BlobStore, template: SiteTemplate | None, rules: bool
) -> tuple[str, ConvertedPage] | None:
    """The page's cached conversion for ``template``, and its key; None: none is."""
    keys = lookup_keys(page, template, rules)
    for key in keys:
        data = blobs.get(key)
        if data is None:
            continue
        converted = _from_json(data)
        if key == keys[0] or templating.by_rule(converted.extractor):
            return key, converted
    return None


def conversion_key(
    page: CrawledPage, template: SiteTemplate | None, rules: bool, converted: ConvertedPage
) -> str:
    """The cache key of a new conversion: a rule's under no template's (see above)."""
    if rules and templating.by_rule(converted.extractor):
        return markdown_cache_key(page, None, rules)
    return markdown_cache_key(page, template, rules)


# The converter (lxml trees, bs4, markdownify, readability) is imported on first use, not
# with this module: a re-crawl whose every page is in the markdown cache never loads it,
# and loading it was a third of such a run's start-up.
def convert_html(
    body: bytes, url: str, encoding: str | None, template: SiteTemplate | None, rules: bool
) -> ConvertedPage:
    from .. import convert

    return convert.convert_html(body, url, encoding, template, rules)


def depends_on_template(body: bytes, encoding: str | None, rules: bool) -> bool:
    from .. import convert

    return convert.depends_on_template(body, encoding, rules)


def cache_converted(blobs: BlobStore, key: str, converted: ConvertedPage) -> None:
    blobs.put(key, _to_json(converted), "application/json")


def _to_json(page: ConvertedPage) -> bytes:
    # The fields as they are, not ``asdict`` (which deep-copies the anchors, a tuple per
    # element id: half of writing the document): JSON writes a tuple as a list either way.
    fields = {name: getattr(page, name) for name in _CONVERTED_FIELDS}
    return _JSON.encode(fields).encode("utf-8")


_CONVERTED_FIELDS = tuple(f.name for f in dataclass_fields(ConvertedPage))
_JSON = json.JSONEncoder(ensure_ascii=False)  # one encoder, not one per json.dumps call


def _from_json(data: bytes) -> ConvertedPage:
    doc = json.loads(data)
    doc["nav"] = tuple(doc.get("nav") or ())
    return ConvertedPage(**doc)


def _ok_record(page: CrawledPage, converted: ConvertedPage, key: str, template: str) -> PageRecord:
    return _page_record(
        page,
        key,
        template,
        title=converted.title,
        words=converted.words,
        nav=converted.nav,
        description=converted.description,
    )


def _page_record(page: CrawledPage, key: str, template: str, **converted: Any) -> PageRecord:
    """An OK record of ``page`` whose markdown is (or will be) at ``key``."""
    return PageRecord(
        job_id=page.job_id,
        url=page.final_url,
        url_hash=page.url_hash,
        status=PageStatus.OK,
        order=page.order,
        markdown_key=key,
        from_cache=page.from_cache,
        sitemap_rank=page.sitemap_rank,
        content_hash=page.content_hash,
        encoding=page.encoding,
        template=template,
        **converted,
    )


def record_failure(page: CrawledPage, exc: ConversionFailed, deps: ProcessDeps) -> PageRecord:
    record = PageRecord(
        job_id=page.job_id,
        url=page.final_url,
        url_hash=page.url_hash,
        status=PageStatus.FAILED,
        order=page.order,
        from_cache=page.from_cache,
        reason=exc.reason,
        sitemap_rank=page.sitemap_rank,
        content_hash=page.content_hash,
    )
    with deps.batch():
        if deps.pages.put(record):
            deps.jobs.add_counters(page.job_id, processed=1, failed=1)
            data = {**_event_data(record), "detail": str(exc)}
            deps.events.append(page.job_id, EventType.PAGE_FAILED, data, deps.clock.now())
    return record


def _event_data(record: PageRecord) -> dict[str, object]:
    return page_event_data(record)


def converted_record(
    page: CrawledPage, converted: ConvertedPage, key: str, state: JobTemplate
) -> PageRecord:
    """The record ``process_page`` (with ``job_copy=False``) writes for ``page`` converted
    under the job's template ``state`` into the markdown cache's ``key``."""
    return _ok_record(page, converted, key, templating.used(converted.extractor, state))


def cached_record(
    page: CrawledPage, blobs: BlobStore, state: JobTemplate, rules: bool
) -> PageRecord | None:
    """The record ``process_page`` (with ``job_copy=False``) would write for ``page``
    when that needs no conversion: its markdown is cached for the job's template state
    and does not wait for the template. None when it would convert, defer or fail."""
    if not state.settled and not rules:
        return None  # every page waits for the template
    found = cached_conversion(page, blobs, state.template, rules)
    return None if found is None else record_of_cached(page, *found, state)


def record_of_cached(
    page: CrawledPage, key: str, converted: ConvertedPage, state: JobTemplate
) -> PageRecord | None:
    """``cached_record`` of the conversion ``cached_conversion`` found under ``key``."""
    if not state.settled and not templating.by_rule(converted.extractor):
        return None  # deferred until the template settles
    return _ok_record(page, converted, key, templating.used(converted.extractor, state))

