"""The direct lxml -> markdown writer (``mdwriter``) writes exactly what the soup path
(BeautifulSoup + DocsConverter) writes, and leaves what it cannot reproduce to it."""

from __future__ import annotations

import random

import lxml.html
import pytest
from mdcrawl import mdwriter
from mdcrawl.extract import extract_page, parse_html
from mdcrawl.markdown import convert_soup_path, prepare_region, render_markdown
from mdcrawl.mdwriter import Unusual, write_markdown

URL = "https://x.example/docs/page.html"


def region_of(body: str):  # noqa: ANN201
    root = parse_html(f"<html><body><main>{body}</main></body></html>")
    region = extract_page(root, "", URL).region
    prepare_region(region)
    return region


FRAGMENTS = {
    "paragraphs": "<h1>Title</h1><p>Some  text\n with\twhite   space</p>\n<p>Second *star* a<b</p>",
    "inline": "<p><b> bold </b><strong></strong><em>em</em> <i>i</i> <del>d</del> <s>s</s>"
    " H<sub>2</sub>O x<sup>2</sup> <q>quoted</q> <kbd>Ctrl</kbd>+<samp>out</samp></p>",
    "code spans": "<p>Call <code>get()</code>, <code>a`b</code> and <code> x </code>.</p>",
    "links": '<p><a href="https://x.example/a b/ä">spaced</a> <a href="https://e.x/">'
    'https://e.x/</a> <a href="https://e.x/t" title=\'say "hi"\'>titled</a>'
    ' <a href="javascript:void(0)">run it</a> <a href="javascript:x()">[−]</a>'
    ' <a href="">empty</a> <a>bare</a></p>',
    "images": '<p><img src="https://x.example/i.png" alt="pic" title="T"></p>'
    '<h2>Head <img src="a.png" alt="inline"></h2><p><img src="data:image/png;base64,AA"'
    ' alt="  data  pic "></p>',
    "lists": "<ul><li>one</li><li><p>two</p><ul><li>nested</li></ul></li>\n<li></li></ul>"
    '<ol start="7"><li>seven</li>\n<li>eight<ol><li>inner</li></ol></li></ol><ol start="x">'
    "<li>a</li></ol>text after<ul><li>x</li></ul><ol><li>y</li></ol>",
    "list in list item with code": "<ul><li>step<pre>code\n  here</pre>after</li></ul>",
    "blockquotes": "<blockquote><p>quoted</p><p>twice</p></blockquote><blockquote>\n</blockquote>"
    '<div class="admonition note"><p class="admonition-title">Note</p><p>Take care.</p></div>'
    '<div class="admonition warning"><p class="admonition-title">Warning</p><ul><li>a</li>'
    "</ul></div>",
    "code blocks": '<div class="highlight-python"><div class="highlight"><pre>x = 1\n\n'
    "y = 2</pre></div></div><pre><code>```md\nfence\n```</code></pre><pre>  </pre>",
    "definitions": "<dl><dt>term <em>one</em></dt><dd>meaning</dd><dt>**bold**</dt><dd>\n</dd>"
    "<dt></dt></dl>",
    "signatures": '<dl class="py function"><dt class="sig sig-object py" id="f">'
    '<span class="sig-name">f</span>(<em>x</em>: <a href="https://x.example/int">int</a>)'
    '<a class="headerlink" href="#f">¶</a></dt><dd><p>Does f.</p></dd></dl>',
    "code holding links": '<p>Returns <code><a href="https://x.example/Option">Option</a>'
    '&lt;<a href="https://x.example/T">T</a>&gt;</code> or <code><a href="#x">x</a></code>'
    ' <code>plain</code></p>',
    "tables": "<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1 | 2</td>"
    '<td><a href="https://x.example/">x</a></td></tr></tbody></table><table><tr>'
    "<td>nav</td><td>bar</td></tr></table><table><tr><th>h</th><th>i</th></tr><tr>"
    '<td colspan="2">span<br>two</td></tr></table>',
    "data table with caption": "<table><caption>Cap <b>x</b></caption><tr><th>a</th>"
    "<th>b</th></tr><tr><td> </td><td>\n</td></tr><tr><td><img src='i.png' alt='i'> img</td>"
    "<td><code>c|d</code> and *e*</td></tr><tr><td>only</td></tr></table>",
    "layout tables": "<table><tr><td><ul><li>a</li></ul></td><td>b</td></tr><tr><td>c</td>"
    "<td>d</td></tr></table><table><tr><td>Term</td><td><p>one</p><p>two</p></td></tr>"
    "<tr><td>x</td><td>y</td></tr></table>",
    "layout table in a heading": "<h2>T<div><table><tr><td><img src='a.png' alt='A'></td>"
    "<td><ul><li>l</li></ul><img src='b.png' alt='B'></td></tr><tr><td>x</td><td>y</td></tr>"
    "</table></div></h2><h2>T<table><tr><td><img src='a.png' alt='A'></td><td>"
    "<ol start='3'><li>l</li></ol><img src='b.png' alt='B'></td></tr><tr><td>x</td></tr>"
    "</table></h2><table><tr><td>1</td></tr><tr><td><pre>p</pre></td></tr></table>",
    "table kept as html": "<table><thead><tr><th>h</th></tr></thead><tbody><tr><td>"
    "<pre>code\n\nblank</pre></td></tr></tbody></table>",
    "breaks and rules": "<p>one<br>two<br/>three</p><hr><h3>a<br>b</h3>",
    "containers": "<section><header>Head</header><article>Art</article><aside>Side</aside>"
    "<figure><img src='f.png' alt='f'><figcaption> Cap </figcaption></figure><details>"
    "<summary>More</summary>hidden</details><center>c</center><custom-el>custom</custom-el>"
    "<span> spaced </span></section>",
    "unicode whitespace": "<p>\xa0</p><p>a\xa0<span>\xa0</span> b</p><div>\u2003<p>x</p>\u2003</div>",
    "text at the edges": "loose text <p>para</p> more loose <div>block</div>",
    "headings": "<h1>  One\n two </h1><h4><a href='https://x.example/'>linked</a></h4>"
    "<h6>six</h6><p>#not heading</p>",
}


@pytest.mark.parametrize("name", sorted(FRAGMENTS))
def test_writer_writes_what_the_soup_path_writes(name: str) -> None:
    region = region_of(FRAGMENTS[name])
    written = write_markdown(region)  # raises if the writer would fall back
    assert written == convert_soup_path(region)
    assert written[0].strip()


def _soup_only(monkeypatch: pytest.MonkeyPatch, html: str) -> str:
    """render_markdown of the fragment with the writer switched off."""

    def refuse(region: object) -> None:
        raise Unusual("switched off")

    with monkeypatch.context() as patch:
        patch.setattr(mdwriter, "write_markdown", refuse)
        return render_markdown(lxml.html.fragment_fromstring(html)).text


def test_comments_and_unported_tags_take_the_soup_path(monkeypatch: pytest.MonkeyPatch) -> None:
    for html in (
        "<div><p>a</p><!-- a comment --><p>b</p></div>",
        "<div><p>a</p><video src='v.mp4'>v</video></div>",
        "<div><table><tr><td>x</td></tr></table><?pi x?></div>",
        "<div><p>a</p><script>var x = '<b>';</script><pre>b<style>p {}</style></pre></div>",
        "<div><pre>x<ruby>y<rt>z</rt></ruby></pre></div>",
    ):
        with pytest.raises(Unusual):
            write_markdown(lxml.html.fragment_fromstring(html))
        rendered = render_markdown(lxml.html.fragment_fromstring(html)).text
        assert rendered == _soup_only(monkeypatch, html)
        assert rendered.strip("`\n")[0] in "ax"


def test_a_very_deep_tree_takes_the_soup_path() -> None:
    region = lxml.html.fragment_fromstring("<div>" + "<span>" * 160 + "deep</div>")
    with pytest.raises(Unusual):
        write_markdown(region)
    assert render_markdown(region).text == "deep"


def test_render_markdown_is_the_writers_output() -> None:
    md = render_markdown(region_of(FRAGMENTS["lists"])).text
    assert md.startswith("- one\n- two\n\n  - nested")
    assert "7. seven\n8. eight\n   1. inner" in md


# Random fragments: markup, whitespace and characters markdown escapes, nested at random.
_FUZZ_TAGS = ["p", "div", "span", "a", "code", "em", "strong", "b", "i", "ul", "ol", "li", "dl", "dt", "dd", "h2", "h3", "blockquote", "pre", "table", "tr", "td", "th", "thead", "tbody", "caption", "br", "hr", "img", "kbd", "sub", "sup", "q", "section", "figure", "figcaption", "details", "summary", "del", "samp", "custom-x", "small", "center", "article", "aside"]
_FUZZ_TEXTS = [" ", "\n", "  \n ", "word", " two words ", "a*b", "x&lt;y", "&lt;tag&gt;", "_u_",
               "\xa0", "1. item", "# hash", "`tick`", "tab\there", "|pipe|", "line\nbreak", "¶",
               "  lead", "trail  ", "http://e.x/"]  # fmt: skip
_FUZZ_ATTRS = {
    "a": ['href="http://e.x/p"', 'href="http://e.x/ä b"', 'href="javascript:x()"', 'href=""',
          'href="#frag"', 'href="http://e.x/" title="t"', ""],
    "img": ['src="http://e.x/i.png" alt="alt"', 'src="data:image/png;base64,AA" alt=" a  b "',
            'src="i m.png"'],
    "ol": ['start="3"', 'start="x"', ""],
    "td": ['colspan="2"', "", "", ""],
    "pre": ['class="language-py"', ""],
    "dt": ['class="sig sig-object"', ""],
    "div": ['class="admonition note"', "", "", ""],
}  # fmt: skip


def _random_fragment(rnd: random.Random, depth: int = 0) -> str:
    out = []
    for _ in range(rnd.randint(0, 4)):
        if rnd.random() < 0.4 or depth > 5:
            out.append(rnd.choice(_FUZZ_TEXTS))
            continue
        tag = rnd.choice(_FUZZ_TAGS)
        attrs = rnd.choice(_FUZZ_ATTRS.get(tag, [""]))
        start = f"<{tag} {attrs}>" if attrs else f"<{tag}>"
        inner = "" if tag in ("br", "hr", "img") else _random_fragment(rnd, depth + 1) + f"</{tag}>"
        out.append(start + inner)
    return "".join(out)


def test_writer_matches_the_soup_path_on_random_fragments() -> None:
    written = 0
    for seed in range(1000):
        html = "<div>" + _random_fragment(random.Random(seed)) + "</div>"
        region = lxml.html.fragment_fromstring(html)
        prepare_region(region)
        try:
            mine = write_markdown(region)
        except Unusual:  # mostly a <tr> outside any table, which a page's parse never keeps
            continue
        written += 1
        assert mine == convert_soup_path(region), html
    assert written > 700


def test_a_whole_body_as_the_region() -> None:
    for html in (
        "<html><body><p>a</p> text <ul><li>b</li></ul></body>\n</html>",
        "<html><body>loose <b>bold</b></body></html>",
    ):
        region = parse_html(html).find("body")
        prepare_region(region)
        assert write_markdown(region) == convert_soup_path(region)


def test_newlines_collapse_as_markdownify_s_pattern_collapses_them():
    """``_newlines_collapsed`` skips the pattern where every line break stands alone:
    on seeded strings of line breaks, carriage returns, blanks and text it gives what
    ``re_newline_whitespace.sub`` gives."""
    import random

    from markdownify import re_newline_whitespace
    from mdcrawl.mdwriter import _newlines_collapsed

    rng = random.Random(15)
    alphabet = ["\n", "\n", "\r", " ", "\t", "a", "b", "\x0c", "\xa0", "\u2028"]
    texts = ["a\nb", "\n", "a\n\nb", "a \nb", "a\n b", "a\r\nb", "a\t\nb", "a\n\tb"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10))) for _ in range(5000)]
    skipped = 0
    for text in texts:
        expected = re_newline_whitespace.sub("\n", text)
        assert _newlines_collapsed(text) == expected, repr(text)
        skipped += "\n" in text and _newlines_collapsed(text) is text
    assert skipped > 100
