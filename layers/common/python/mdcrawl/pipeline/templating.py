"""A job's site template: learned once, from a sample fixed by discovery order, stored
with the job as ``jobs/{id}/template.json``.

Whatever the timing, the template is ``learn(first SAMPLE_SIZE distinct pages in
discovery order)``. The process step learns it as soon as that sample is certain (every
URL up to the sample's last one has its record: no earlier page can still arrive);
until then a page whose markdown it could change (no generator rule recognises it) is
recorded unconverted (``DEFERRED``) and a page a rule recognises is converted at once.
Finalize settles the template if the crawl did not (small sites, a gap in the orders)
and converts, from the cached body, every deferred page and every page converted with
another template than the settled one: each page is converted once. So the output
depends on the pages only, never on which worker ran first.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from ..models import CONVERTER_VERSION, PageRecord, PageStatus
from ..names import BlobPrefix, job_key
from ..ports import BlobStore
from ..template import NO_TEMPLATE_JSON, RULED_SHARE, SAMPLE_SIZE, SiteTemplate, template_id
from .fetching import body_key

TEMPLATE_NAME = "template.json"
# Past this discovery order a page no longer tries to settle the template (listing the
# job's records each time): finalize does it.
SETTLE_WINDOW = 8 * SAMPLE_SIZE


@dataclass(frozen=True)
class JobTemplate:
    settled: bool  # False: not learned yet, pages are converted without it
    template: SiteTemplate | None = None  # None once settled: the site needs none

    @property
    def id(self) -> str:
        return template_id(self.template)


# A page's extractor that is no template's business: a generator rule picked its content.
_GENERIC_EXTRACTORS = ("template", "structural", "readability", "density")
ANY = "*"  # PageRecord.template of a page whose output no template changes
# PageRecord.template of a page not converted yet: its markdown depends on a template
# that had not settled when it arrived, so it is converted once, at finalize.
DEFERRED = "?"


def used(extractor: str, state: JobTemplate) -> str:
    """What a page's record says about the template its markdown depends on."""
    return ANY if by_rule(extractor) else state.id


def by_rule(extractor: str) -> bool:
    """A generator rule found the page's content: no template changes its markdown."""
    return bool(extractor) and not extractor.startswith(_GENERIC_EXTRACTORS)


def load(job_id: str, blobs: BlobStore) -> JobTemplate:
    data = blobs.get(job_key(job_id, TEMPLATE_NAME))
    if data is None:
        return JobTemplate(settled=False)
    return JobTemplate(settled=True, template=SiteTemplate.from_json(data))


def sample(records: list[PageRecord], complete: bool) -> list[PageRecord] | None:
    """The first SAMPLE_SIZE pages in discovery order (one per body), or None while a
    page that belongs before them may still arrive. ``complete``: every record is in."""
    chosen: list[PageRecord] = []
    bodies: set[str] = set()
    expected = 0
    for record in sorted(records, key=lambda r: r.order):
        if not complete and record.order != expected:
            return None  # a gap: an earlier URL has no record yet
        expected = record.order + 1
        if record.status is PageStatus.OK and record.content_hash not in bodies:
            bodies.add(record.content_hash or "")
            chosen.append(record)
            if len(chosen) == SAMPLE_SIZE:
                return chosen
    return chosen if complete else None


def settle(
    job_id: str, records: list[PageRecord], blobs: BlobStore, rules: bool, complete: bool
) -> JobTemplate:
    """Learn and store the template if its sample is certain; the state either way."""
    pages = sample(records, complete)
    if pages is None:
        return JobTemplate(settled=False)
    ruled = sum(record.template == ANY for record in pages)
    # The records already say whether rules found the sample's content: no parsing then.
    if rules and pages and ruled >= RULED_SHARE * len(pages):
        document = NO_TEMPLATE_JSON
    else:
        document = _learned(pages, blobs, rules)
    # Two workers settling at once learn the same template from the same sample.
    blobs.put(job_key(job_id, TEMPLATE_NAME), document.encode(), "application/json")
    template = None if document == NO_TEMPLATE_JSON else SiteTemplate.from_json(document)
    return JobTemplate(settled=True, template=template)


def _learned(pages: list[PageRecord], blobs: BlobStore, rules: bool) -> str:
    """The template learnt from the sample's bodies, as JSON. Learning is a function of
    the bodies, their encodings, the rules setting and the converter's code, so it is
    kept under those (``learnt_key``): a re-crawl of an unchanged site, a new job with
    the same sample, reads it instead of parsing the sample again."""
    key = learnt_key(pages, rules)
    known = blobs.get(key)
    if known is not None:
        return known.decode()
    bodies = _bodies(pages, blobs)
    from ..convert import learn_template  # the converter, imported where a page needs it

    template = learn_template(bodies, rules)
    document = template.to_json() if template is not None else NO_TEMPLATE_JSON
    if len(bodies) == len(pages):  # a sample missing a body is not that sample's template
        blobs.put(key, document.encode(), "application/json")
    return document


def learnt_key(pages: list[PageRecord], rules: bool) -> str:
    sample = [[record.content_hash, record.encoding] for record in pages]
    digest = hashlib.sha256(json.dumps([sample, rules]).encode()).hexdigest()
    return f"{BlobPrefix.CACHE_MARKDOWN}{CONVERTER_VERSION}/templates/{digest}.json"


def _bodies(pages: list[PageRecord], blobs: BlobStore) -> list[tuple[bytes, str | None]]:
    found = []
    for record in pages:
        body = blobs.get(body_key(record.content_hash or ""))
        if body is not None:
            found.append((body, record.encoding))
    return found
