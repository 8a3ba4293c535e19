"""The converter's per-tag-name caches stay bounded whatever names a page invents: a
hostile page (or many pages) of made-up tags must not grow a long-lived worker."""

from mdcrawl import markdown, soupbuild
from mdcrawl.convert import convert_html


def test_a_page_of_thousands_of_invented_tag_names_leaves_the_caches_bounded():
    tags = "".join(f"<x-tag{i}>word{i} </x-tag{i}>" for i in range(3000))
    page = convert_html(
        f"<html><head><title>T</title></head><body><main><h1>T</h1><p>{tags}</p>"
        "</main></body></html>",
        "https://x.example/t.html",
    )
    assert "word0" in page.markdown and "word2999" in page.markdown
    assert len(soupbuild._TAG_TEMPLATES) <= soupbuild._TEMPLATES_KEPT
    assert len(markdown._REMOVES_INSIDE) <= markdown._NAMES_REMEMBERED
    assert len(markdown._REMOVES_OUTSIDE) <= markdown._NAMES_REMEMBERED
