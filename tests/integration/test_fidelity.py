"""Fidelity of mdcrawl's real output over whole Debian doc sites, on the independent scorer.

Each site is served on 127.0.0.1 and crawled with `mdcrawl crawl` (capped on big sites:
``Site.max_pages``, crawled one request at a time so the capped set is the same on every
run); each page's ``pages/*.md`` is scored against its HTML file with the site's gold file
(``tests/fixtures/gold/<site>.toml``) by ``mdcrawl.fidelity``, which imports nothing of
the converter. Floors hold the mean and the 5th percentile of pages.

``TARGETS`` (issue 8) are the goal. Where a site does not reach one today, its floor is
the level it reaches today (a regression floor, in ``REGRESSION_FLOORS``); the table
below says which site misses which target by how much. Raise a floor when it is met.

``crawl_and_score(name, work, *args)`` passes extra `mdcrawl crawl` arguments, so a
rules-off run (a flag the template work adds) can be scored the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mdcrawl.fidelity import LOWER_IS_BETTER, SITE_METRICS, SiteResult, load_gold, score_bundle
from mdcrawl.fidelity.targets import P5_RECALL, TARGETS

from tests.support.demo import crawl
from tests.support.server import serve_directory
from tests.support.sites import GOLD, SITES, require_site

# Issue 8's targets (on a site's mean; P5_PAGE_RECALL on its 5th-percentile page).
RECALL = 0.97
PRECISION = 0.95
CHROME_LEAK = 0.01  # at most 1 % of lines
CODE_VERBATIM = 0.97
CODE_LANGUAGE = 0.95
HEADINGS = 0.95
TABLE_CELLS = 0.90
LINK_RECALL = 0.95
RAW_HTML = 0.005  # at most 0.5 % of lines
P5_PAGE_RECALL = 0.90
ISSUE_TARGETS = {
    "recall": RECALL,
    "precision": PRECISION,
    "chrome_leak": CHROME_LEAK,
    "code_verbatim": CODE_VERBATIM,
    "code_language": CODE_LANGUAGE,
    "headings": HEADINGS,
    "table_cells": TABLE_CELLS,
    "links": LINK_RECALL,
    "raw_html": RAW_HTML,
}

# Sites that miss a target (rules on), and the regression floors they are held to
# instead: (mean, 5th percentile), upper bounds for chrome_leak and raw_html; a 5th
# percentile below the target is held at today's level too. Node.js, Haddock and Texinfo
# match no rule (the learned template finds their content).
#
# None today. Measured 2026-11-26 with generator rules on, on the capped crawls of
# tests/support/sites.py; the misses of the morning, and what closed them:
#
#   site           metric           before (mean / p5)   after        by
#   aeson          recall p5        0.974 / 0.852        0.996 / 0.991  a, g
#   aeson          precision        0.843 / 0.685        0.982 / 0.855  b, c, d, t
#   aeson          chrome_leak      0.020 / 0.050        0.000 / 0.000  t
#   aeson          links            0.903 / 0.557        0.997 / 0.990  a, e, g
#   cargo          raw_html         0.009 / 0.080        0.000 / 0.000  f
#   celery         precision        0.930 / 0.619        1.000 / 0.997  r (the "deck")
#   commons-lang3  raw_html         0.006 / 0.014        0.002 / 0.013  f
#   glib           chrome_leak      0.013 / 0.049        0.000 / 0.000  r (gtk-doc)
#   sbcl           precision        0.928 / 0.667        0.997 / 0.981  t
#
# a: menus the template learns from a fifth of the pages (Haddock's letter bar above
#    each index page); b: a collapsed <details> listing the page's members (Synopsis);
# c: "Source"/"[source]" links repeated beside each item; d: permalink glyph links
#    beside signatures; e: the scorer lands a link to an id the page lacks on the page
#    itself, title anchor included, as it does a link without a fragment; f: every "<"
#    before a letter escaped ("<E extends [Throwable](…)>" read as a tag); g: gold, the
#    letter bar is chrome where the page has entries (tests/fixtures/gold/aeson.toml);
# t: titles from the page's opening heading or caption where <title> holds it as a
#    whole part ("1 Build", "Index - J"; the h1 sections of Haddock are not titles);
# r: fast-path rules in selectors.py, the generic engine already met these rules off.
#
# Link recall went up on every Sphinx site (celery 0.63 -> 0.99, django 0.93 -> 0.99,
# requests 0.98 -> 1.0): signatures and inline code keep their cross-references as links,
# and the gold of django and requests ignores the "[source]" viewcode link as celery's
# and flask's do (whose XPath missed Sphinx 4's markup, the class on an inner span). Git
# 0.95 -> 1.0: a link to the page itself may land on its title's anchor (scorer).
REGRESSION_FLOORS: dict[str, dict[str, tuple[float, float]]] = {}


def crawl_and_score(name: str, work: Path, *extra: str) -> SiteResult:
    """Crawl the site with the real CLI (``extra``: more `mdcrawl crawl` args, e.g. a
    rules-off flag) and score its bundle against the site's gold file."""
    site = require_site(name)
    cap = ("--max-pages", str(site.max_pages), "--concurrency", "1") if site.max_pages else ()
    with serve_directory(site.root) as server:
        code = crawl(server.url(site.start), work / "cache", work / "out", *cap, *extra)
    assert code == 0
    return score_bundle(work / "out", site.root, server.url("/"), load_gold(GOLD / f"{name}.toml"))


def floors(name: str) -> dict[str, tuple[float, float]]:
    """(mean floor, 5th-percentile floor) per metric: the target, or today's level."""
    own = REGRESSION_FLOORS.get(name, {})
    result = {}
    for metric in SITE_METRICS:
        worst = 1.0 if metric in LOWER_IS_BETTER else 0.0
        tail = P5_PAGE_RECALL if metric == "recall" else worst
        target = ISSUE_TARGETS.get(metric, TARGETS[metric])  # order, line numbers, titles
        result[metric] = own.get(metric, (target, tail))
    return result


def misses(
    result: SiteResult, name: str, site_floors: dict[str, tuple[float, float]] | None = None
) -> list[str]:
    found = []
    for metric, (mean_floor, tail_floor) in (site_floors or floors(name)).items():
        agg = result.metrics[metric]
        lower = metric in LOWER_IS_BETTER
        for label, value, floor in (("mean", agg.mean, mean_floor), ("p5", agg.tail, tail_floor)):
            if (value > floor) if lower else (value < floor):
                found.append(
                    f"{metric} {label} {value:.4f} vs floor {floor} {result.worst(metric)}"
                )
    return found


@pytest.mark.parametrize("name", sorted(SITES))
def test_site_meets_its_fidelity_floors(name: str, tmp_path: Path) -> None:
    result = crawl_and_score(name, tmp_path)
    assert len(result.pages) > 10
    assert misses(result, name) == []


# With --no-generator-rules the learned site template and the generic cascade stand alone.
# Measured 2026-11-26: every site meets every target. Rules off, before this: aeson as
# above; cargo precision 0.923 (rustdoc's "source" links beside each item; 0.960 now)
# and raw HTML 0.007 (0 now); commons-lang3 raw HTML 0.0065 (0.0016); sbcl precision
# 0.928 (0.997); Sphinx's "[source]" viewcode links were kept (celery precision 0.976
# -> 0.999). Earlier: pam and postgresql (DocBook navigation header and footer:
# precision 0.85, chrome leak 4-6 %, raw HTML 2.6-3.6 %, now 0.99 / 0 / 0),
# commons-lang3 headings 0.59 (sections in bulleted lists, now 1.0), requests code
# verbatim 0.467 ("[docs]" links inside code, now 1.0).
RULES_OFF_FLOORS: dict[str, dict[str, tuple[float, float]]] = {}


@pytest.mark.parametrize("name", sorted(SITES))
def test_site_without_generator_rules_meets_its_floors(name: str, tmp_path: Path) -> None:
    result = crawl_and_score(name, tmp_path, "--no-generator-rules")
    assert len(result.pages) > 10
    assert misses(result, name, {**floors(name), **RULES_OFF_FLOORS.get(name, {})}) == []


def test_the_report_prints_the_issue_targets():
    """The report's targets (mdcrawl.fidelity.targets) are the ones floors start from."""
    assert {m: TARGETS[m] for m in ISSUE_TARGETS} == ISSUE_TARGETS
    assert P5_RECALL == P5_PAGE_RECALL


def test_the_report_command_crawls_a_folder_and_scores_it(capsys: pytest.CaptureFixture[str]):
    """`python -m mdcrawl.fidelity DIR`: serve, crawl with the real CLI, score, report."""
    from mdcrawl.fidelity.__main__ import main

    here = Path(__file__).parent.parent / "fixtures" / "fidelity"
    args = [str(here / "site"), "--start", "guide.html", "--gold", str(here / "gold.toml")]
    assert main(args) == 0
    report = capsys.readouterr().out
    assert "pages: 2   (gold: example)" in report
    assert main([str(here / "site"), "--start", "guide.html"]) == 0
    assert "generic fallback gold" in capsys.readouterr().out


def next_chain_in_order(bundle: Path, root: Path, base_url: str) -> tuple[int, float]:
    """(pairs, share): of the pages whose HTML names a next page (``rel=next``) that is
    also in the bundle, the share that docs.md puts after them (the site's own order)."""
    import json
    from urllib.parse import urldefrag, urljoin

    import lxml.html
    from mdcrawl.fidelity.links import page_url
    from mdcrawl.fidelity.site import html_file

    lines = (bundle / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    pages = [e for e in map(json.loads, lines) if e.get("status") == "ok" and e.get("file")]
    pages.sort(key=lambda e: e["order"])
    position = {page_url(e["url"]): i for i, e in enumerate(pages)}
    pairs = after = 0
    for entry in pages:
        html = html_file(root, base_url, entry["url"])
        doc = lxml.html.document_fromstring(html.read_bytes()) if html else None
        xpath = "//link[@rel='next']/@href | //a[@rel='next']/@href"
        hrefs = doc.xpath(xpath) if doc is not None else []
        target = page_url(urldefrag(urljoin(entry["url"], hrefs[0]))[0]) if hrefs else None
        here = page_url(entry["url"])
        if target in position and target != here:
            pairs += 1
            after += position[target] > position[here]
    return pairs, after / pairs if pairs else 1.0


@pytest.mark.parametrize("name", ["flask", "django"])
def test_without_rules_docs_md_follows_the_sites_own_next_chain(name: str, tmp_path: Path):
    """Rules off, no rule says which bar is navigation; the pages' rel=next chain is the
    site's order (measured 2026-11-26: flask 1.0, django 0.96; 0.06 and 0.53 when a
    guessed bar, Sphinx's "index | modules | next", ordered them)."""
    site = require_site(name)
    crawl_and_score(name, tmp_path, "--no-generator-rules")
    # pages are found by URL path, served from the root
    pairs, share = next_chain_in_order(tmp_path / "out", site.root, "http://127.0.0.1/")
    assert pairs > 20 and share >= 0.95
