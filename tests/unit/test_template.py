"""Site templates: learned from a site's pages, they remove what repeats and keep what
varies, with no generator rule."""

from __future__ import annotations

import random

from mdcrawl import template as tpl
from mdcrawl.convert import convert_html, learn_template
from mdcrawl.extract import parse_html

from tests.support.templated_site import CHROME, PAGES, page_html, url


def site_template(pages: int = PAGES, rules: bool = False) -> tpl.SiteTemplate | None:
    return learn_template([(page_html(n), None) for n in range(pages)], rules)


def test_chrome_that_repeats_goes_and_content_that_varies_stays() -> None:
    template = site_template()
    assert template is not None
    page = convert_html(page_html(7), url(7), template=template, generator_rules=False)
    assert page.extractor == "template"
    for chrome in CHROME:
        assert chrome not in page.markdown, chrome
    for content in ("Introduction to page 7", "member_7_2(x)", "x: the input of member 1"):
        assert content in page.markdown
    # A heading every page has, between two members, is content, not chrome.
    assert page.markdown.count("Parameters") == 3


def test_without_a_template_the_chrome_stays() -> None:
    page = convert_html(page_html(7), url(7), generator_rules=False)
    assert "Previous:" in page.markdown


def test_a_page_that_is_all_template_falls_back_to_the_cascade() -> None:
    template = site_template()
    assert template is not None
    root = parse_html(page_html(3))
    body = root.find("body")
    for doc in body.xpath(".//div[@class='doc']"):
        doc.getparent().remove(doc)
    assert tpl.content_region(body, template) is None


def test_too_few_pages_teach_nothing() -> None:
    assert site_template(pages=tpl.MIN_PAGES - 1) is None


def test_a_sample_of_small_pages_gives_one_template_whatever_its_order() -> None:
    bodies = [parse_html(page_html(n)).find("body") for n in range(PAGES)]
    first = tpl.learn(bodies)
    random.Random(4).shuffle(bodies)
    assert first is not None and first.id == tpl.learn(bodies).id  # type: ignore[union-attr]


def test_a_template_survives_its_json_and_its_id_names_its_content() -> None:
    template = site_template()
    assert template is not None
    again = tpl.SiteTemplate.from_json(template.to_json())
    assert again == template and again.id == template.id
    other = site_template(pages=12)
    assert other is not None and other.id != template.id
    assert tpl.SiteTemplate.from_json(tpl.NO_TEMPLATE_JSON) is None


def test_with_rules_on_a_site_with_a_rule_needs_no_template() -> None:
    sphinx = (
        '<html><head><meta name="generator" content="Sphinx 7"></head><body>'
        '<div class="sphinxsidebar">Side</div><div class="body" role="main">'
        "<h1>T{n}</h1><p>text {n}</p></div></body></html>"
    )
    pages = [(sphinx.format(n=n), None) for n in range(10)]
    assert learn_template(pages, generator_rules=True) is None
    assert learn_template(pages, generator_rules=False) is not None


def api_page() -> str:
    """A module page of an API generator without a rule: a sidebar of links, a module
    description, twelve members (a signature, a one-line doc), a footer."""
    members = "".join(
        f'<div class="top"><p class="src"><a id="v:fn{k}">fn{k}</a> :: <a href="T.html">Text'
        f'</a> -&gt; <a href="K.html">Key</a> <a href="src/M.html#{k}">Source</a></p>'
        f'<div class="doc"><p>Function {k} converts the text to a key, way {k}.</p></div></div>'
        for k in range(12)
    )
    side = "".join(f'<li><a href="m{i}.html">Module.Number{i}</a></li>' for i in range(40))
    return (
        f'<html><head><title>M</title></head><body><div id="package-header"><ul>{side}</ul>'
        f'</div><div id="contents"><p class="caption">Data.Module</p>'
        f"<p>This module turns texts into keys, and back, fast.</p>"
        f'<div id="interface"><h1>Documentation</h1>{members}</div></div>'
        f'<div id="footer"><p>Produced by Nobodydoc</p></div></body></html>'
    )


def test_one_api_page_alone_keeps_every_member_where_readability_drops_them() -> None:
    page = convert_html(api_page(), "http://docs.test/M.html", generator_rules=False)
    assert page.extractor == "density"
    assert all(f"Function {k} converts" in page.markdown for k in range(12))
    assert "This module turns texts into keys" in page.markdown
    assert "Module.Number" not in page.markdown and "Produced by" not in page.markdown
