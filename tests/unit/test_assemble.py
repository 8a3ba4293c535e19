"""The assembled outputs, written through a recording opener: what lands where, and how."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, cast

import pytest
from mdcrawl.assemble import AssembledResult, page_slug, write_outputs
from mdcrawl.models import CrawlOptions, Job, PageRecord, PageStatus
from mdcrawl.rewrite import Slugger, headings
from mdcrawl.tokens import estimate_tokens

ROOT = "https://docs.example.org/docs/"

MARKDOWN = {
    "index": (
        "# Widget docs\n\nRead [Install](https://docs.example.org/docs/install.html#from-source),"
        " [Usage](https://docs.example.org/docs/usage/index.html) and"
        " [the blog](https://example.org/blog).\n\n"
        "```bash\n# fetch [x](https://docs.example.org/docs/install.html)\n```\n"
    ),
    "install": (
        "# Install\n\n## From source\n\nBuild it.\n\n## Configuration\n\nSet it.\n\n"
        "###### Deep detail\n\nSee [sources](https://docs.example.org/docs/install.html#From_Source)"
        " and [missing](https://docs.example.org/docs/install.html#no-such-heading).\n"
    ),
    "usage": (
        "# Usage\n\n## Configuration\n\n"
        "Like [install's](https://docs.example.org/docs/install.html#configuration),"
        " see [below](https://docs.example.org/docs/usage/#configuration) and"
        " [the page](https://docs.example.org/docs/usage/configuration.html).\n"
    ),
    "config": "No heading of its own: the converter found none.\n",
}


def record(path: str, order: int, key: str | None, **extra: object) -> PageRecord:
    fields: dict[str, object] = {"status": PageStatus.OK, "markdown_key": key}
    fields.update(extra)
    return PageRecord(job_id="j1", url=ROOT + path, url_hash=f"h{order}", order=order, **fields)  # type: ignore[arg-type]


NAV = tuple(ROOT + p for p in ("", "install.html", "usage/", "usage/configuration.html"))
PAGES = [
    record("", 0, "index", title="Widget docs", words=10, nav=NAV, description="Widgets, done."),
    record("usage/", 1, "usage", title="Usage", words=20, nav=NAV, from_cache=True),
    record("broken.html", 2, None, status=PageStatus.FAILED, reason="http_error"),
    record("install.html", 3, "install", title="Install", words=30, nav=NAV),
    record("manual.pdf", 4, None, status=PageStatus.SKIPPED, reason="not_html"),
    record("usage/configuration.html", 5, "config", title="Configuration", words=5, nav=NAV),
]


class Recorder:
    """An opener that keeps every write, so tests can see how outputs were streamed."""

    def __init__(self) -> None:
        self.writes: dict[str, list[bytes]] = {}

    @contextmanager
    def open(self, name: str) -> Iterator[BinaryIO]:
        chunks = self.writes.setdefault(name, [])

        class Stream:
            def write(self, data: bytes) -> int:
                chunks.append(bytes(data))
                return len(data)

        yield cast(BinaryIO, Stream())

    def text(self, name: str) -> str:
        return b"".join(self.writes[name]).decode("utf-8")


def assemble(**job_fields: object) -> tuple[AssembledResult, Recorder, list[str]]:
    reads: list[str] = []

    def read_markdown(key: str) -> str:
        reads.append(key)
        return MARKDOWN[key]

    job = Job(job_id="j1", url=ROOT, options=CrawlOptions(), **job_fields)  # type: ignore[arg-type]
    recorder = Recorder()
    result = write_outputs(job, PAGES, read_markdown, recorder.open)
    return result, recorder, reads


@pytest.fixture(scope="module")
def outputs() -> tuple[AssembledResult, Recorder, list[str]]:
    return assemble(truncated=True, left=7, started_at=1_700_000_000.0)


def test_result_names_counts_and_tokens(
    outputs: tuple[AssembledResult, Recorder, list[str]],
) -> None:
    result, recorder, _ = outputs
    assert set(result.names) == set(recorder.writes)
    assert result.names[-3:] == ("docs.md", "llms.txt", "manifest.jsonl")
    assert result.pages == 4
    assert result.words == 65
    assert result.tokens == math.ceil(len(recorder.text("docs.md")) / 4)
    assert result.truncated is True
    assert assemble()[0].truncated is False


def test_docs_is_streamed_page_by_page(
    outputs: tuple[AssembledResult, Recorder, list[str]],
) -> None:
    _, recorder, _ = outputs
    chunks = [c.decode() for c in recorder.writes["docs.md"]]
    assert len(chunks) > len(PAGES)
    assert all(c.count("\nSource: ") <= 1 for c in chunks)


def test_docs_header_and_sections_in_reading_order(
    outputs: tuple[AssembledResult, Recorder, list[str]],
) -> None:
    docs = outputs[1].text("docs.md")
    assert docs.startswith("# Widget docs\n\nSource: https://docs.example.org/docs/\n")
    assert "2023-11-14" in docs.splitlines()[3] and "truncated" in docs.splitlines()[3]
    sources = re.findall(r"^Source: (\S+)$", docs, re.M)
    assert sources == [ROOT, *NAV]


def test_headings_are_relevelled_under_the_document(
    outputs: tuple[AssembledResult, Recorder, list[str]],
) -> None:
    found = headings(outputs[1].text("docs.md"))
    assert found[:2] == [(1, "Widget docs"), (2, "Contents")]
    assert found[2:] == [
        (2, "Widget docs"),
        (2, "Install"),
        (3, "From source"),
        (3, "Configuration"),
        (6, "Deep detail"),
        (2, "Usage"),
        (3, "Configuration"),
        (2, "Configuration"),  # the page without a heading got its title
    ]
    assert "# fetch [x](https://docs.example.org/docs/install.html)" in outputs[1].text("docs.md")


def test_every_in_document_link_hits_a_unique_github_anchor(
    outputs: tuple[AssembledResult, Recorder, list[str]],
) -> None:
    docs = outputs[1].text("docs.md")
    slugger = Slugger()  # what GitHub would generate, heading by heading
    anchors = [slugger.slug(text) for _, text in headings(docs)]
    assert len(anchors) == len(set(anchors))
    targets = re.findall(r"\]\(#([^)\s]+)\)", docs)
    assert targets and set(targets) <= set(anchors)
    assert [a for a in anchors if a.startswith("configuration")] == [
        "configuration",
        "configuration-1",
        "configuration-2",
    ]


def test_links_between_pages_become_anchors_others_stay_absolute(
    outputs: tuple[AssembledResult, Recorder, list[str]],
) -> None:
    docs = outputs[1].text("docs.md")
    assert "[Install](#from-source)" in docs
    assert "[Usage](#usage)" in docs
    assert "[the blog](https://example.org/blog)" in docs
    assert "[sources](#from-source)" in docs  # a site's own id spelling still finds it
    assert "[missing](#install)" in docs  # unknown fragment: the page's own anchor
    assert "[install's](#configuration)" in docs
    assert "[below](#configuration-1)" in docs
    assert "[the page](#configuration-2)" in docs


def test_contents_nests_pages_and_their_sections(
    outputs: tuple[AssembledResult, Recorder, list[str]],
) -> None:
    docs = outputs[1].text("docs.md")
    contents = docs.split("## Contents\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert contents == [
        "- [Widget docs](#widget-docs-1)",
        "- [Install](#install)",
        "  - [From source](#from-source)",
        "  - [Configuration](#configuration)",
        "- [Usage](#usage)",
        "  - [Configuration](#configuration-1)",
        "- [Configuration](#configuration-2)",
    ]


def test_page_files_keep_order_and_link_to_each_other(
    outputs: tuple[AssembledResult, Recorder, list[str]],
) -> None:
    result, recorder, _ = outputs
    files = [n for n in result.names if n.startswith("pages/")]
    assert files == [
        "pages/0001-index.md",
        "pages/0002-install.md",
        "pages/0003-usage.md",
        "pages/0004-usage-configuration.md",
    ]
    index = recorder.text(files[0])
    assert index.startswith(
        '---\ntitle: "Widget docs"\nsource: "https://docs.example.org/docs/"\n---\n'
    )
    assert "[Install](0002-install.md#from-source)" in index
    assert "[Usage](0003-usage.md)" in index
    usage = recorder.text(files[2])
    assert "[install's](0002-install.md#configuration)" in usage
    assert "[below](#configuration)" in usage
    assert "[the page](0004-usage-configuration.md)" in usage
    assert recorder.text(files[3]).count("# Configuration\n") == 1


def test_manifest_lists_every_url_with_status_and_position(
    outputs: tuple[AssembledResult, Recorder, list[str]],
) -> None:
    lines = [json.loads(line) for line in outputs[1].text("manifest.jsonl").splitlines()]
    assert len(lines) == len(PAGES)
    by_url = {line["url"]: line for line in lines}
    assert by_url[ROOT + "broken.html"] | {} == {
        "url": ROOT + "broken.html",
        "title": "",
        "file": None,
        "words": 0,
        "from_cache": False,
        "status": "failed",
        "reason": "http_error",
        "order": None,
        "tokens": 0,
        "native": None,
        "warnings": {},
    }
    assert by_url[ROOT + "manual.pdf"]["status"] == "skipped"
    assert by_url[ROOT + "manual.pdf"]["reason"] == "not_html"
    usage = by_url[ROOT + "usage/"]
    assert (usage["order"], usage["file"], usage["from_cache"]) == (3, "pages/0003-usage.md", True)
    assert [line["order"] for line in lines[:4]] == [1, 2, 3, 4]
    # each placed page's tokens: its markdown (with its title line) estimated, chars / 4
    files = {line["file"]: line["tokens"] for line in lines if line["file"]}
    assert all(tokens > 0 for tokens in files.values())
    assert files["pages/0003-usage.md"] == estimate_tokens(MARKDOWN["usage"])
    # a page without a heading is counted with the title line it is given
    config = "# Configuration\n\n" + MARKDOWN["config"]
    assert files["pages/0004-usage-configuration.md"] == estimate_tokens(config)


def test_llms_txt_lists_pages_by_section(
    outputs: tuple[AssembledResult, Recorder, list[str]],
) -> None:
    text = outputs[1].text("llms.txt")
    assert text.startswith("# Widget docs\n\n> Widgets, done.\n")
    assert re.findall(r"^## (.+)$", text, re.M) == ["Docs", "Usage"]
    entries = re.findall(r"^- \[(.+?)\]\((\S+?)\)(?:: (.+))?$", text, re.M)
    assert [(t, u) for t, u, _ in entries] == [
        ("Widget docs", ROOT),
        ("Install", ROOT + "install.html"),
        ("Usage", ROOT + "usage/"),
        ("Configuration", ROOT + "usage/configuration.html"),
    ]
    assert entries[0][2] == "Widgets, done."


def test_each_page_is_read_twice_at_most(
    outputs: tuple[AssembledResult, Recorder, list[str]],
) -> None:
    reads = outputs[2]
    assert {key: reads.count(key) for key in MARKDOWN} == {key: 2 for key in MARKDOWN}


@pytest.mark.parametrize(
    ("url", "slug"),
    [
        (ROOT, "index"),
        (ROOT + "index.html", "index"),
        (ROOT + "user/Quick Start.html", "user-quick-start"),
        ("https://docs.example.org/elsewhere/a.html", "elsewhere-a"),
    ],
)
def test_page_slug_comes_from_the_path_under_the_scope(url: str, slug: str) -> None:
    assert page_slug(url, ROOT) == slug


def test_links_to_a_duplicate_url_point_at_the_page_it_duplicates() -> None:
    pages = [
        record("", 0, "home", title="Home", content_hash="c1"),
        record(
            "latest/", 1, None, status=PageStatus.SKIPPED, reason="duplicate", content_hash="c1"
        ),
        record("other.html", 2, "other", title="Other", content_hash="c2"),
    ]
    markdown = {
        "home": "# Home\n\nHi.\n",
        "other": f"# Other\n\n[home]({ROOT}latest/) and [gone]({ROOT}broken.html)\n",
    }
    recorder = Recorder()
    job = Job(job_id="j1", url=ROOT, options=CrawlOptions())
    write_outputs(job, pages, markdown.__getitem__, recorder.open)
    assert "[home](#home-1)" in recorder.text("docs.md")  # "home" is the document title
    assert f"[gone]({ROOT}broken.html)" in recorder.text("docs.md")
    assert "[home](0001-index.md)" in recorder.text("pages/0002-other.md")


def test_a_page_files_front_title_is_its_heading_as_read() -> None:
    page = record("s.html", 0, "s", title="Struct m::S", words=3)
    markdown = {"s": "# Struct [m](https://docs.example.org/docs/)::`S`\n\nA struct.\n"}
    job = Job(job_id="j1", url=ROOT, options=CrawlOptions())
    recorder = Recorder()
    write_outputs(job, [page], lambda key: markdown[key], recorder.open)
    assert recorder.text("pages/0001-s.md").startswith('---\ntitle: "Struct m::S"\n')


def test_element_ids_land_on_their_repeated_heading_in_both_outputs() -> None:
    """An element id under the second of two same-named headings points at that one's
    anchor, in the page's own file (``-1``) and in docs.md (the document's spelling)."""
    pages = [
        record("", 0, "a", title="A", words=5),
        record("api.html", 1, "b", title="API", words=5),
    ]
    markdown = {
        "a": f"# A\n\nSee [the second]({ROOT}api.html#tymethod.call) and [top]({ROOT}api.html#x).\n",
        "b": "# API\n\n## Methods\n\nOne.\n\n## Methods\n\nTwo.\n",
    }
    ids = {"b": {"tymethod.call": ["Methods", 1], "x": ["Nowhere", 0]}}
    job = Job(job_id="j1", url=ROOT, options=CrawlOptions())
    recorder = Recorder()
    write_outputs(job, pages, markdown.__getitem__, recorder.open, lambda key: ids.get(key, {}))
    page_a = recorder.text("pages/0001-index.md")
    assert "[the second](0002-api.md#methods-1)" in page_a
    assert "[top](0002-api.md#api)" in page_a  # an id under no heading: the page's top
    assert "[the second](#methods-1)" in recorder.text("docs.md")


@pytest.mark.parametrize("fragment", ["What's_New", "Über-Blick", "a\u0301b", "x--y__z", ""])
def test_loose_fragments_read_ascii_and_unicode_alike(fragment: str) -> None:
    """The ASCII table and the pattern drop the same characters."""
    from mdcrawl.assemble import _NOT_ALNUM, _loose

    assert _loose(fragment) == "~" + _NOT_ALNUM.sub("", fragment.lower())


def test_a_link_repeated_across_pages_is_rewritten_for_each_page() -> None:
    """The same link text on several pages (rewritings are remembered by link and by URL):
    on its target's own page it points at that page's top, elsewhere at the target's
    file; a fragment naming no heading is counted on every page, once per occurrence."""
    twice = (
        "[A](https://docs.example.org/docs/a.html) and"
        " [gone](https://docs.example.org/docs/a.html#nowhere)"
    )
    markdown = {
        "a": f"# Alpha\n\n{twice}\n",
        "b": f"# Beta\n\n{twice}, {twice}\n",
    }
    pages = [
        record("a.html", 0, "a", title="Alpha", words=3),
        record("b.html", 1, "b", title="Beta", words=3),
    ]
    job = Job(job_id="j1", url=ROOT + "a.html", options=CrawlOptions())
    recorder = Recorder()
    write_outputs(job, pages, markdown.__getitem__, recorder.open)
    alpha, beta = recorder.text("pages/0001-a.md"), recorder.text("pages/0002-b.md")
    assert "[A](#alpha) and [gone](#alpha)" in alpha
    assert beta.count("[A](0001-a.md) and [gone](0001-a.md)") == 2
    docs = recorder.text("docs.md")
    assert docs.count("[A](#alpha-1) and [gone](#alpha-1)") == 3  # "alpha": the title
    lines = [json.loads(line) for line in recorder.text("manifest.jsonl").splitlines()]
    unresolved = [line["warnings"].get("unresolved_links") for line in lines]
    assert unresolved == [1, 2]
