"""Extraction and conversion on real pages of more generators (tests/fixtures/pages/README.md):
mdBook, Javadoc, AsciiDoc, DocBook XSL, rustdoc standalone pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mdcrawl.convert import convert_html
from mdcrawl.extract import detect_generator, parse_html
from mdcrawl.fidelity import TARGETS, score_page

PAGES = Path(__file__).parent.parent / "fixtures" / "pages"

CASES = {
    "mdbook/ch03-02-data-types.html": ("mdbook", "https://doc.example/book/ch03-02-data-types.html"),
    "mdbook/ch01-01-installation.html": ("mdbook", "https://doc.example/book/ch01-01-installation.html"),
    "javadoc/BooleanUtils.html": (
        "javadoc",
        "https://j.example/api/org/apache/commons/lang3/BooleanUtils.html",
    ),
    "javadoc/package-summary.html": (
        "javadoc",
        "https://j.example/api/org/apache/commons/lang3/package-summary.html",
    ),
    "asciidoc/git-stage.html": ("asciidoc", "https://g.example/git-stage.html"),
    "asciidoc/git-clone.html": ("asciidoc", "https://g.example/git-clone.html"),
    "docbook/sag-pam_limits.html": ("docbook", "https://p.example/html/sag-pam_limits.html"),
    "docbook/sag-configuration.html": ("docbook", "https://p.example/html/sag-configuration.html"),
    "rustdoc/book-traits.html": ("rustdoc", "https://doc.example/book/traits.html"),
}


def convert(name: str):
    _, url = CASES[name]
    return convert_html((PAGES / name).read_bytes(), url)


@pytest.mark.parametrize("name", sorted(CASES))
def test_generator_detected_and_its_rule_picks_the_region(name):
    generator, _ = CASES[name]
    rule = detect_generator(parse_html((PAGES / name).read_text(encoding="utf-8")))
    assert rule is not None and rule.name == generator
    assert convert(name).extractor == generator


@pytest.mark.parametrize("name", sorted(CASES))
def test_page_meets_fidelity_targets(name):
    _, url = CASES[name]
    html = (PAGES / name).read_bytes()
    page = convert(name)
    scores = score_page(html, url, page.markdown)
    # The words target is for a site's mean; one short page may miss 2 of 120 words to
    # the scorer's own tokenising of DocBook's run-together TOC (<dt>4.1.</dt>).
    assert scores.words >= 0.98, scores
    for metric in ("code_verbatim", "code_language", "headings", "table_cells", "links"):
        assert getattr(scores, metric) >= TARGETS[metric], (metric, scores)
    assert scores.nav_leak <= TARGETS["nav_leak"], scores
    assert page.markdown.startswith("# ")
    headings = [" ".join(h.split()) for h in re.findall(r"^#+ (.*)$", page.markdown, re.M)]
    assert headings[0] not in headings[1:2], "title heading repeated"


def test_mdbook_headings_code_and_tables():
    page = convert("mdbook/ch03-02-data-types.html")
    md = page.markdown
    assert md.startswith("# Data Types\n")  # the page's h2 is its title, not a second heading
    assert "\n### Scalar Types\n" in md and "\n#### Integer Types\n" in md
    assert "[Scalar Types]" not in md  # a heading's link to itself is not kept
    # <pre><pre class=playground><code class=language-rust>: one fence, with its language
    assert '```rust\n#![allow(unused)]\nfn main() {\nlet guess: u32 = "42".parse()' in md
    assert "```console\n$ cargo build" in md
    assert "| Length | Signed | Unsigned |" in md
    # chrome: menu bar, print/theme buttons, prev/next chapters
    assert "The Rust Programming Language" not in md
    assert "Previous chapter" not in md and "Next chapter" not in md


def test_mdbook_nav_is_the_summary_in_order():
    nav = convert("mdbook/ch03-02-data-types.html").nav
    assert nav[:3] == (
        "https://doc.example/book/title-page.html",
        "https://doc.example/book/foreword.html",
        "https://doc.example/book/ch00-00-introduction.html",
    )
    assert nav.index("https://doc.example/book/ch03-01-variables-and-mutability.html") < nav.index(
        "https://doc.example/book/ch03-02-data-types.html"
    )
    assert len(nav) > 50 and len(nav) == len(set(nav))


def test_javadoc_summary_grids_become_tables_and_layout_lists_vanish():
    md = convert("javadoc/BooleanUtils.html").markdown
    assert md.startswith("# Class BooleanUtils\n\nPackage\xa0[org.apache.commons.lang3](")
    assert "\n| Modifier and Type | Field | Description |\n| --- | --- | --- |\n" in md
    assert "| `static final String` | `FALSE` | The false String `\"false\"`. |" in md
    assert "\n## Method Summary\n" in md and "\n## Method Details\n" in md
    assert not re.search(r"^\s*- #", md, re.MULTILINE)  # no headings inside list items
    assert "BooleanUtils.and(true, true)         = true" in md
    for chrome in ("All Classes and Interfaces", "Instance Methods", "SEARCH:", "Skip navigation"):
        assert chrome not in md


def test_asciidoc_manual_page_keeps_header_and_name_section():
    md = convert("asciidoc/git-stage.html").markdown
    assert md.startswith("# git-stage(1) Manual Page\n\n## NAME\n")
    assert "Add file contents to the staging area" in md
    assert "```\ngit stage <arg>…\n```" in md
    assert "Last updated" not in md  # #footer


def test_docbook_drops_navheader_and_navfooter():
    md = convert("docbook/sag-pam_limits.html").markdown
    assert "### 6.14.1.\xa0DESCRIPTION" in md
    assert "/etc/security/limits.conf" in md
    for chrome in ("Prev", "Next", "Up", "Home"):
        assert f"[{chrome}]" not in md


def test_rustdoc_standalone_page_keeps_its_link_list():
    md = convert("rustdoc/book-traits.html").markdown
    link = "[in the current edition: Ch 10.02 — Traits](https://doc.example/book/ch10-02-traits.html)"
    assert link in md
    assert "1.63.0" not in md  # #versioninfo
    assert "[Run]" not in md  # playground button
    assert "Copyright" not in md
