"""The converter's per-tag-name caches stay bounded whatever names a page invents: a
hostile page (or many pages) of made-up tags must not grow a long-lived worker."""

from mdcrawl import markdown, soupbuild
from mdcrawl.convert import convert_html


def _converted(body: str):  # noqa: ANN202 - convert_html's page
    """A page whose <main> holds ``body``, converted."""
    html = f"<html><head><title>T</title></head><body><main><h1>T</h1>{body}</main></body></html>"
    return convert_html(html, "https://x.example/t.html")


def test_a_page_of_thousands_of_invented_tag_names_leaves_the_caches_bounded():
    tags = "".join(f"<x-tag{i}>word{i} </x-tag{i}>" for i in range(3000))
    page = _converted(f"<p>{tags}</p>")
    assert "word0" in page.markdown and "word2999" in page.markdown
    assert len(soupbuild._TAG_TEMPLATES) <= soupbuild._TEMPLATES_KEPT
    assert len(markdown._REMOVES_INSIDE) <= markdown._NAMES_REMEMBERED
    assert len(markdown._REMOVES_OUTSIDE) <= markdown._NAMES_REMEMBERED


def test_the_writer_s_per_name_caches_stay_bounded_for_invented_parents():
    """Invented tags holding elements reach the writer's per-name questions (inline
    context, whitespace, kind) for a parent: each cache keeps at most its bound."""
    from mdcrawl import mdwriter

    tags = "".join(f"<x-box{i}><b>word{i}</b> </x-box{i}>" for i in range(3000))
    page = _converted(f"<div>{tags}</div>")
    assert "**word0**" in page.markdown and "**word2999**" in page.markdown
    for cache in (mdwriter._INLINE_CONTEXT, mdwriter._INSIDE, mdwriter._KINDS):
        assert len(cache) <= mdwriter._NAMES_KEPT
