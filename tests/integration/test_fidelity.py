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

# Sites that miss a target today (table), and the regression floors they are held to
# instead: (mean, 5th percentile), upper bounds for chrome_leak and raw_html; a 5th
# percentile below the target is held at today's level too. Measured with the
# converter on main (generator rules on) on the capped crawls of tests/support/sites.py.
# Node.js, Haddock and Texinfo match no rule (structural #content / readability): theirs
# are rules-off numbers. gtk-doc has no rule of its own but writes DocBook XSL markup, so
# the DocBook rule fires on glib: a true rules-off number for it needs the rules-off flag.
#
#   site           metric           mean     p5      target    miss
#   aeson          precision        0.862  0.686   >= 0.95    -0.088
#   aeson          links            0.412  0.000   >= 0.95    -0.538
#   aeson          raw_html         0.007  0.064   <= 0.005   +0.002
#   cargo          headings         0.789  0.372   >= 0.95    -0.161
#   cargo          links            0.846  0.667   >= 0.95    -0.104
#   cargo          raw_html         0.108  0.266   <= 0.005   +0.103
#   celery         precision        0.930  0.619   >= 0.95    -0.020
#   celery         links            0.361  0.000   >= 0.95    -0.589
#   commons-lang3  links            0.679  0.312   >= 0.95    -0.270
#   commons-lang3  raw_html         0.069  0.381   <= 0.005   +0.064
#   django         links            0.596  0.110   >= 0.95    -0.354
#   flask          links            0.576  0.000   >= 0.95    -0.374
#   git            links            0.932  0.588   >= 0.95    -0.017
#   git            raw_html         0.054  0.140   <= 0.005   +0.049
#   glib           chrome_leak      0.012  0.043   <= 0.01    +0.002
#   glib           code_verbatim    0.934  0.700   >= 0.97    -0.036
#   glib           links            0.688  0.276   >= 0.95    -0.262
#   glib           raw_html         0.078  0.222   <= 0.005   +0.073
#   lmdb           links            0.037  0.000   >= 0.95    -0.913
#   lmdb           raw_html         0.027  0.139   <= 0.005   +0.022
#   mkdocs         links            0.926  0.549   >= 0.95    -0.024
#   nodejs         precision        0.837  0.470   >= 0.95    -0.113
#   nodejs         chrome_leak      0.097  0.266   <= 0.01    +0.087
#   nodejs         raw_html         0.050  0.122   <= 0.005   +0.045
#   nodejs         titles           0.000  0.000   >= 0.95    -0.950
#   pam            links            0.674  0.000   >= 0.95    -0.276
#   postgresql     links            0.935  0.341   >= 0.95    -0.015
#   python         links            0.901  0.400   >= 0.95    -0.049
#   requests       links            0.793  0.121   >= 0.95    -0.157
#   sbcl           recall           0.941  0.737   >= 0.97    -0.029
#   sbcl           recall p5        0.737  0.737   >= 0.9     -0.163
#   sbcl           precision        0.878  0.368   >= 0.95    -0.072
#   sbcl           chrome_leak      0.041  0.250   <= 0.01    +0.031
#   sbcl           headings         0.845  0.333   >= 0.95    -0.105
#   sbcl           links            0.284  0.000   >= 0.95    -0.666
REGRESSION_FLOORS: dict[str, dict[str, tuple[float, float]]] = {
    # aeson and nodejs match no rule, so the learned site template now finds their
    # content: it drops the A-Z letter list every Haddock index page repeats (the gold
    # counts it as content: recall p5 0.845, links 0.347), and Node.js pages lose their
    # sidebar and TOC lines while their raw-HTML lines stay (share 0.075, p5 0.172).
    "aeson": {
        "recall": (0.97, 0.84),
        # layout tables (instance lists) are text now, and module pages titled
        # "Documentation" get their URL's name above it (issue 8, parts 3-4)
        "precision": (0.84, 0.65),
        # the index pages' letter bar was an HTML table; flattened, its line counts as
        # leaked chrome
        "chrome_leak": (0.02, 0.06),
        "code_verbatim": (0.97, 0.93),
        "table_cells": (0.9, 0.57),
        "links": (0.34, 0.0),
        "raw_html": (0.02, 0.1),
    },
    "cargo": {
        "precision": (0.95, 0.9),
        "headings": (0.77, 0.34),
        "links": (0.83, 0.63),
        "raw_html": (0.12, 0.3),
    },
    "celery": {"precision": (0.91, 0.58), "links": (0.35, 0.0)},
    "commons-lang3": {"headings": (0.95, 0.85), "links": (0.66, 0.28), "raw_html": (0.08, 0.42)},
    "django": {"links": (0.58, 0.07)},
    "flask": {"links": (0.56, 0.0)},
    "git": {"links": (0.92, 0.55), "raw_html": (0.07, 0.18)},
    "glib": {
        "precision": (0.95, 0.89),
        "chrome_leak": (0.03, 0.08),
        "code_verbatim": (0.92, 0.67),
        "headings": (0.95, 0.72),
        "links": (0.67, 0.24),
        "raw_html": (0.09, 0.26),
    },
    "lmdb": {"links": (0.02, 0.0), "raw_html": (0.04, 0.17)},
    "mkdocs": {"precision": (0.95, 0.84), "links": (0.91, 0.51)},
    "nodejs": {
        "precision": (0.82, 0.43),
        "chrome_leak": (0.11, 0.3),
        "raw_html": (0.08, 0.18),
        "titles": (0.0, 0.0),
    },
    "pam": {"links": (0.66, 0.0)},
    "postgresql": {"links": (0.92, 0.31)},
    "python": {"links": (0.89, 0.37)},
    "requests": {"links": (0.78, 0.09)},
    # links 0.94: an <a id> just above a heading ("...-with-the-dereference-operator",
    # an old id kept by mdBook) now lands on that heading; the gold reads it as part of
    # the section above (issue 8, part 5).
    # p5 0.5: ch15-04/ch15-05 link to "...-turning-an-rct-into-a-weakt", GitHub's slug of
    # "Turning an `Rc<T>` into a `Weak<T>`" (tests/support/linkcheck.py resolves it); the
    # scorer drops "<T>" inside code spans and expects "...-rc-into-a-weak". To recheck.
    "rust-book": {"headings": (0.95, 0.47), "links": (0.93, 0.5)},
    "sbcl": {
        "recall": (0.93, 0.7),
        "precision": (0.86, 0.33),
        "chrome_leak": (0.06, 0.29),
        "headings": (0.83, 0.3),
        "links": (0.27, 0.0),
    },
    "typer": {"precision": (0.95, 0.88)},
}


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
# Measured 2026-11-26: flask, glib, lmdb, nodejs, python, rust-book and typer meet every
# target as they do with rules; these sites are held where the generic engine is today
# (the rules-on floors above still apply to every other metric). The gaps: DocBook
# navigation tables and headers (pam, postgresql), rustdoc's sidebar (cargo), Javadoc's
# headings, Sphinx "[source]" links inside code (requests).
RULES_OFF_FLOORS: dict[str, dict[str, tuple[float, float]]] = {
    "cargo": {
        "precision": (0.89, 0.69),
    },
    "commons-lang3": {
        "headings": (0.58, 0.03),
    },
    "pam": {
        "precision": (0.84, 0.0),
        "chrome_leak": (0.05, 1.0),
        "raw_html": (0.05, 1.0),
    },
    "postgresql": {
        "precision": (0.85, 0.0),
        "chrome_leak": (0.08, 1.0),
        "raw_html": (0.04, 1.0),
    },
    "requests": {
        "code_verbatim": (0.45, 0.0),
    },
}


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
