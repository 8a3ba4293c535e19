"""Tables (listings, layout, data), headings without permalinks, ids mapped to headings."""

from __future__ import annotations

from mdcrawl.extract import extract_page, parse_html
from mdcrawl.markdown import Markdown, render_markdown


def render(body: str, url: str = "https://x.example/docs/page.html") -> Markdown:
    root = parse_html(f"<html><body><main>{body}</main></body></html>")
    return render_markdown(extract_page(root, "", url).region)


def test_a_line_numbered_listing_becomes_one_fence_without_numbers():
    md = render(
        "<h1>T</h1><div class='highlight-c'><table class='listing_frame'><tbody><tr>"
        "<td class='listing_lines' align='right'><pre>1\n2\n3</pre></td>"
        "<td class='listing_code'><pre class='programlisting'><span class='n'>int</span> a;\n"
        "<span class='n'>int</span> b;\nreturn;</pre></td></tr></tbody></table></div>"
    ).text
    assert "```c\nint a;\nint b;\nreturn;\n```" in md
    assert "<" not in md and "1\n2\n3" not in md


def test_a_table_of_numbers_beside_text_is_data_not_a_listing():
    md = render(
        "<table><tr><th>n</th><th>name</th></tr><tr><td>1</td><td>one</td></tr>"
        "<tr><td>2</td><td>two</td></tr></table>"
    ).text
    assert "| n | name |\n| --- | --- |\n| 1 | one |\n| 2 | two |" in md


def test_a_navigation_row_is_a_line_of_links_not_a_table():
    md = render(
        "<h1>T</h1><table class='navigation'><tr><td><a href='#top'>Top</a> | "
        "<a href='#d'>Description</a></td><td><a href='index.html'><img alt='Home' src='h.png'>"
        "</a></td><td><a href='up.html'>Up</a></td><td><a href='next.html'>Next</a></td></tr></table>"
    ).text
    assert "| --- |" not in md
    line = next(x for x in md.splitlines() if "Top" in x)
    assert "[Up](https://x.example/docs/up.html)" in line and "Next" in line


def test_a_title_block_and_a_single_column_table_flatten_to_blocks():
    md = render(
        "<table width='100%'><tr><td><h2>Arrays</h2><p>Arrays — grow as needed</p></td>"
        "<td></td></tr></table><table><tr><td>first</td></tr><tr><td>second</td></tr></table>"
    ).text
    assert md == "## Arrays\n\nArrays — grow as needed\n\nfirst\n\nsecond"


def test_a_term_beside_blocks_becomes_a_definition():
    md = render(
        "<table><tr><th>Parameters:</th><td><ul><li>a – first</li><li>b – second</li></ul></td></tr>"
        "<tr><th>Returns:</th><td><p>the sum</p><p>or None</p></td></tr></table>"
    ).text
    assert md.startswith("**Parameters:**\n\n- a – first\n- b – second\n\n**Returns:**\n\nthe sum")


def test_raw_html_keeps_structure_only():
    md = render(
        "<table style='x' class='y'><tr><th colspan='2' bgcolor='red'>Head</th></tr>"
        "<tr><td><span class='k'>kw</span> <a href='file:///usr/share/x.html'>local</a></td>"
        "<td align='left'><a href='javascript:go()'>run</a> <a href='b.html'>ok</a></td></tr></table>"
    ).text
    assert md.startswith("<table><tr><th colspan=\"2\">Head</th></tr>")
    for gone in ("style", "class", "bgcolor", "align", "<span", "file:", "javascript:"):
        assert gone not in md
    assert '<a href="https://x.example/docs/b.html">ok</a>' in md and "local" in md


def test_unsafe_links_keep_their_text_and_lose_the_link():
    md = render(
        "<p><a href='file:///etc/x.html'>local</a>, <a href='javascript:void(0)'>script</a>, "
        "<a href='data:text/html,hi'>inline</a>, <a href='a.html'>fine</a></p>"
    ).text
    assert md == "local, script, inline, [fine](https://x.example/docs/a.html)"


def test_angle_brackets_in_prose_stay_text():
    md = render("<p>Returns: <a href='t.html'>&lt;string&gt;</a> or &lt;name&gt; if 1 &lt; 2</p>")
    assert md.text == r"Returns: [\<string>](https://x.example/docs/t.html) or \<name> if 1 < 2"


def test_permalink_glyphs_never_survive_in_headings():
    md = render(
        "<h1>Guide</h1>"
        "<h2>File system<span><a class='mark' href='#fs' id='fs'>#</a></span></h2>"
        "<h2 id='install'>Install <a href='https://x.example/docs/page.html#install'>¶</a></h2>"
        "<h2>Usage <a class='anchor' href='#usage'><svg></svg></a></h2>"
        "<h2>Setup §</h2><h2>C#</h2>"
    )
    headings = [line for line in md.text.splitlines() if line.startswith("#")]
    assert headings == ["# Guide", "## File system", "## Install", "## Usage", "## Setup", "## C#"]
    assert md.anchors["fs"] == ("File system", 0) and md.anchors["install"] == ("Install", 0)


def test_each_id_maps_to_the_heading_that_holds_it():
    md = render(
        "<p id='intro'>Before any heading.</p><h1>Guide</h1>"
        "<section id='s-one'><h2>One</h2><p>Text <span id='term'>here</span>.</p>"
        "<pre id='code'>x = 1</pre><a name='empty'></a><p>after</p></section>"
        "<div class='section' id='s-two'>\n<h2>Two</h2><dl><dt id='api.f'>f()</dt><dd>does</dd></dl>"
        "<table><tr><th>a</th><th>b</th></tr><tr><td id='cell'>1</td><td>2</td></tr></table></div>"
        "<h2>One</h2><p id='again'>repeated heading</p>"
    )
    one, two = ("One", 0), ("Two", 0)
    assert md.anchors == {
        "intro": ("", 0),  # above every heading: the page's top
        "s-one": one,
        "term": one,
        "code": one,
        "empty": one,
        "s-two": two,
        "api.f": two,
        "cell": two,
        "again": ("One", 1),  # the second heading of that text
    }
    assert "\ue000" not in md.text and "\ue001" not in md.text
    assert "Text here.\n\n```\nx = 1\n```\n\nafter" in md.text


def test_a_generic_type_split_by_links_stays_text():
    """"<E extends <a>Throwable</a>>": the "<" and its ">" are in different texts."""
    md = render("<p>interface Failable&lt;E extends <a href='t.html'>Throwable</a>&gt;</p>").text
    assert md == r"interface Failable\<E extends [Throwable](https://x.example/docs/t.html)>"


def test_permalink_glyphs_beside_signatures_go_and_their_ids_stay():
    md = render(
        "<h1>M</h1><p class='src'><a id='v:f'>f</a> :: Int <a href='#v:f'>#</a></p>"
        "<dl><dt id='g'>g(x)<a class='link' href='#g'>¶</a></dt><dd>Does g.</dd></dl>"
        "<p>See <a href='#v:f'>f</a>, a <a href='#g'>link</a>.</p>"
    )
    assert "[#]" not in md.text and "¶" not in md.text
    page = "https://x.example/docs/page.html"
    assert f"See [f]({page}#v:f), a [link]({page}#g)." in md.text  # words, not glyphs
    assert md.anchors["v:f"] == ("M", 0) and md.anchors["g"] == ("M", 0)


def test_a_source_link_beside_every_item_goes_but_one_in_a_sentence_stays():
    items = "".join(
        f"<h3 id='f{k}'>f{k}()</h3><p>1.0.{k} · <a href='src/lib.rs.html#{k}'>source</a></p>"
        f"<p class='src'>g{k} :: Int <a href='src/M.html#g{k}'>[Source]</a></p>"
        for k in range(3)
    )
    method = "<h4>fn <a href='https://x.example/trait.Error.html#method.source'>source</a>()</h4>"
    md = render(f"<h1>M</h1>{items}{method}").text
    named = "fn [source](https://x.example/trait.Error.html#method.source)()"
    assert named in md and "source" not in md.replace(named, "").lower()
    assert "1.0.2\n" in md + "\n" and "·" not in md  # the separator went with the link
    prose = render("<p>Read the <a href='https://git.example/x'>source</a> for more.</p>").text
    assert prose == "Read the [source](https://git.example/x) for more."


def test_a_column_of_source_links_is_data():
    rows = "".join(
        f"<tr><td>lib{k}</td><td><a href='https://git.example/{k}'>Source</a></td></tr>"
        for k in range(3)
    )
    md = render(f"<table><tr><th>name</th><th>code</th></tr>{rows}</table>").text
    assert md.count("[Source](https://git.example/") == 3


def test_a_heading_wrapped_in_a_link_to_itself_is_a_heading():
    md = render(
        "<h1>M</h1><a href='#g:1' id='g:1'><h2>Core types</h2></a><p>Text.</p>"
        "<p><a href='#g:1'>up</a></p>"
    )
    assert "## Core types\n" in md.text
    assert md.anchors["g:1"] == ("Core types", 0)
