"""mark_ids: which elements' ids become markers (the walk against the XPath union it
replaced), on real pages and on a region that is itself an ``<a name>``."""

from __future__ import annotations

from pathlib import Path

import lxml.etree
import lxml.html
from mdcrawl.anchors import _OWN_ID, _with_ids, mark_ids
from mdcrawl.document import parse_html
from mdcrawl.extract import ID_ALIASES

_UNION = lxml.etree.XPath(f"descendant-or-self::*[@id or @{ID_ALIASES}] | .//a[@name]")
_PAGES = Path(__file__).parent.parent / "fixtures" / "pages"


def _kept(region):
    return [e for e in _with_ids(region) if e is not region or _OWN_ID(region)]


_ODD = """<html><body><div id="d"><!-- c id --><?pi x?><a name="n">t</a><A NAME="up">u</A>
<span data-mdcrawl-ids="k">v</span><p name="not-an-anchor">w</p><a>x</a></div></body></html>"""


def test_the_walk_finds_what_the_union_found_on_real_pages() -> None:
    pages = sorted(_PAGES.rglob("*.html"))
    assert len(pages) > 10
    for text in [path.read_text(encoding="utf-8") for path in pages] + [_ODD]:
        path = text[:80]
        root = parse_html(text)
        for region in [root, *root.iter("a", "div", "section")]:
            assert _kept(region) == _UNION(region), path


def test_a_region_that_is_an_a_name_marks_what_is_inside_it_only() -> None:
    region = lxml.html.fragment_fromstring('<a name="outer">Title <span id="inner">x</span></a>')
    deep = lxml.html.Element("a", name="deep")  # no parser nests an <a> in an <a>
    deep.text = "y"
    region.append(deep)
    groups = mark_ids(region)
    assert sorted(i for g in groups for i in g) == ["deep", "inner"]
    named = lxml.html.fragment_fromstring('<a name="n" id="own">Title</a>')
    assert [i for g in mark_ids(named) for i in g] == ["own", "n"]
