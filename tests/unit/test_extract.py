"""Generator detection, region choice, pruning and nav, on vendored real pages."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urljoin

import lxml.html
import pytest
from mdcrawl import selectors as sel
from mdcrawl.extract import (
    SelectorSet,
    detect_generator,
    extract_page,
    page_base_url,
    parse_html,
    select,
)

PAGES = Path(__file__).parent.parent / "fixtures" / "pages"


def load(name: str):
    html = (PAGES / name).read_text(encoding="utf-8")
    return parse_html(html), html


@pytest.mark.parametrize(
    ("name", "generator"),
    [
        ("requests/quickstart.html", "sphinx"),
        ("flask/quickstart.html", "sphinx"),
        ("mkdocs/cli.html", "mkdocs"),
        ("rustdoc/struct.Span.html", "rustdoc"),
        ("rustdoc/detection.rs.html", "rustdoc"),
    ],
)
def test_generator_detected(name, generator):
    root, _ = load(name)
    rule = detect_generator(root)
    assert rule is not None and rule.name == generator


def test_region_excludes_sidebar_and_footer():
    root, html = load("requests/quickstart.html")
    extraction = extract_page(root, html, "https://r.example/user/quickstart.html")
    text = extraction.region.text_content()
    assert "Make a Request" in text
    assert "Quick search" not in text and "Kenneth Reitz Project" not in text
    assert not select(extraction.region, "a.headerlink")


def test_rustdoc_source_links_and_anchors_are_dropped():
    root, html = load("rustdoc/struct.Span.html")
    region = extract_page(root, html, "https://docs.rs/proc-macro2/struct.Span.html").region
    assert not select(region, "a.srclink") and not select(region, "a.anchor")
    assert "Struct proc_macro2::Span" in " ".join(region.find(".//h1").text_content().split())


def test_rustdoc_line_number_gutter_is_dropped():
    root, html = load("rustdoc/detection.rs.html")
    region = extract_page(root, html, "https://docs.rs/src/proc_macro2/detection.rs.html").region
    pres = list(region.iter("pre"))
    assert len(pres) == 1 and pres[0].text_content().lstrip().startswith("use core::")


def test_links_resolved_against_base_href():
    root = parse_html(
        '<html><head><base href="/docs/v2/"></head><body><main>'
        '<p><a href="guide.html">guide</a> <img src="img/a.png" alt="A"></p>'
        "</main></body></html>"
    )
    assert page_base_url(root, "https://x.example/index.html") == "https://x.example/docs/v2/"
    region = extract_page(root, "", "https://x.example/index.html").region
    assert region.find(".//a").get("href") == "https://x.example/docs/v2/guide.html"
    assert region.find(".//img").get("src") == "https://x.example/docs/v2/img/a.png"


def test_selector_set_agrees_with_cssselect():
    """The one-pass matcher must find exactly what lxml.cssselect finds."""
    for name in (
        "requests/quickstart.html",
        "mkdocs/writing-your-docs.html",
        "rustdoc/struct.Span.html",
    ):
        root, _ = load(name)
        drops = sel.COMMON_DROP + tuple(d for rule in sel.GENERATORS for d in rule.drop)
        fast = set(SelectorSet(drops).find(root))
        slow = {el for css in drops for el in select(root, css)}
        assert fast == slow and fast


def test_every_marker_and_drop_is_a_simple_compound():
    selectors = [s for rule in sel.GENERATORS for s in rule.markers + rule.drop]
    assert not SelectorSet(tuple(selectors) + sel.COMMON_DROP).complex


def test_nav_from_the_index_toctree_in_document_order():
    root, html = load("flask/index.html")
    anchors = [a.get("href") for a in select(root, ".toctree-wrapper a.reference.internal")]
    nav = extract_page(root, html, "https://flask.example/index.html").nav
    expected = list(dict.fromkeys(f"https://flask.example/{h.split('#')[0]}" for h in anchors))
    assert list(nav) == expected and len(nav) > 20


def test_nav_skips_a_sidebar_that_only_lists_this_page():
    root, html = load("requests/quickstart.html")
    nav = extract_page(root, html, "https://r.example/user/quickstart.html").nav
    assert nav != ("https://r.example/user/quickstart.html",)
    assert "https://r.example/genindex.html" not in nav  # the "related" bar is not nav


def test_without_rules_a_page_naming_its_neighbours_is_ordered_by_them():
    """Rules off, Sphinx's "related" bar (role=navigation: index, modules, next,
    previous) is no site navigation; the page's <link rel=prev/next> chain is."""
    root, html = load("requests/quickstart.html")
    url = "https://r.example/user/quickstart.html"
    nav = extract_page(root, html, url, generator_rules=False).nav
    prev, nxt = (
        urljoin(url, root.xpath(f"//head/link[@rel='{rel}']/@href")[0]) for rel in ("prev", "next")
    )
    assert nav == (prev, url, nxt)


def test_djangodocs_theme_region_is_the_yui_main_column():
    """The djangodocs Sphinx theme has no div.body: its YUI main column is the content
    (readability, the fallback, kept a third of the code blocks and headings)."""
    html = """<html><head><link rel="index" href="genindex.html"></head><body>
    <div class="document"><div id="custom-doc" class="yui-t6">
      <div id="hd"><h1><a href="index.html">Django documentation</a></h1></div>
      <div id="bd"><div id="yui-main"><div class="yui-b"><div class="yui-g" id="ref-x">
        <div class="section"><h1>QuerySet API</h1><p>Body text.</p>
        <div class="highlight-default notranslate"><div class="highlight"><pre>qs.all()</pre></div></div>
        </div></div></div></div>
        <div class="yui-b" id="sidebar"><div class="sphinxsidebar" role="navigation">
          <h3>Table of Contents</h3><ul><li><a href="a.html">A</a></li></ul></div></div>
      </div>
      <div id="ft">footer text</div>
    </div></div></body></html>"""
    extraction = extract_page(parse_html(html), html, "https://d.example/ref/x.html")
    assert extraction.extractor == "sphinx"
    text = extraction.region.text_content()
    assert "QuerySet API" in text and "qs.all()" in text
    assert "Table of Contents" not in text and "footer text" not in text
    assert "Django documentation" not in text


def test_no_character_but_ascii_capitals_lowercases_into_an_affordance_label():
    """The affordance prefilter (``_short_source_links``) lower-cases "SRCOUE" alone: that
    finds every "src"/"source" Python's lower() finds only if no other character
    lower-cases to one of those letters."""
    import sys

    from mdcrawl.extract import _AFFORDANCE_LETTERS

    letters = _AFFORDANCE_LETTERS.lower()
    others = [
        c for c in map(chr, range(sys.maxunicode + 1))
        if c not in _AFFORDANCE_LETTERS and any(x in c.lower() for x in letters) and c not in letters
    ]
    assert others == []


def test_repeated_source_links_go_whatever_their_case():
    """The prefilter must keep "SOURCE", "[Src]" and "View Source" links for the test."""
    region_html = (
        "<html><body><main>"
        '<p>fn a() <a href="s1.html">SOURCE</a></p><p>fn b() <a href="s2.html">[Src]</a></p>'
        '<p>fn c() <a href="s3.html">View Source</a></p>'
        '<p>fn d() <a href="s4.html">sourcE</a></p></main></body></html>'
    )
    root = parse_html(region_html)
    region = extract_page(root, region_html, "https://x.example/a.html").region
    assert region.findall(".//a") == [] and "fn d()" in region.text_content()


def test_selector_set_scan_reads_ids_and_attributes_beside_any_class():
    """The scan rejects most elements on their class: an element matched by its tag, id
    or an attribute must still be found when its class names nothing a selector wants."""
    root = parse_html(
        "<html><body><main>"
        '<div class="plain" id="cookie-banner">a</div><div class="plain" role="search">b</div>'
        '<div class="plain" aria-label="breadcrumbs">c</div><nav class="plain">d</nav>'
        '<p class="skip-link extra">e</p><p class="skip-linked">f</p><p id="searchbox">g</p>'
        "</main></body></html>"
    )
    fast = SelectorSet(sel.COMMON_DROP).find(root)
    slow = [el for el in root.iter() if any(el in select(root, css) for css in sel.COMMON_DROP)]
    assert fast == slow and [el.text for el in fast] == ["a", "b", "c", "d", "e", "g"]


def test_text_of_and_has_text_read_what_text_content_reads():
    from mdcrawl.extract import has_text, text_of

    root = parse_html(
        "<html><body><div>"
        '<a href="#a">¶</a><a href="#b"><span>§</span> x</a><a href="#c"></a>'
        "<a>a<!-- c -->b</a><p>\u00a0<b> </b>\u2003</p><p>\u00a0<b> y</b></p><p><!-- only --></p>"
        "</div></body></html>"
    )
    elements = [el for el in root.iter() if isinstance(el.tag, str)]
    assert len(elements) > 10
    for element in elements:
        assert text_of(element) == element.text_content()
        assert has_text(element) == bool(element.text_content().strip())


_RUSTDOC_PAGE = (
    '<html><body class="rustdoc"><nav class="sidebar"><div class="sidebar-elems">'
    '<a href="a.html" class="srclink">outside</a></div></nav>'
    '<section id="main-content"><h1>Struct Span</h1>'
    '<p>kept <span class="viewcode-link">another rule drops this</span></p>'
    '<p>kept <span class="sidebar-tree">a marker, no drop</span></p>'
    '<p>gone <a class="srclink" href="s.html">source</a> <button>copy</button></p>'
    "</section></body></html>"
)


def test_a_region_pruned_from_the_page_scan_drops_only_its_rule_s_chrome():
    """The page's one scan holds every rule's markers and drops: the region keeps what
    its own rule does not drop and loses what it does, as a walk of its own would."""
    root = parse_html(_RUSTDOC_PAGE)
    extraction = extract_page(root, _RUSTDOC_PAGE, "https://x.example/struct.Span.html")
    assert extraction.extractor == "rustdoc"
    text = extraction.region.text_content()
    assert "another rule drops this" in text and "a marker, no drop" in text
    assert "source" not in text and "copy" not in text
    # The chrome outside the region is not the region's to drop.
    assert root.find(".//div[@class='sidebar-elems']/a") is not None


def test_pruning_from_the_page_scan_gives_what_the_region_s_own_walk_gives():
    from mdcrawl import extract

    for path in sorted(PAGES.rglob("*.html")):
        html = path.read_text(encoding="utf-8")
        pruned = []
        for page_scan in (True, False):
            root = parse_html(html)
            rule, scan = extract._detect(root)
            region, extractor, _ = extract.find_region(root, html, rule, None)
            own = rule if rule is not None and extractor == rule.name else None
            extract.prune(region, own, scan if page_scan else None)
            pruned.append(lxml.html.tostring(region))
        assert pruned[0] == pruned[1], path


def test_queries_skipped_for_classes_a_page_lacks_find_what_plain_queries_find():
    """extract_page hands the page's class attributes to the nav and region queries,
    which skip a selector naming a class the page lacks: on every vendored page the nav
    and the region are what unfiltered queries give. With no class known at all, the
    toctree nav is lost: the comparison does reach the filter."""
    from mdcrawl import extract

    lost = 0
    for path in sorted(PAGES.rglob("*.html")):
        html = path.read_text(encoding="utf-8")
        root = parse_html(html)
        url = f"https://x.example/{path.relative_to(PAGES)}"
        rule, scan = extract._detect(root)
        classes = extract.known_classes(scan[1])
        assert set(classes.split()) == set(extract.class_names(root).split()), path
        nav = extract.site_nav(root, rule, url, classes)
        assert nav == extract.site_nav(root, rule, url, None), path
        found = extract.find_region(root, html, rule, None, classes)
        assert found[:2] == extract.find_region(root, html, rule, None, None)[:2], path
        lost += nav != extract.site_nav(root, rule, url, "")
    assert lost > 0


_HEADLESS_LINKS = """<html><body><p>text</p>
<link rel="next" href="body-next.html"><div class="navheader"><a accesskey="n" href="n.html">n</a></div>
</body></html>"""


def test_a_head_selector_runs_under_the_head_only_and_finds_what_the_full_query_finds():
    from mdcrawl import extract

    pages = [parse_html(p.read_text(encoding="utf-8")) for p in sorted(PAGES.rglob("*.html"))]
    pages.append(parse_html(_HEADLESS_LINKS))
    hits = 0
    for root in pages:
        for css in sel.SEQUENCE_PREV + sel.SEQUENCE_NEXT:
            got = extract._select_head_aware(root, css, None)
            assert got == select(root, css), css
            heads = extract._Heads(root)  # found once, asked by every head selector
            assert extract._select_head_aware(root, css, None, heads) == got, css
            hits += len(got)
    assert hits > 0
    # a <link rel=next> in the body is no head link, whichever way it is looked for
    body_only = parse_html(_HEADLESS_LINKS)
    assert extract._select_head_aware(body_only, "head link[rel=next]", None) == []


def test_a_class_is_known_whole_not_as_part_of_another_name():
    from mdcrawl import extract

    classes = extract.known_classes(["bodywrapper  x", "document\tsection", "x"])
    assert extract.select_known(parse_html("<div class=body>t</div>"), "div.body", classes) == []
    root = parse_html("<div class='document section'>t</div>")
    assert extract.select_known(root, "div.section", classes) == select(root, "div.section")
    assert len(select(root, "div.section")) == 1


def _every_selector() -> list[str]:
    rules = [
        s
        for rule in sel.GENERATORS
        for s in rule.markers + rule.content + rule.drop + rule.nav + rule.toc
        + rule.unwrap_lists + rule.heading_rows
    ]
    extra = sel.STRUCTURAL + sel.GENERIC_NAV + sel.ADMONITION + sel.ADMONITION_TITLE
    return list(dict.fromkeys(rules + list(extra) + list(sel.COMMON_DROP)))


_NESTED = """<html><body><div class="a" id="o"><div class="a"><p class="b">one</p>
<ul><li class="b"><span><b class="b">two</b></span></li></ul></div></div>
<section><div class="a"><b class="b">three</b></div><b class="b">four</b></section>
</body></html>"""


def test_descendant_steps_find_what_cssselect_finds_in_the_same_order():
    """``select`` runs cssselect's XPath with "/descendant-or-self::*/B" as
    "/descendant::B" and an id or class test on any element as a test of the attribute:
    on every vendored page, every selector kept as data (and nested descendant chains,
    ids and classes) finds the same elements in the same order."""
    from lxml.cssselect import CSSSelector

    pages = [parse_html(p.read_text(encoding="utf-8")) for p in sorted(PAGES.rglob("*.html"))]
    pages.append(parse_html(_NESTED))
    chains = [".a .b", "div .a .b", ".a > .b", "section b", ".a b:first-child", "#o .a, .a b"]
    chains += ["#o", ".a", "#o > .a", ".b:not(.a)", "#o.a", ".a-b", "[id=o] .a"]
    rewritten = by_attribute = hits = 0
    for css in _every_selector() + chains:
        rewritten += "/descendant::" in extract_compiled_path(css)
        by_attribute += "/.." in extract_compiled_path(css)
        for root in pages:
            got = select(root, css)
            assert got == CSSSelector(css)(root), css
            hits += len(got)
    assert rewritten > 10 and by_attribute > 10 and hits > 0
    nested = parse_html(_NESTED)
    # each match once (the outer and inner div.a both hold "one"), in document order
    assert [b.text_content() for b in select(nested, ".a .b")] == ["one", "two", "two", "three"]


def extract_compiled_path(css: str) -> str:
    from mdcrawl import extract

    return extract.compiled(css).path


def test_descendant_steps_keep_a_path_that_asks_a_position():
    from mdcrawl.extract import descendant_steps

    path = "descendant-or-self::a/descendant-or-self::*/b[last()]"
    assert descendant_steps(path) == path
    path = "descendant-or-self::a/descendant-or-self::*/b[position() = 1]"
    assert descendant_steps(path) == path
    path = "descendant-or-self::*[@id = 'x'][1]"
    assert descendant_steps(path) == path
    assert descendant_steps("descendant-or-self::*[@id = 'x']/a") == (
        "descendant-or-self::*/@id[. = 'x']/../a"
    )
    assert descendant_steps("descendant-or-self::a/descendant-or-self::*/b[@x]") == (
        "descendant-or-self::a/descendant::b[@x]"
    )


def test_pruning_reports_classes_holding_every_class_left_in_the_region():
    """``prune`` returns the class names the renderer's selectors are filtered by: every
    class the pruned region holds is among them (pruning adds none)."""
    from mdcrawl import extract

    for path in sorted(PAGES.rglob("*.html")):
        html = path.read_text(encoding="utf-8")
        root = parse_html(html)
        extraction = extract_page(root, html, f"https://x.example/{path.name}")
        left = set(extract.class_names(extraction.region).split())
        assert extraction.classes is not None, path
        assert left <= set(extraction.classes.split()), path


_STYLED = """<html><body><div style="background: url(a.png)">
<p style='x: url("b c.png"); y: url( d.png ) url(&apos;e.png&apos;) url(") url() url(f.png)'>t</p>
<img src=" i.png " style="background:URL(  http://o/x.png)"><a href="#f" style="url(g.png)">l</a>
<span style="url(h.png">s</span><table background="bg.png" style="color:red"><tr><td>x</td></tr>
</table></div></body></html>"""


def test_absolutize_rewrites_what_lxml_rewrites_style_urls_included():
    """``absolutize`` is ``make_links_absolute`` without its walk: on every vendored
    page and on a region of ``style`` attributes holding several ``url(...)`` each (the
    last rewritten first, as lxml does, so each position holds), the same bytes."""
    from mdcrawl.extract import absolutize

    texts = [p.read_text(encoding="utf-8") for p in sorted(PAGES.rglob("*.html"))]
    for text in [*texts, _STYLED]:
        ours, theirs = parse_html(text), parse_html(text)
        absolutize(ours, "https://x.example/docs/page.html")
        theirs.make_links_absolute(
            "https://x.example/docs/page.html", resolve_base_href=False, handle_failures="ignore"
        )
        assert lxml.html.tostring(ours) == lxml.html.tostring(theirs), text[:80]
    styled = parse_html(_STYLED)
    absolutize(styled, "https://x.example/docs/page.html")
    assert "url(https://x.example/docs/f.png)" in styled.find(".//p").get("style")


_LINKS = """<html><body><div><a href=" #x">¶</a><a href="#y"> a b </a><a href="#z">abc</a>
<a href="\t#w"><span>#</span><!-- c --></a><a name="n">#</a><a href="x#y">#</a>
<a href="s.html">[SOURCE]</a><a href="t.html"> View\tSource </a><a href="u.html">src\xa0code</a>
<a href="v.html">a very long label with source</a><a>[source]</a><a href=""><b>Src</b></a>
<a href="w.html">  \n  source  \n\n  code   x </a><a href="#q">\xa0\xa0\xa0</a>
<a href="y.html">source\xa0\xa0\xa0\xa0\xa0\xa0\xa0\xa0\xa0x</a></div></body></html>"""


def test_short_link_walks_find_what_their_xpaths_find():
    """The permalink and affordance prefilters, Python walks of the links, find what the
    XPath predicates they replace find, in the same order, on every vendored page and
    a page of edge cases (XML whitespace only collapsed, a non-breaking space counted,
    a comment inside a link, no href, a long label)."""
    import lxml.etree
    from mdcrawl import extract

    lowered = "translate(., 'SRCOUE', 'srcoue')"
    source = lxml.etree.XPath(
        ".//a[@href and string-length(normalize-space()) < 16"
        f" and (contains({lowered}, 'src') or contains({lowered}, 'source'))]"
    )
    fragment = lxml.etree.XPath(
        ".//a[starts-with(normalize-space(@href), '#') and string-length(normalize-space()) < 3]"
    )
    texts = [p.read_text(encoding="utf-8") for p in sorted(PAGES.rglob("*.html"))]
    found = 0
    for text in [*texts, _LINKS]:
        root = parse_html(text)
        for region in [root, *root.iter("a", "div")]:
            assert extract._short_source_links(region) == source(region), text[:80]
            assert extract._short_fragment_links(region) == fragment(region), text[:80]
            found += len(extract._short_source_links(region))
    edge = parse_html(_LINKS)
    assert len(extract._short_source_links(edge)) == 5
    assert len(extract._short_fragment_links(edge)) == 2  # "¶", and "#" in a span
    assert found > 0


_ATTRIBUTED = """<html><body><!-- a comment --><nav>n</nav><div role="navigation">r</div>
<div aria-label="x" class="">e</div><p id="toc">t</p><div class="headerlink extra" id="x">h</div>
<span class="">s</span><?pi x?><footer class="footer">f</footer><p>plain</p></body></html>"""


def test_a_scan_of_the_held_nodes_finds_what_a_walk_of_the_tree_finds():
    """``SelectorSet.scan`` given the page's nodes (``list(root.iter())``, comments and
    PIs among them) finds the hits and class attributes its own walk finds, on every
    vendored page and on one where tags, ids, roles, labels and empty classes match."""
    from mdcrawl import extract

    page = extract._page_selectors()
    texts = [p.read_text(encoding="utf-8") for p in sorted(PAGES.rglob("*.html"))]
    hits = 0
    for text in [*texts, _ATTRIBUTED]:
        root = parse_html(text)
        walked = page.scan(root)
        held = page.scan(root, list(root.iter()))
        assert [(e, [c.css for c in m]) for e, m in held[0]] == [
            (e, [c.css for c in m]) for e, m in walked[0]
        ], text[:80]
        assert held[1] == walked[1]
        hits += len(held[0])
    root = parse_html(_ATTRIBUTED)
    found = page.scan(root, list(root.iter()))[0]
    assert {e.text for e, _ in found} == {"n", "r", "t", "f"}  # tag, role, id, class
    assert hits > 0


_METAS = """<html><head><meta name="generator" content="Sphinx 7"><title>T</title>
<meta http-equiv="refresh" content="0; url=next.html"></head><body>
<div class="body" role="main"><h1>T</h1><p>text <meta name="description" content="in body"></p>
</div><meta name="description" content="after"></body></html>"""


def test_the_metas_read_off_the_scan_are_the_tree_s_before_and_after_pruning():
    """The page's <meta> elements come from its scan (a drop rule names the tag), and
    after pruning only those still in the tree are read: on every vendored page and on
    one with a <meta> inside the region that pruning drops, they are what a walk finds."""
    from mdcrawl import extract

    texts = [p.read_text(encoding="utf-8") for p in sorted(PAGES.rglob("*.html"))]
    seen = 0
    for text in [*texts, _METAS]:
        root = parse_html(text)
        assert extract.page_metas(root, extract._detect(root)[1]) == list(root.iter("meta"))
        extraction = extract_page(root, text, "https://x.example/a/page.html")
        assert extraction.metas == list(root.iter("meta")), text[:80]
        seen += len(extraction.metas)
    assert seen > 0
    root = parse_html(_METAS)
    extraction = extract_page(root, _METAS, "https://x.example/a/page.html")
    assert [m.get("content") for m in extraction.metas][-1] == "after"  # the body's went
    assert "in body" not in [m.get("content") for m in extraction.metas]
    assert extraction.redirect == "https://x.example/a/next.html"


_CARDS = """<html><body><main><a href="a.html"><h2>A</h2><p>one</p></a>
<a href="b.html"><span>B</span> <code>x</code></a><a href="c.html"><div><p>c</p></div></a>
<a href="#d"><h3 id="d">D</h3></a><a href="e.html"><!-- c --><em>e</em><pre>e</pre></a>
</main></body></html>"""


def test_a_link_around_blocks_moves_onto_its_title_and_one_around_text_stays():
    """``_links_around_blocks`` tells a card (a link holding blocks) by the names of the
    elements below the link: the blocks stay, the link moves onto the title; a link
    around inline elements stays as it is."""
    from mdcrawl import extract

    root = parse_html(_CARDS)
    extract._links_around_blocks(root)
    main = root.find(".//main")
    assert [child.tag for child in main] == ["div", "a", "div", "h3", "div"]
    assert main[0][0].tag == "h2" and main[0][0][0].get("href") == "a.html"
    assert main[1].get("href") == "b.html"  # inline only: still the link
    assert main[2][0][0].get("href") == "c.html"  # the first block (the div) holds it
    assert main[4][1].tag == "em" and main[4].find("pre/a").get("href") == "e.html"
