"""Reading order on page sets shaped like real generators' output."""

from __future__ import annotations

import random

from mdcrawl.models import PageRecord, PageStatus
from mdcrawl.order import reading_order, tree_path

SITE = "https://docs.example.org"


def page(path: str, order: int, nav: tuple[str, ...] = (), **extra: object) -> PageRecord:
    url = SITE + path
    fields: dict[str, object] = {"status": PageStatus.OK, "markdown_key": f"md/{order}"}
    fields.update(extra)
    return PageRecord(
        job_id="j",
        url=url,
        url_hash=f"h{order}",
        order=order,
        nav=nav,
        **fields,  # type: ignore[arg-type]
    )


def urls(*paths: str) -> tuple[str, ...]:
    return tuple(SITE + p for p in paths)


def paths(pages: list[PageRecord]) -> list[str]:
    return [p.url.removeprefix(SITE) for p in pages]


def test_sphinx_like_toctree_wins_then_pages_outside_it_by_url_tree() -> None:
    toctree = urls(
        "/docs/", "/docs/user/quickstart.html", "/docs/user/advanced.html", "/docs/api.html"
    )
    pages = [
        page("/docs/", 0, toctree),
        page("/docs/api.html", 1, toctree),  # linked first on the start page
        page("/docs/genindex.html", 2, toctree),  # not in the toctree
        page("/docs/user/advanced.html", 3, toctree),
        page("/docs/user/quickstart.html", 4, toctree),
        page("/docs/search.html", 5, toctree, status=PageStatus.SKIPPED, markdown_key=None),
        page("/docs/py-modindex.html", 6, toctree),
    ]
    assert paths(reading_order(pages, SITE + "/docs/index.html")) == [
        "/docs/",
        "/docs/user/quickstart.html",
        "/docs/user/advanced.html",
        "/docs/api.html",
        "/docs/genindex.html",
        "/docs/py-modindex.html",
    ]


def test_collapsed_sidebars_are_merged_into_the_start_page_nav() -> None:
    # Like Sphinx with collapsed navigation: each page's sidebar expands only its section.
    top = urls("/", "/user/", "/api/")
    user = urls("/", "/user/", "/user/install.html", "/user/quickstart.html", "/api/")
    api = urls("/", "/user/", "/api/", "/api/sessions.html", "/api/models.html")
    pages = [
        page("/", 0, top),
        page("/api/", 1, api),
        page("/user/", 2, user),
        page("/api/models.html", 3, api),
        page("/user/quickstart.html", 4, user),
        page("/api/sessions.html", 5, api),
        page("/user/install.html", 6, user),
    ]
    assert paths(reading_order(pages, SITE + "/")) == [
        "/",
        "/user/",
        "/user/install.html",
        "/user/quickstart.html",
        "/api/",
        "/api/sessions.html",
        "/api/models.html",
    ]


def test_mdbook_like_summary_on_every_page_orders_everything() -> None:
    summary = urls(
        "/book/index.html",
        "/book/getting-started.html",
        "/book/guide/project-layout.html",
        "/book/guide/dependencies.html",
        "/book/reference/index.html",
        "/book/reference/manifest.html",
    )
    discovered = [summary[i] for i in (0, 4, 5, 2, 1, 3)]
    pages = [page(u.removeprefix(SITE), i, summary) for i, u in enumerate(discovered)]
    assert [p.url for p in reading_order(pages, SITE + "/book/")] == list(summary)


def test_a_richer_nav_elsewhere_beats_a_start_page_with_a_stub_nav() -> None:
    full = urls("/", "/a.html", "/b.html", "/c.html", "/d.html", "/e.html")
    pages = [
        page("/", 0, urls("/e.html")),  # a landing page that links one thing in its "nav"
        *(page(u.removeprefix(SITE), i, full) for i, u in enumerate(reversed(full[1:]), 1)),
    ]
    assert [p.url for p in reading_order(pages, SITE + "/")] == list(full)


def test_start_page_without_nav_falls_back_to_the_widest_nav() -> None:
    small = urls("/b.html", "/a.html")
    wide = urls("/c.html", "/b.html", "/a.html")
    pages = [page("/", 0), page("/a.html", 1, small), page("/b.html", 2, wide), page("/c.html", 3)]
    assert paths(reading_order(pages, SITE + "/")) == ["/c.html", "/b.html", "/a.html", "/"]


def test_no_nav_uses_sitemap_order_then_url_tree() -> None:
    pages = [
        page("/", 0),
        page("/tutorial/part2.html", 1, sitemap_rank=2),
        page("/tutorial/part1.html", 2, sitemap_rank=1),
        page("/orphan.html", 3),
        page("/intro.html", 4, sitemap_rank=0),
    ]
    assert paths(reading_order(pages, SITE + "/")) == [
        "/intro.html",
        "/tutorial/part1.html",
        "/tutorial/part2.html",
        "/",
        "/orphan.html",
    ]


def test_no_nav_no_sitemap_walks_the_url_tree_depth_first() -> None:
    pages = [
        page("/docs/", 0),
        page("/docs/guide/b.html", 1),
        page("/docs/api/", 2),
        page("/docs/guide/a.html", 3),
        page("/docs/guide/", 4),  # the index comes before its children, found late or not
        page("/docs/api/index.html#x", 5, status=PageStatus.FAILED, markdown_key=None),
        page("/docs/api/client.html", 6),
        page("/docs/faq.html", 7),
    ]
    assert paths(reading_order(pages, SITE + "/docs/")) == [
        "/docs/",
        "/docs/guide/",
        "/docs/guide/b.html",
        "/docs/guide/a.html",
        "/docs/api/",
        "/docs/api/client.html",
        "/docs/faq.html",
    ]


def test_page_and_directory_of_the_same_name_share_a_tree_node() -> None:
    assert tree_path(SITE + "/a/b.html") == tree_path(SITE + "/a/b/index.html")
    pages = [page("/a/b/c.html", 0), page("/z.html", 1), page("/a/b.html", 2)]
    assert paths(reading_order(pages, SITE + "/")) == ["/a/b.html", "/a/b/c.html", "/z.html"]


def test_failed_and_skipped_pages_are_left_out_even_when_in_nav() -> None:
    nav = urls("/", "/broken.html", "/ok.html")
    pages = [
        page("/", 0, nav),
        page("/broken.html", 1, nav, status=PageStatus.FAILED, markdown_key=None),
        page("/ok.html", 2, nav),
    ]
    assert paths(reading_order(pages, SITE + "/")) == ["/", "/ok.html"]


def test_order_does_not_depend_on_input_order() -> None:
    nav = urls("/", "/x/1.html", "/x/2.html")
    pages = [
        page("/", 0, nav),
        page("/x/2.html", 1, nav),
        page("/x/1.html", 2, nav),
        page("/y/b.html", 3, sitemap_rank=1),
        page("/y/a.html", 4, sitemap_rank=0),
        page("/z/q.html", 5),
        page("/z/", 6),
    ]
    expected = reading_order(pages, SITE + "/")
    shuffled = pages[:]
    for seed in range(5):
        random.Random(seed).shuffle(shuffled)
        assert reading_order(shuffled, SITE + "/") == expected
    assert len(expected) == len(pages)


def test_start_page_nav_counts_even_when_another_page_showed_it_first() -> None:
    spine = urls("/", "/b.html", "/a.html")
    wider = urls("/a.html", "/b.html", "/c.html", "/d.html")
    pages = [
        page("/d.html", 0, spine),  # found before the start page, with the start page's nav
        page("/c.html", 1, wider),
        page("/", 2, spine),
        page("/a.html", 3),
        page("/b.html", 4),
    ]
    order = paths(reading_order(pages, SITE + "/"))
    assert order[0] == "/"  # the wider nav as spine would have started at /a.html
    assert order.index("/b.html") < order.index("/a.html")
