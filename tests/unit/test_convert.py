"""convert_html on real vendored pages: the page-level contract other steps rely on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mdcrawl.convert import convert_html

PAGES = Path(__file__).parent.parent / "fixtures" / "pages"
QUICKSTART_URL = "https://requests.readthedocs.io/en/latest/user/quickstart.html"


def page(name: str) -> bytes:
    return (PAGES / name).read_bytes()


@pytest.fixture(scope="module")
def quickstart():
    return convert_html(page("requests/quickstart.html"), QUICKSTART_URL)


def test_page_starts_with_its_own_heading(quickstart):
    assert quickstart.title == "Quickstart"
    assert quickstart.markdown.startswith("# Quickstart\n")
    assert quickstart.extractor == "sphinx" and quickstart.quality == 1.0


def test_chrome_is_gone(quickstart):
    md = quickstart.markdown
    for chrome in ("¶", "Quick search", "Related Topics", "Kenneth Reitz Project", "Previous:"):
        assert chrome not in md


def test_code_is_fenced_with_its_language(quickstart):
    assert "```python\n>>> import requests\n```" in quickstart.markdown


def test_admonition_becomes_labelled_blockquote(quickstart):
    assert re.search(r"^> \*\*Note:\*\* \S", quickstart.markdown, re.MULTILINE)


def test_links_are_absolute(quickstart):
    targets = re.findall(r"\]\(([^)\s]+)", quickstart.markdown)
    assert targets and all(t.startswith(("https://", "http://", "mailto:")) for t in targets)
    assert "https://requests.readthedocs.io/en/latest/user/install.html#install" in targets


def blank_runs_outside_code(markdown: str) -> int:
    """The longest run of blank lines outside fenced code."""
    longest = run = 0
    fence = None
    for line in markdown.split("\n"):
        marker = re.match(r"^(`{3,})", line)
        if marker and (fence is None or marker.group(1) == fence):
            fence = None if fence else marker.group(1)
        run = run + 1 if (not line.strip() and fence is None) else 0
        longest = max(longest, run)
    return longest


def test_whitespace_is_tidy(quickstart):
    assert blank_runs_outside_code(quickstart.markdown) == 1
    assert not re.search(r"[ \t]+$", quickstart.markdown, re.MULTILINE)


def test_description_and_words(quickstart):
    assert quickstart.description == "Eager to get started?"
    prose_tokens = len(quickstart.markdown.split())
    assert 0 < quickstart.words < prose_tokens


def test_conversion_is_deterministic():
    body = page("flask/quickstart.html")
    assert convert_html(body, "https://flask.palletsprojects.com/quickstart.html") == convert_html(
        body, "https://flask.palletsprojects.com/quickstart.html"
    )


def test_nav_is_absolute_unique_and_fragment_free():
    nav = convert_html(page("flask/index.html"), "https://flask.palletsprojects.com/index.html").nav
    assert len(nav) > 5
    assert len(set(nav)) == len(nav)
    assert all(u.startswith("https://flask.palletsprojects.com/") and "#" not in u for u in nav)


def test_mkdocs_nav_keeps_reading_order():
    nav = convert_html(page("mkdocs/index.html"), "https://www.mkdocs.org/index.html").nav
    assert (
        nav.index("https://www.mkdocs.org/getting-started.html")
        < nav.index("https://www.mkdocs.org/user-guide/index.html")
        < nav.index("https://www.mkdocs.org/user-guide/installation.html")
    )


def _latin1_page() -> str:
    html = page("requests/quickstart.html").decode("utf-8")
    html = html.replace("Eager to get started?", "Eager to get started, café?")
    return html.replace('<meta charset="utf-8" />', '<meta charset="iso-8859-1" />')


def test_latin1_page_decoded_from_its_meta_charset():
    body = _latin1_page().encode("latin-1", errors="xmlcharrefreplace")
    assert b"caf\xe9" in body
    assert "Eager to get started, café?" in convert_html(body, QUICKSTART_URL).markdown


def test_http_charset_wins_when_given():
    body = (
        _latin1_page()
        .replace('<meta charset="iso-8859-1" />', "")
        .encode("latin-1", errors="xmlcharrefreplace")
    )
    assert "café" in convert_html(body, QUICKSTART_URL, encoding="latin-1").markdown


def test_utf8_bom_is_honoured():
    body = b"\xef\xbb\xbf" + page("flask/quickstart.html")
    assert convert_html(body, "https://f.example/quickstart.html").title == "Quickstart"


def test_broken_html_still_converts():
    body = page("requests/quickstart.html")
    cut = body[: len(body) // 2]  # mid-document: unclosed tags everywhere
    converted = convert_html(cut, QUICKSTART_URL)
    assert converted.title == "Quickstart"
    assert converted.markdown.count("```python") >= 3
    fences = re.findall(r"^`{3,}", converted.markdown, re.MULTILINE)
    assert len(fences) % 2 == 0


def test_huge_page_converts_completely():
    html = page("requests/quickstart.html").decode("utf-8")
    start, end = (
        html.index('<section id="make-a-request">'),
        html.index('<section id="custom-headers">'),
    )
    huge = html[:start] + html[start:end] * 80 + html[end:]
    assert len(huge) > 1_500_000
    single = convert_html(html, QUICKSTART_URL)
    converted = convert_html(huge, QUICKSTART_URL)
    assert converted.markdown.count("## Make a Request") == 80
    assert converted.words > 30 * single.words / 2


def test_empty_and_garbage_input():
    assert convert_html(b"", "https://x.example/a").markdown.startswith("# ")
    assert convert_html("<<<>>>", "https://x.example/b").markdown.startswith("# ")


def test_structural_and_readability_fallbacks():
    prose = "<p>" + "A sentence about the product that is long enough to matter. " * 20 + "</p>"
    structural = convert_html(
        f"<html><body><nav><a href='/x'>X link</a></nav><main><h1>T</h1>{prose}</main></body></html>",
        "https://x.example/",
    )
    fallback = convert_html(
        f"<html><body><div><div>{prose}</div></div></body></html>", "https://x.example/"
    )
    assert structural.extractor == "structural:main"
    assert fallback.extractor == "readability"
    assert 1.0 > structural.quality > fallback.quality
    assert "X link" not in structural.markdown and "A sentence" in fallback.markdown


def test_redirect_stub_names_its_target():
    html = (
        '<html><head><title>Redirecting...</title><meta http-equiv="refresh" '
        'content="0; url=../dev-guide/plugins.html"></head><body>Redirecting...</body></html>'
    )
    md = convert_html(html, "https://www.mkdocs.org/user-guide/plugins.html").markdown
    assert "https://www.mkdocs.org/dev-guide/plugins.html" in md


def test_lifting_the_h1_over_a_kicker_keeps_code_blank_lines():
    """Sphinx "source code" pages (celery's theme puts a version notice before the h1):
    moving the h1 to the top must not touch the blank lines inside the module's code.
    (The celery theme's rule drops its notice, the "deck": renamed, it stays a kicker.)"""
    html = page("celery/compat-source.html")
    url = "https://celery.docs.example/_modules/billiard/compat.html"
    assert "This document describes" not in convert_html(html, url).markdown
    md = convert_html(html.replace(b'class="deck"', b'class="notice"'), url).markdown
    assert md.startswith("# Source code for billiard.compat\n\nThis document describes")
    assert "UnsupportedOperation)\n\n\nif hasattr(os, 'write'):" in md
    assert "\n\n\n\n" not in md.split("```")[0]  # the seam itself is tidy


def test_heading_lift_seam_is_tidied_but_code_is_verbatim():
    html = (
        "<main><p>Kicker line.</p><h1>Title</h1><pre>a = 1\n\n\n\nb = 2</pre></main>"
    )
    md = convert_html(html, "https://x.example/p.html").markdown
    assert md == "# Title\n\nKicker line.\n\n```\na = 1\n\n\n\nb = 2\n```\n"


def test_title_from_the_pages_opening_when_the_title_tag_adds_the_sites_name():
    """No h1: the first heading names the page when <title> holds it (section number
    aside); a caption line the same; a bracket is never cut at " - "."""
    manual = convert_html(
        "<html><head><title>Build (SBCL Internals)</title></head><body>"
        "<h2>1 Build</h2><p>How to build it.</p></body></html>",
        "https://x.example/Build.html",
    )
    assert manual.title == "1 Build" and manual.markdown.startswith("# 1 Build\n\nHow to")
    index = convert_html(
        "<html><head><title>pkg-1.0: Fast things (Index - J)</title></head><body><main>"
        "<p>Index - J</p><table><tr><td>json</td><td>Data.Json</td></tr></table>"
        "</main></body></html>",
        "https://x.example/doc-index-J.html",
    )
    assert index.title == "Index - J" and index.markdown.startswith("# Index - J\n\njson")
    other = convert_html(
        "<html><head><title>pkg-1.0: Fast things (Index - K)</title></head><body><main>"
        "<p>Entries under K.</p></main></body></html>",
        "https://x.example/doc-index-K.html",
    )
    assert other.title == "pkg-1.0: Fast things (Index - K)"


def test_several_h1s_are_sections_and_the_title_tag_names_the_page():
    page = convert_html(
        "<html><head><title>Data.Aeson.Types</title></head><body><main>"
        "<h1>Core JSON types</h1><p>Values.</p><h1>Conversion</h1><p>Classes.</p>"
        "</main></body></html>",
        "https://x.example/Data-Aeson-Types.html",
    )
    assert page.title == "Data.Aeson.Types"
    assert page.markdown.startswith("# Data.Aeson.Types\n\n# Core JSON types\n")
