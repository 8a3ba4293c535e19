"""Extraction and conversion on real pages of more generators (tests/fixtures/pages/README.md):
mdBook, Javadoc, AsciiDoc, DocBook XSL (PAM, PostgreSQL), rustdoc standalone pages, Doxygen,
MkDocs with the Read the Docs theme, the pydata Sphinx theme."""

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
    "doxygen/midl_8h.html": ("doxygen", "https://x.example/html/midl_8h.html"),
    "doxygen/group__readers.html": ("doxygen", "https://x.example/html/group__readers.html"),
    "doxygen/annotated.html": ("doxygen", "https://x.example/html/annotated.html"),
    "docbook/pg-view-pg-replication-slots.html": (
        "docbook",
        "https://pg.example/docs/view-pg-replication-slots.html",
    ),
    "docbook/pg-disk-full.html": ("docbook", "https://pg.example/docs/disk-full.html"),
    "docbook/pg-functions-range.html": ("docbook", "https://pg.example/docs/functions-range.html"),
    "docbook/pg-index.html": ("docbook", "https://pg.example/docs/index.html"),
    "mkdocs-rtd/arguments-index.html": (
        "readthedocs",
        "https://typer.example/tutorial/arguments/",
    ),
    "sphinx-pydata/status.html": ("sphinx-pydata", "https://gr.example/reference/commands/status.html"),
    "sphinx-pydata/com.html": ("sphinx-pydata", "https://gr.example/contribution/development/com.html"),
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


def test_doxygen_member_tables_split_at_their_heading_rows():
    md = convert("doxygen/midl_8h.html").markdown
    assert md.startswith("# LMDB: midl.h File Reference\n")
    for section in ("Data Structures", "Macros", "Typedefs", "Functions"):
        assert f"\n## {section}\n\n| " in md  # a heading, then that section's own table
    assert "| #define | **MDB_IDL_LOGN** 16 /\\* DB_SIZE is 2^16, UM_SIZE is 2^17 \\*/ |" in md
    assert "<table" not in md  # spacer rows (colspan, &nbsp;) no longer force HTML
    assert "| |  |" not in md and "|  |  |" not in md


def test_doxygen_h3_rows_and_index_icons():
    md = convert("doxygen/group__readers.html").markdown
    assert md.count("\n### Data Fields\n") == 4
    index = convert("doxygen/annotated.html").markdown
    assert "| [MDB_cursor](https://x.example/html/group__internal.html#structMDB__cursor) |" in index
    assert "C[MDB_cursor]" not in index  # the lettered icon is not glued to the name


def test_docbook_code_in_title_heading_is_not_repeated():
    md = convert("docbook/pg-view-pg-replication-slots.html").markdown
    assert md.startswith("# 54.19. `pg_replication_slots`\n\nThe `pg_replication_slots` view")
    # A table whose cells hold lists stays HTML; the scorer reads it as rendered.
    assert "<table>" in md and "slot_name" in md


def test_docbook_admonition_heading_becomes_its_label():
    md = convert("docbook/pg-disk-full.html").markdown
    assert "> **Tip:** Some file systems perform badly" in md
    assert "### Tip" not in md


def test_pre_in_an_html_table_keeps_its_text_and_blank_lines():
    md = convert("docbook/pg-functions-range.html").markdown
    assert "<pre>\n [1,2)\n [3,4)\n</pre>" in md
    html = (
        "<main><h1>T</h1><table><tr><td><pre class='language-c'>a;\n\n\nb;</pre></td>"
        "<td><ul><li>x</li></ul></td></tr></table></main>"
    )
    md = convert_html(html, "https://x.example/t.html").markdown
    assert '<pre class="language-c">a;\n&#32;\n&#32;\nb;</pre>' in md
    assert "\n\n" not in md.split("<table>")[1]  # one HTML block: no blank line inside
    scores = score_page(html, "https://x.example/t.html", md)
    assert scores.code_verbatim == 1.0 and scores.code_language == 1.0


def test_mkdocs_rtd_page_without_h1_takes_its_title_and_keeps_nav():
    page = convert("mkdocs-rtd/arguments-index.html")
    assert page.markdown.startswith("# CLI Arguments Intro\n\nIn the next few sections")
    assert "Previous" not in page.markdown and "Next" not in page.markdown
    assert "https://typer.example/tutorial/arguments/optional/" in page.nav


def test_pydata_prev_next_and_sidebars_are_not_content():
    md = convert("sphinx-pydata/com.html").markdown
    assert md.startswith("# 12.3.3. Groonga 通信アーキテクチャ\n")
    assert "previous" not in md.lower().split("\n")[-3:][0]
    for chrome in ("How to build Groonga at the repository by CMake on Windows", "On this page"):
        assert chrome not in md


def test_docbook_index_nav_is_its_toc_and_pages_chain_prev_next():
    index = convert("docbook/pg-index.html").nav
    assert index[:3] == (
        "https://pg.example/docs/index.html",
        "https://pg.example/docs/preface.html",
        "https://pg.example/docs/intro-whatis.html",
    )
    assert len(index) > 50
    page = convert("docbook/pg-disk-full.html").nav  # no toc of its own: prev, self, next
    assert page == (
        "https://pg.example/docs/disk-usage.html",
        "https://pg.example/docs/disk-full.html",
        "https://pg.example/docs/wal.html",
    )


def test_docbook_chapter_nav_puts_its_sections_after_itself():
    nav = convert("docbook/sag-configuration.html").nav
    here = "https://p.example/html/sag-configuration.html"
    assert here in nav and nav.index(here) <= 1
    assert any(u.startswith("https://p.example/html/sag-") for u in nav[nav.index(here) + 1 :])


def test_javadoc_package_nav_lists_its_classes_after_itself():
    nav = convert("javadoc/package-summary.html").nav
    base = "https://j.example/api/org/apache/commons/lang3/"
    assert nav[0] == base + "package-summary.html"
    assert base + "BooleanUtils.html" in nav and base + "AnnotationUtils.html" == nav[1]
    assert not any("/arch/" in u for u in nav)  # related packages are not its children
    assert convert("javadoc/BooleanUtils.html").nav == ()  # a class page offers none
