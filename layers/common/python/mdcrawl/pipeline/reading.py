"""The local crawl step's one parse of a fetched page: its links, and its markdown.

On AWS the crawler and the processor are separate Lambdas, so the crawler reads only
the links (``fetching.page_links``) and the processor parses the page again. Locally
both run on the same machine, so the crawl step hands each fetched page to a pool
worker that stores its body, parses it once (``document.parse_unbounded``), reads the
links off the tree and then bounds and converts the same tree into the markdown cache. When the
process step comes for the page (in discovery order, like every outcome) it finds the
markdown there and only records it. The event loop keeps fetching meanwhile: no
hashing, parsing or body writing on it.

A page needs no process step at all when the worker can tell what it would record: the
job's template has settled (or the page is past ``templating.SETTLE_WINDOW``, where the
process step no longer settles it) and the page's markdown is in the cache and does not
wait for the template. Then the read answers that record too (``Read.record``), the
crawl outcome carries it, and the orchestrator records it with the outcome
(``outcomes.hand_over``, as on AWS for a cached page): one round trip to a worker per
fresh page instead of two, and the record lands in the outcome's own transaction.

Nothing here decides anything the process step would not: the markdown is cached under
the key the process step looks up (``process.lookup_keys``), with the template
and rules the job has when the page is read; a template settled in between gives
another key, and the process step converts again with it, as it always did.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..models import ConvertedPage, CrawledPage, FrontierItem, PageRecord
from . import templating
from .fetching import body_key, page_links, store_body, tree_page_links
from .process import (
    ProcessDeps,
    cache_converted,
    cached_conversion,
    conversion_key,
    converted_record,
    note_waiting,
    record_of_cached,
)
from .templating import JobTemplate

if TYPE_CHECKING:
    from ..document import Document
    from ..template import SiteTemplate

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Fetched:
    """A page as the network gave it, on its way to a worker (pickled: no store in it)."""

    job_id: str
    item: FrontierItem
    final_url: str
    body: bytes
    content_type: str
    encoding: str | None


@dataclass(frozen=True)
class Read:
    """What a worker's read of a fetched page answers (pickled back to the crawl)."""

    content_hash: str
    links: tuple[str, ...]
    # What the process step would record for the page, when it needs none (see above).
    record: PageRecord | None = None


def read_fetched(
    fetched: Fetched,
    deps: ProcessDeps,
    converted_to: Callable[[PageRecord, str], None] | None = None,
) -> Read:
    """Store the body; answer its content hash and its links; convert it on the way
    unless its markdown is already cached. A page that fails to convert still gives its
    links: the process step converts it again and records why it failed.
    ``converted_to(record, markdown)`` hears of a page converted here whose record the
    read answers (the worker chunks it while its markdown is at hand)."""
    content_hash = store_body(fetched.body, fetched.content_type, deps.blobs)
    page = crawled(fetched, content_hash)
    rules = deps.facts.rules(page.job_id, deps.jobs)
    state = deps.facts.template(page.job_id, deps.blobs)
    recordable = _recordable(page, state, deps)
    found = cached_conversion(page, deps.blobs, state.template, rules)
    if found is not None:
        links = page_links(fetched.body, page.final_url, page.encoding)
        record = record_of_cached(page, *found, state) if recordable else None
        return Read(content_hash, links, record)
    links, converted, ruleless = _links_and_markdown(fetched.body, page, state, rules)
    if ruleless and rules:  # the process step would parse the body again to learn it
        note_waiting(page, deps.blobs)
    if converted is None:
        return Read(content_hash, links)
    key = conversion_key(page, state.template, rules, converted)
    cache_converted(deps.blobs, key, converted)  # the tree is gone by now: no memory adds up
    if not recordable or not (state.settled or templating.by_rule(converted.extractor)):
        return Read(content_hash, links)  # the process step defers it: see process_page
    record = converted_record(page, converted, key, state)
    if converted_to is not None:
        converted_to(record, converted.markdown)
    return Read(content_hash, links, record)


def _recordable(page: CrawledPage, state: JobTemplate, deps: ProcessDeps) -> bool:
    """May the read stand in for the process step? Not while the page may be the one
    that completes the template's sample (the process step settles the template after
    recording such a page), and not where the process step keeps a copy per job."""
    return not deps.job_copy and (state.settled or page.order >= templating.SETTLE_WINDOW)


def _links_and_markdown(
    body: bytes, page: CrawledPage, state: JobTemplate, rules: bool
) -> tuple[tuple[str, ...], ConvertedPage | None, bool]:
    """The page's links and its markdown (None: it waits for the template, or failed),
    and whether the generator rules were asked and none recognised it."""
    # Imported where they run (a pool worker), not with this module: the crawl's own
    # process never loads the converter on an all-cached re-crawl.
    from ..document import bounded, parse_unbounded
    from ..extract import detect_generator

    document = parse_unbounded(body, page.encoding)
    # Read off the tree the crawler alone reads (``page_links``), before it is bounded
    # and pruned: the same links whichever side read the page.
    links = tree_page_links(document.root, page.final_url)
    document = bounded(document)
    ruleless = not state.settled and rules and detect_generator(document.root) is None
    if not state.settled and (not rules or ruleless):
        return links, None, ruleless  # the template may change it: the process step defers it
    try:
        return links, convert_document(document, page.final_url, state.template, rules), False
    except Exception as exc:  # noqa: BLE001 - the process step records the failure
        log.warning("conversion of %s failed while reading it: %r", page.final_url, exc)
        return links, None, False


def convert_document(
    document: Document, url: str, template: SiteTemplate | None, rules: bool
) -> ConvertedPage:
    """``convert.convert_document``, the converter imported on first use."""
    from .. import convert

    return convert.convert_document(document, url, template, rules)


def crawled(fetched: Fetched, content_hash: str) -> CrawledPage:
    """The CrawledPage the orchestrator will hand the process step for this fetch."""
    item = fetched.item
    return CrawledPage(
        job_id=fetched.job_id,
        url=item.url,
        url_hash=item.url_hash,
        final_url=fetched.final_url,
        content_hash=content_hash,
        body_key=body_key(content_hash),
        order=item.order,
        depth=item.depth,
        from_cache=False,
        sitemap_rank=item.sitemap_rank,
        encoding=fetched.encoding,
    )
