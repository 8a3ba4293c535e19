"""Extraction and conversion on real pages of more generators (tests/fixtures/pages/README.md):
mdBook, Javadoc, AsciiDoc, DocBook XSL (PAM, PostgreSQL), rustdoc standalone pages, Doxygen,
MkDocs with the Read the Docs theme, the pydata Sphinx theme; and sites built here with
Material for MkDocs, Sphinx furo, VitePress and Docusaurus."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mdcrawl.convert import convert_html
from mdcrawl.extract import detect_generator, parse_html
from mdcrawl.fidelity import GENERIC, Gold, load_gold, score_page
from mdcrawl.fidelity.mdread import read_markdown
from mdcrawl.fidelity.targets import TARGETS

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
    "mkdocs-material/tabbed.html": ("mkdocs-material", "https://m.example/extensions/tabbed/"),
    "mkdocs-material/details.html": ("mkdocs-material", "https://m.example/extensions/details/"),
    "sphinx-furo/cli.html": ("sphinx-furo", "https://f.example/cli.html"),
    "sphinx-furo/views.html": ("sphinx-furo", "https://f.example/views.html"),
    "vitepress/markdown-examples.html": ("vitepress", "https://vp.example/guide/markdown-examples.html"),
    "vitepress/commander.html": ("vitepress", "https://vp.example/guide/commander.html"),
    "docusaurus/markdown-features.html": (
        "docusaurus",
        "https://d.example/docs/tutorial-basics/markdown-features",
    ),
    "docusaurus/create-a-document.html": (
        "docusaurus",
        "https://d.example/docs/tutorial-basics/create-a-document",
    ),
}


# Gold of the fixture site built by the same generator (tests/fixtures/gold); the
# generic fallback for the rest.
GOLD_OF = {
    "mdbook": "rust-book", "javadoc": "commons-lang3", "asciidoc": "git", "docbook": "pam",
    "doxygen": "lmdb", "mkdocs-rtd": "typer",
}
GOLD_DIR = Path(__file__).parent.parent / "fixtures" / "gold"


# Below target on the independent scorer (issue 8) today: code left as <pre> inside an
# HTML table is not a fenced block (for the output work to fix); pydata's <main> holds its
# sidebars, so the generic fallback gold (no pydata gold) under-counts recall there.
KNOWN_MISSES = {
    "docbook/pg-functions-range.html": {"code_verbatim"},
    "sphinx-pydata/status.html": {"code_verbatim"},
    "sphinx-pydata/com.html": {"recall"},
}


def gold_for(name: str) -> Gold:
    site = GOLD_OF.get(name.split("/")[0])
    return load_gold(GOLD_DIR / f"{site}.toml") if site else GENERIC


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
    scores = score_page(html, url, page.markdown, gold_for(name))
    # The words target (0.97) is for a site's mean; one page is held to 0.93. Link recall
    # (fragments that resolve) is held per site in tests/integration/test_fidelity.py.
    known = KNOWN_MISSES.get(name, set())
    if "recall" not in known:
        assert scores["recall"].value >= 0.93, scores
    for metric in {"code_verbatim", "code_language", "headings", "table_cells"} - known:
        assert scores[metric].value >= TARGETS[metric], (metric, scores)
    if "chrome_leak" not in known:
        assert scores["chrome_leak"].value <= TARGETS["chrome_leak"], scores
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
    # code holding links keeps them: the type and the member stay cross-references
    string = "[`String`](https://docs.oracle.com/javase/8/docs/api/java/lang/String.html)"
    false = "[`FALSE`](https://j.example/api/org/apache/commons/lang3/BooleanUtils.html#FALSE)"
    assert f"| `static final `{string} | {false} | The false String `\"false\"`. |" in md
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
    for section in ("Macros", "Typedefs", "Functions"):
        assert f"\n## {section}\n\n| " in md  # a heading, then that section's own table
    # A one-row table is layout, not data: its cells become a line.
    assert "\n## Data Structures\n\nstruct [MDB_ID2](" in md
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
        "<main><h1>T</h1><table><tr><th>Code</th><th>Notes</th></tr>"
        "<tr><td><pre class='language-c'>a;\n\n\nb;</pre></td>"
        "<td><ul><li>x</li></ul></td></tr></table></main>"
    )
    md = convert_html(html, "https://x.example/t.html").markdown
    assert '<pre class="language-c">a;\n&#32;\n&#32;\nb;</pre>' in md
    assert "\n\n" not in md.split("<table>")[1]  # one HTML block: no blank line inside
    assert read_markdown(md).html_code == [("c", "a;\n\n\nb;")]  # as a browser shows it


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


def test_material_tabs_admonitions_code_and_tables():
    md = convert("mkdocs-material/tabbed.html").markdown
    # The h1 comes after a wordless "## —" heading in this site's pages: lifted to the top.
    assert md.startswith("# Tabbed\n\n## —\n\n> **9.10 New Approach to Tabs:** 9.10 has added")
    assert md.count("# Tabbed\n") == 1
    assert "```py3\nimport markdown\nmd = markdown.Markdown(extensions=['pymdownx.tabbed'])\n```" in md
    # Each tab's label stands before its own panel, no label run together ("Tab 1Tab 2").
    assert "**Tab 1**\n\nMarkdown **content**.\n\nMultiple paragraphs.\n\n**Tab 2**\n\nMore Markdown" in md
    assert "Tab 1Tab 2" not in md
    assert "> **Note:** If you are using JavaScript to track selected tabs" in md
    assert "| Option | Type | Default | Description |" in md
    for chrome in ("Back to top", "Skip to content", "Edit this page", "Copy to clipboard", "Made with"):
        assert chrome not in md
    assert "PyMdown Extensions Documentation" not in md  # header, site name


def test_material_collapsible_admonitions_are_labelled():
    md = convert("mkdocs-material/details.html").markdown
    assert "> **Open styled details:**\n>\n> > **Nested details!:** And more content again." in md
    assert "> **Success:** Content.\n\n> **Warning:** Content." in md


def test_material_nav_is_the_primary_sidebar_in_order():
    nav = convert("mkdocs-material/tabbed.html").nav
    assert nav[:3] == (
        "https://m.example/",
        "https://m.example/installation/",
        "https://m.example/usage_notes/",
    )
    assert nav.index("https://m.example/extensions/superfences/") < nav.index(
        "https://m.example/extensions/tabbed/"
    ) < nav.index("https://m.example/extensions/tasklist/")
    assert len(nav) > 40 and len(nav) == len(set(nav))


def test_furo_tabs_admonitions_and_no_chrome():
    md = convert("sphinx-furo/cli.html").markdown
    assert md.startswith("# Command Line Interface\n\nInstalling Flask installs the `flask` script")
    # sphinx-tabs: the labels are <button>s; they survive as the panels' titles.
    assert "**Bash**\n\n```text\n$ export FLASK_RUN_PORT=8000\n$ flask run" in md
    assert "**Powershell**\n\n```text\n> $env:FLASK_RUN_PORT = 8000" in md
    assert "> **Warning:** Do not use this command to run your application in production." in md
    for chrome in ("Edit this page", "Back to top", "On this page", "Made with", "Next", "Previous"):
        assert chrome not in md
    table = convert("sphinx-furo/views.html").markdown
    assert "| URL | Method | Description |\n| --- | --- | --- |\n| `/users/` | `GET` | List all users |" in table


def test_furo_nav_is_the_sidebar_tree_in_order():
    nav = convert("sphinx-furo/cli.html").nav
    assert nav[:3] == (
        "https://f.example/installation.html",
        "https://f.example/quickstart.html",
        "https://f.example/tutorial/index.html",
    )
    here = nav.index("https://f.example/cli.html")  # index.rst's toctree: extensions, cli, server
    assert nav[here - 1 : here + 2] == (
        "https://f.example/extensions.html",
        "https://f.example/cli.html",
        "https://f.example/server.html",
    )
    assert len(nav) > 50 and len(nav) == len(set(nav))


def test_vitepress_containers_are_labelled_and_code_fenced():
    md = convert("vitepress/markdown-examples.html").markdown
    assert md.startswith("# Markdown Extension Examples\n\nThis page demonstrates")
    # ::: containers: div.custom-block with p.custom-block-title; details for ::: details
    assert "> **INFO:** This is an info box." in md
    assert "> **TIP:** This is a tip." in md and "> **DANGER:** This is a dangerous warning." in md
    assert "> **Details:** This is a details block." in md
    assert "```js\nexport default {\n  data () {" in md
    assert "````md\n```js{4}\n" in md  # a fence holding a fence gets a longer one
    for chrome in ("Copy Code", "Edit this page", "Previous page", "Next page", "On this page", "Released under"):
        assert chrome not in md
    assert "\njs\n" not in md  # the span.lang badge of each block


def test_vitepress_nav_is_the_sidebar_in_order():
    nav = convert("vitepress/commander.html").nav
    assert nav == (
        "https://vp.example/guide/markdown-examples.html",
        "https://vp.example/guide/api-examples.html",
        "https://vp.example/guide/commander.html",
    )


def test_docusaurus_code_lines_admonitions_and_inlined_images():
    md = convert("docusaurus/markdown-features.html").markdown
    assert md.startswith("# Markdown Features\n\nDocusaurus supports **[Markdown]")
    # Prism writes one <div class=token-line>...<br></div> per line, no newline characters.
    assert "my-doc.md\n\n```text\n---\nid: my-doc-id\ntitle: My document title\n" in md
    assert "```jsx\nfunction HelloDocusaurus() {\n  return <h1>Hello, Docusaurus!</h1>;\n}\n```" in md
    assert "> **My tip:** Use this awesome feature option" in md
    assert "> **Take care:** This action is dangerous" in md
    assert "data:image" not in md and "Docusaurus logo" in md  # the data: URI image is its alt
    for chrome in ("Edit this page", "Previous", "Next", "Skip to main content", "Copyright ©", "Tutorial - Basics"):
        assert chrome not in md


def test_docusaurus_nav_is_the_sidebar_in_order():
    nav = convert("docusaurus/create-a-document.html").nav
    base = "https://d.example/docs/"
    assert nav[:4] == (
        base + "intro",
        base + "category/tutorial---basics",
        base + "tutorial-basics/create-a-page",
        base + "tutorial-basics/create-a-document",
    )
    assert len(nav) == len(set(nav))


def test_tab_sets_of_docusaurus_and_vitepress_code_groups():
    """Markup of Docusaurus' <Tabs> and VitePress' ::: code-group, as their themes render it."""
    html = (
        '<html><head><meta name="generator" content="Docusaurus v3.10.2"></head><body>'
        '<div id="__docusaurus"><article><div class="theme-doc-markdown markdown"><h1>T</h1>'
        '<div class="tabs-container tabList_x"><ul role="tablist" class="tabs">'
        '<li role="tab" class="tabs__item tabs__item--active">npm</li>'
        '<li role="tab" class="tabs__item">Yarn</li></ul>'
        '<div class="margin-top--md"><div role="tabpanel"><p>npm i x</p></div>'
        '<div role="tabpanel" hidden=""><p>yarn add x</p></div></div></div>'
        "</div></article></div></body></html>"
    )
    md = convert_html(html, "https://d.example/docs/t").markdown
    assert md == "# T\n\n**npm**\n\nnpm i x\n\n**Yarn**\n\nyarn add x\n"
    html = (
        '<html><head><meta name="generator" content="VitePress v1.6.4"></head><body>'
        '<div id="VPContent"><div class="vp-doc"><h1>T</h1><div class="vp-code-group">'
        '<div class="tabs"><input type="radio" name="g" id="t1" checked><label for="t1">config.js</label>'
        '<input type="radio" name="g" id="t2"><label for="t2">config.ts</label></div>'
        '<div class="blocks"><div class="language-js active"><span class="lang">js</span>'
        "<pre><code>a()</code></pre></div>"
        '<div class="language-ts"><span class="lang">ts</span><pre><code>b()</code></pre></div>'
        "</div></div></div></div></body></html>"
    )
    md = convert_html(html, "https://vp.example/t.html").markdown
    assert md == "# T\n\n**config.js**\n\n```js\na()\n```\n\n**config.ts**\n\n```ts\nb()\n```\n"


def test_docusaurus_generated_index_keeps_its_header_and_cards():
    page = convert_html(
        (PAGES / "docusaurus/category-tutorial-basics.html").read_bytes(),
        "https://d.example/docs/category/tutorial---basics",
    )
    md = page.markdown
    assert page.extractor == "docusaurus"
    assert md.startswith("# Tutorial - Basics\n\n5 minutes to learn the most important Docusaurus concepts.\n")
    # A card is a link around a heading and a paragraph: the link moves onto the heading.
    card = "## [📄️Create a Page](https://d.example/docs/tutorial-basics/create-a-page)\n\nAdd Markdown"
    assert card in md
    assert "[## " not in md
    scores = score_page(
        (PAGES / "docusaurus/category-tutorial-basics.html").read_bytes(),
        "https://d.example/docs/category/tutorial---basics",
        md,
    )
    assert scores["links"].value == 1.0
