"""How faithfully mdcrawl's markdown keeps a docs site: a scorer independent of the
converter (it imports nothing of ``extract``, ``selectors``, ``markdown`` or ``convert``).

    python -m mdcrawl.fidelity DIR [--gold FILE] [--start PATH] [--bundle OUT] [-- CRAWL ARGS]

Each page's markdown (``pages/*.md``, found through ``manifest.jsonl``) is scored against
its HTML file with a gold file that says where the content, the chrome and the UI inside
the content are (``gold.py``); without one, a labelled generic fallback is used. Metrics
(``metrics.py``): word recall and precision, chrome leak, code verbatim / with language /
without line numbers, headings, table cells, link recall (to the same page and fragment in
the bundle), block order, raw-HTML lines; and per site title quality. A site is reported by
the mean and the 5th percentile of its pages.
"""

from __future__ import annotations

from .gold import GENERIC, Gold, find_gold, load_gold
from .links import BundlePage, LinkIndex, page_url
from .mdread import read_markdown
from .metrics import LOWER_IS_BETTER, METRICS, Score, score
from .reference import heading_anchors, parse, read_page
from .site import SITE_METRICS, Aggregate, SiteResult, score_bundle

__all__ = [
    "GENERIC",
    "LOWER_IS_BETTER",
    "METRICS",
    "SITE_METRICS",
    "Aggregate",
    "Gold",
    "Score",
    "SiteResult",
    "find_gold",
    "load_gold",
    "score_bundle",
    "score_page",
]


def score_page(
    html: bytes | str, url: str, markdown: str, gold: Gold = GENERIC
) -> dict[str, Score]:
    """One page on its own (no bundle): links to other pages must be absolute URLs."""
    md = read_markdown(markdown)
    page = BundlePage(page_url(url), "page.md", md, heading_anchors(parse(html)))
    return score(read_page(html, url, gold), md, page, LinkIndex.of([page]))
