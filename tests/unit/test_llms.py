"""llms.txt: the shape llmstxt.org describes, the sections, the site's name."""

from __future__ import annotations

import re

from mdcrawl.llms import humanize, llms_txt, section_of, site_name
from mdcrawl.models import PageRecord, PageStatus

START = "https://example.org/docs/v2/intro.html"
BASE = "https://example.org/docs/v2/"


def page(path: str, title: str = "", description: str = "") -> PageRecord:
    return PageRecord(
        job_id="j",
        url=BASE + path,
        url_hash=path,
        status=PageStatus.OK,
        markdown_key=path,
        title=title,
        description=description,
    )


def test_shape_title_summary_detail_sections_entries() -> None:
    pages = [
        page("intro.html", "Intro", "What it is."),
        page("user/install.html", "Install", "Get it\n  running."),
        page("api/client.html", "Client [class]"),
        page("user/quickstart.html", "Quickstart"),
    ]
    text = llms_txt("Thing", START, pages, summary="Thing does things.")
    lines = text.splitlines()
    assert lines[:3] == ["# Thing", "", "> Thing does things."]
    assert re.findall(r"^## (.+)$", text, re.M) == ["Docs", "User", "Api"]
    user = text.split("## User\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert user == [
        f"- [Install]({BASE}user/install.html): Get it running.",
        f"- [Quickstart]({BASE}user/quickstart.html)",
    ]
    assert f"- [Client \\[class\\]]({BASE}api/client.html)" in lines
    assert sum(line.startswith("# ") for line in lines) == 1
    assert text.endswith("\n") and not text.endswith("\n\n")


def test_summary_falls_back_to_a_sentence_naming_the_site() -> None:
    text = llms_txt("Thing", START, [page("intro.html", "Intro")])
    assert re.search(r"^> .*Thing.*$", text, re.M)


def test_sections_come_from_the_first_directory_under_the_scope() -> None:
    assert section_of(BASE + "intro.html", START) == "Docs"
    assert section_of(BASE, START) == "Docs"
    assert section_of(BASE + "user-guide/", START) == "User guide"
    assert section_of(BASE + "user-guide/a/b.html", START) == "User guide"
    assert humanize("getting_started.html") == "Getting started"


def test_site_name_prefers_the_shared_title_suffix() -> None:
    pages = [
        page("intro.html", "Welcome — Requests 2.32 documentation"),
        page("a.html", "Install — Requests 2.32 documentation"),
        page("b.html", "Search"),
    ]
    assert site_name(pages, START) == "Requests 2.32 documentation"


def test_site_name_falls_back_to_start_title_then_host() -> None:
    pages = [page("a.html", "Install"), page("intro.html", "The Thing Manual")]
    assert site_name(pages, START) == "The Thing Manual"
    assert site_name([], START) == "example.org"
