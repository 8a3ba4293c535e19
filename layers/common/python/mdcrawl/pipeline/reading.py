"""The local crawl step's one parse of a fetched page: its links, and its markdown.

On AWS the crawler and the processor are separate Lambdas, so the crawler reads only
the links (``fetching.page_links``) and the processor parses the page again. Locally
both run on the same machine, so the crawl step hands each fetched page to a pool
worker that stores its body, parses it once (``document.parse_unbounded``), reads the
links off the tree and then bounds and converts the same tree into the markdown cache. When the
process step comes for the page (in discovery order, like every outcome) it finds the
markdown there and only records it. The event loop keeps fetching meanwhile: no
hashing, parsing or body writing on it.

Nothing here decides anything the process step would not: the markdown is cached under
the key the process step looks up (``process.markdown_cache_key``), with the template
and rules the job has when the page is read; a template settled in between gives
another key, and the process step converts again with it, as it always did.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..models import ConvertedPage, CrawledPage, FrontierItem
from .fetching import body_key, page_links, store_body, tree_page_links
from .process import ProcessDeps, cache_converted, markdown_cache_key
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


def read_fetched(fetched: Fetched, deps: ProcessDeps) -> tuple[str, tuple[str, ...]]:
    """Store the body; answer its content hash and its links; convert it on the way
    unless its markdown is already cached. A page that fails to convert still gives its
    links: the process step converts it again and records why it failed."""
    content_hash = store_body(fetched.body, fetched.content_type, deps.blobs)
    page = _crawled(fetched, content_hash)
    rules = deps.facts.rules(page.job_id, deps.jobs)
    state = deps.facts.template(page.job_id, deps.blobs)
    key = markdown_cache_key(page, state.template, rules)
    if deps.blobs.exists(key):
        return content_hash, page_links(fetched.body, page.final_url, page.encoding)
    links, converted = _links_and_markdown(fetched.body, page, state, rules)
    if converted is not None:  # the tree is gone by now: its memory and the JSON's never add up
        cache_converted(deps.blobs, key, converted)
    return content_hash, links


def _links_and_markdown(
    body: bytes, page: CrawledPage, state: JobTemplate, rules: bool
) -> tuple[tuple[str, ...], ConvertedPage | None]:
    # Imported where they run (a pool worker), not with this module: the crawl's own
    # process never loads the converter on an all-cached re-crawl.
    from ..document import bounded, parse_unbounded
    from ..extract import detect_generator

    document = parse_unbounded(body, page.encoding)
    # Read off the tree the crawler alone reads (``page_links``), before it is bounded
    # and pruned: the same links whichever side read the page.
    links = tree_page_links(document.root, page.final_url)
    document = bounded(document)
    if not state.settled and (not rules or detect_generator(document.root) is None):
        return links, None  # the template may change it: the process step defers it
    try:
        return links, convert_document(document, page.final_url, state.template, rules)
    except Exception as exc:  # noqa: BLE001 - the process step records the failure
        log.warning("conversion of %s failed while reading it: %r", page.final_url, exc)
        return links, None


def convert_document(
    document: Document, url: str, template: SiteTemplate | None, rules: bool
) -> ConvertedPage:
    """``convert.convert_document``, the converter imported on first use."""
    from .. import convert

    return convert.convert_document(document, url, template, rules)


def _crawled(fetched: Fetched, content_hash: str) -> CrawledPage:
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
