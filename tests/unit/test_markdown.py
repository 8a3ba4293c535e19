"""The markdown renderer: code, tables, admonitions, definition lists, images."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mdcrawl import mdwriter
from mdcrawl.convert import convert_html
from mdcrawl.extract import extract_page, parse_html
from mdcrawl.markdown import render_markdown
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

PAGES = Path(__file__).parent.parent / "fixtures" / "pages"


@pytest.fixture(autouse=True, params=["writer", "soup path"])
def renderer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test twice: with the direct writer, and with the soup path it falls back to
    (the writer switched off)."""
    if request.param == "soup path":

        def refuse(region: object) -> None:
            raise mdwriter.Unusual("switched off")

        monkeypatch.setattr(mdwriter, "write_markdown", refuse)


def render(body: str, url: str = "https://x.example/docs/page.html") -> str:
    """Render a fragment the way convert_html does (region = <main>)."""
    root = parse_html(f"<html><body><main>{body}</main></body></html>")
    return render_markdown(extract_page(root, "", url).region).text


def fixture(name: str, url: str) -> str:
    return convert_html((PAGES / name).read_bytes(), url).markdown


def test_code_keeps_whitespace_and_is_not_escaped():
    code = "def f(x):\n    return x * 2  # *not* emphasis_\n\n\n    # after blank lines"
    md = render(
        f'<div class="highlight-python"><div class="highlight"><pre>{code}</pre></div></div>'
    )
    assert f"```python\n{code}\n```" in md


def test_fence_outgrows_backticks_in_the_code():
    md = render('<pre><code class="language-markdown">```py\nprint(1)\n```</code></pre>')
    assert md.startswith("````markdown\n```py\nprint(1)\n```\n````")


def test_languages_from_the_markup_of_real_generators():
    sphinx = fixture("flask/quickstart.html", "https://f.example/quickstart.html")
    mkdocs = fixture("mkdocs/writing-your-docs.html", "https://m.example/w.html")
    rust = fixture("rustdoc/struct.Span.html", "https://d.example/struct.Span.html")
    assert "```python\nfrom flask import Flask" in sphinx  # div.highlight-python wrapper
    assert re.search(r"^```(yaml|yml)$", mkdocs, re.MULTILINE)  # code.language-yaml
    assert "```rust\npub struct Span" in rust  # pre.rust


def test_pygments_line_number_table_keeps_only_code():
    table = highlight("a = 1\nb = 2\n", PythonLexer(), HtmlFormatter(linenos="table"))
    md = render(f'<div class="highlight-python">{table}</div>')
    assert "```python\na = 1\nb = 2\n```" in md
    assert "|" not in md and not re.search(r"^1$", md, re.MULTILINE)


def test_inline_code_in_backticks():
    assert "Call `get()` and `` a`b `` now" in render(
        "<p>Call <code>get()</code> and <code>a`b</code> now</p>"
    )


def test_gfm_table_keeps_every_cell_and_escapes_pipes():
    md = render(
        "<table><thead><tr><th>Name</th><th>Meaning</th></tr></thead><tbody>"
        "<tr><td><code>a|b</code></td><td>one\nline<br>two</td></tr>"
        "<tr><td>c</td><td></td></tr></tbody></table>"
    )
    assert "| Name | Meaning |\n| --- | --- |" in md
    assert r"| `a\|b` | one line two |" in md
    assert "| c |  |" in md


def test_tables_gfm_cannot_hold_stay_html():
    spanned = render(
        '<table><tr><td colspan="2">wide</td></tr><tr><td>a</td><td>b</td></tr></table>'
    )
    listed = render(
        "<table><tr><th>k</th></tr><tr><td><ul><li>x</li><li>y</li></ul></td></tr></table>"
    )
    assert '<td colspan="2">wide</td>' in spanned and "| wide" not in spanned
    assert "<table>" in listed and "<li>x</li>" in listed


def test_real_mkdocs_cli_tables():
    md = fixture("mkdocs/cli.html", "https://www.mkdocs.org/user-guide/cli.html")
    assert "| Name | Type | Description | Default |" in md
    assert "| `-V`, `--version` | boolean | Show the version and exit. | `False` |" in md


def test_sphinx_genindex_layout_table_becomes_lists():
    md = fixture("requests/genindex.html", "https://r.example/genindex.html")
    assert "<table" not in md and "| ---" not in md
    assert (
        "- [AuthBase (class in requests.auth)](https://r.example/api.html#requests.auth.AuthBase)"
        in md
    )


def test_admonitions_become_labelled_blockquotes():
    md = fixture("flask/quickstart.html", "https://f.example/quickstart.html")
    assert re.search(r"^> \*\*Application Discovery Behavior:\*\* As a shortcut", md, re.MULTILINE)
    assert re.search(r"^> \*\*Warning:\*\* ", md, re.MULTILINE)
    heading_first = render(
        '<div class="admonition note"><p class="admonition-title">New</p>'
        "<h5>Sub</h5><p>text</p></div>"
    )
    assert "> **New:**\n>\n> ##### Sub" in heading_first


def test_code_inside_admonition_keeps_the_quote_prefix():
    md = render(
        '<div class="admonition tip"><p>Run:</p><pre class="language-sh">a\n\nb</pre></div>'
    )
    assert "> **Tip:** Run:\n>\n> ```sh\n> a\n>\n> b\n> ```" in md


def test_sphinx_api_signatures_are_readable_code_lines():
    md = fixture("requests/api.html", "https://r.example/api.html")
    assert "\n`requests.request(method, url, **kwargs)`\n" in md
    assert "\n`class requests.Session`\n" in md
    assert "**Parameters**" in md


def test_a_signature_keeps_its_cross_references_as_links_around_its_code():
    md = render(
        '<dl class="py function"><dt class="sig sig-object py" id="m.abbr">'
        '<span class="sig-prename">m.</span><span class="sig-name descname">abbr</span>('
        '<em class="sig-param">S: <a class="reference external" href="https://py.test/str">'
        '<span class="pre">str</span></a></em>) → <a href="https://py.test/str">str</a>'
        '<a class="headerlink" href="#m.abbr">¶</a></dt><dd><p>Abbreviate.</p></dd></dl>'
    )
    link = "[`str`](https://py.test/str)"
    assert md.startswith(f"`m.abbr(S: `{link}`) → `{link}\n")


def test_plain_definition_list_keeps_term_and_definition():
    md = render("<dl><dt>Term</dt><dd><p>Meaning of it.</p></dd></dl>")
    assert "**Term**\n\nMeaning of it." in md


def test_images_keep_alt_and_absolute_url():
    md = render('<p><img src="../img/logo.png" alt="The logo"></p>')
    assert "![The logo](https://x.example/img/logo.png)" in md


def test_headings_are_atx():
    md = render("<h2>Setup</h2><p>x</p><h3>More <em>detail</em></h3>")
    assert "## Setup" in md and "### More *detail*" in md and "---" not in md


def _soup_shape(soup) -> list[tuple]:
    """Every node in document order with its class, name/text, attributes and links."""
    from bs4 import Tag

    nodes, node = [], soup.contents[0] if soup.contents else None
    while node is not None:
        nodes.append(node)
        node = node.next_element
    index = {id(n): i for i, n in enumerate(nodes)}
    links = ("parent", "previous_sibling", "next_sibling", "previous_element")
    return [
        (
            type(n).__name__,
            n.name if isinstance(n, Tag) else str(n),
            dict(n.attrs) if isinstance(n, Tag) else None,
            n.can_be_empty_element if isinstance(n, Tag) else None,
            tuple(index.get(id(getattr(n, link)), -1) for link in links),
        )
        for n in nodes
    ]


def test_soup_built_from_lxml_is_the_round_trip_soup():
    """The direct build must give markdownify the tree a serialise-and-parse gives it."""
    import lxml.html
    from bs4 import BeautifulSoup
    from mdcrawl.soupbuild import soup_from_lxml

    body = """<main>
      <h1>Title</h1>  <p>Text <b>bold</b> <a href="https://x.example/a b/à.html">link</a><br>
      after</p>
      <pre>

  indented
    </pre>
      <ruby>漢<rt>kan</rt></ruby><img src="https://x.example/i mg.png" alt="i">
      <table><tr><td> </td><td>cell</td></tr></table>\t
    </main> tail text"""
    for tag in ("main", "body"):
        root = parse_html(f"<html><body>{body}</body></html>")
        region = root.find(".//main") if tag == "main" else root.find("body")
        reference = BeautifulSoup(
            lxml.html.tostring(region, encoding="unicode"), "lxml", multi_valued_attributes=None
        )
        assert _soup_shape(soup_from_lxml(region)) == _soup_shape(reference)


def test_a_script_control_drawn_as_a_glyph_goes_and_a_script_link_keeps_its_words() -> None:
    html = (
        '<div><p>Fold <a href="javascript:void(0)">[−]</a></p>'
        '<p><a href="javascript:show()">Show all</a></p></div>'
    )
    text = render(html)
    assert "[−]" not in text and "Show all" in text and "javascript" not in text


def test_a_bulleted_list_of_sections_is_sections_and_a_numbered_one_keeps_numbers() -> None:
    sections = (
        '<ul class="members"><li><section><h2>Field Summary</h2><p>The fields.</p></section>'
        "</li><li><section><h2>Method Summary</h2><p>The methods.</p></section></li></ul>"
    )
    text = render(sections + "<ul><li>a plain bullet</li></ul><ol><li><h3>Install</h3></li></ol>")
    assert "## Field Summary\n" in text and "\n## Method Summary\n" in text
    assert "- ## " not in text and "- a plain bullet" in text and "1. ### Install" in text


def test_a_bracketed_link_inside_code_is_an_annotation_and_code_links_stay() -> None:
    html = (
        '<pre><a class="back" href="api.html#f">[docs]</a>def f(x: '
        '<a href="str.html">str</a>): pass</pre>'
    )
    text = render(html)
    assert "def f(x: str): pass" in text and "[docs]" not in text


def test_inline_code_that_is_a_link_stays_a_link() -> None:
    md = render('<p>A server (<code><a href="api.html#Server">Server</a></code>) and <code>x</code>.</p>')
    assert "A server ([`Server`](https://x.example/docs/api.html#Server)) and `x`." in md


def test_ordered_items_are_numbered_from_start_past_text_and_nested_lists() -> None:
    body = (
        "<ol start='7'><li>seven</li> text <li>eight<ol><li>inner one</li><li>inner two"
        "</li></ol></li><li>nine</li></ol><ol start='x'><li>one</li><div>aside</div><li>two</li></ol>"
    )
    lines = [line.strip() for line in render(body).splitlines() if line.strip()]
    assert lines[0] == "7. seven"
    assert lines[1].endswith("8. eight") and "9. nine" in lines  # text only beside it
    assert lines.index("1. inner one") + 1 == lines.index("2. inner two")
    assert lines[-3:] == ["1. one", "aside", "2. two"]  # the div is no item


def test_a_long_ordered_list_costs_time_in_proportion_to_its_items() -> None:
    """An item's number is counted once per list: counted back from each item (as
    markdownify does), 40,000 items took minutes. The bound is 50 x what it takes."""
    import time

    count = 40_000
    started = time.process_time()
    text = render("<ol>" + "<li>x</li>" * count + "</ol>")
    assert time.process_time() - started < 30
    assert text.rstrip().endswith(f"{count}. x")


def test_prefix_lines_is_markdownify_s_per_line_substitution():
    """``prefix_lines`` (a list item's indent, a blockquote's "> ") writes what
    markdownify's ``re_line_with_content`` substitution writes, on seeded strings of
    newlines, carriage returns, blanks and text (empty lines, a final newline, runs)."""
    import random

    from markdownify import re_line_with_content
    from mdcrawl.markdown import prefix_lines

    rng = random.Random(13)
    alphabet = ["\n", "\n", "\r", " ", "\t", "a", "b", "\u2028", "\x0c", "> "]
    texts = ["", "\n", "\n\n", "a", "a\n", "\na", " \n \n"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(3000)]
    for prefix, empty in (("  ", ""), ("> ", ">"), ("", "x")):
        for text in texts:
            expected = re_line_with_content.sub(
                lambda m, p=prefix, e=empty: p + m.group(1) if m.group(1) else e, text
            )
            assert prefix_lines(text, prefix, empty) == expected, repr(text)


def test_placeholders_are_found_where_the_pattern_finds_them():
    """``_sub_placeholders`` tries the placeholder pattern only on lines holding its
    \\x02: on seeded strings of placeholders, prefixes, digits, blanks and newlines it
    gives what ``_PLACEHOLDER.sub`` gives."""
    import random

    from mdcrawl import markdown as md

    rng = random.Random(14)
    alphabet = ["\n", "\x02", "\x03", "1", "0", " ", "\t", "> ", "- ", "a", "\x020\x03", "\x0212\x03"]
    texts = ["", "\x02", "\x020\x03", "> \x020\x03", "\x020\x03 x\n\x021\x03", "\x020\x03\n"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(5000)]

    def tag(match: re.Match[str]) -> str:
        return f"<{match.group(1)}|{match.group(2)}>"

    matched = 0
    for text in texts:
        assert md._sub_placeholders(text, tag) == md._PLACEHOLDER.sub(tag, text), repr(text)
        matched += md._PLACEHOLDER.search(text) is not None
    assert matched > 500
