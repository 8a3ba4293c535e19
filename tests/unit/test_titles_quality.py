"""Site-level titles (titles.py), the quality report (quality.py), and links to ids."""

from __future__ import annotations

import json

from mdcrawl.assemble import write_outputs
from mdcrawl.models import CrawlOptions, Job, PageRecord, PageStatus
from mdcrawl.quality import RepeatedLines, line_hashes, page_warnings, prose_lines, raw_html_lines
from mdcrawl.titles import apply_retitle, site_retitles, url_name

from tests.unit.test_assemble import ROOT, Recorder


def page(path: str, n: int, title: str, **extra: object) -> PageRecord:
    return PageRecord(
        job_id="j1", url=ROOT + path, url_hash=f"h{n}", status=PageStatus.OK, order=n,
        title=title, markdown_key=path, words=extra.pop("words", 50), **extra,  # type: ignore[arg-type]
    )


SITE = "# Node.js documentation\n\n- [Home](https://docs.example.org/docs/)\n\n"
MARKDOWN = {
    "fs.html": SITE + "## File system\n\nRead files. See [open](https://docs.example.org/docs/"
    "path.html#path_join_paths) and [gone](https://docs.example.org/docs/path.html#nowhere).\n",
    "path.html": SITE + "## Path\n\nJoin.\n\n### path.join(paths)\n\nJoins.\n",
    "src/Data.Aeson.html": "# Node.js documentation\n\n```haskell\nmodule Data.Aeson\n```\n",
    "guide.html": "# Guide\n\nWords.\n",
}
PAGES = [
    page("fs.html", 1, "Node.js documentation"),
    page("path.html", 2, "Node.js documentation"),
    page("src/Data.Aeson.html", 3, "Node.js documentation", words=0),
    page("guide.html", 4, "Guide"),
]


def test_a_title_most_pages_share_gives_way_to_each_pages_own_heading():
    fixes = site_retitles(PAGES, MARKDOWN.__getitem__)
    assert {h: f.title for h, f in fixes.items()} == {
        "h1": "File system", "h2": "Path", "h3": "Data.Aeson",
    }
    markdown = apply_retitle(MARKDOWN["fs.html"], fixes["h1"])
    assert markdown.startswith("# File system\n\n- [Home]")
    assert "## File system" not in markdown
    assert site_retitles(PAGES[:2] + PAGES[3:], MARKDOWN.__getitem__) == {}  # shared by 2
    aeson = apply_retitle(MARKDOWN["src/Data.Aeson.html"], fixes["h3"])
    assert aeson.startswith("# Data.Aeson\n\n## Node.js documentation\n")  # kept, below


def test_url_name_skips_index_pages():
    assert url_name(ROOT + "api/index.html") == "api"
    assert url_name(ROOT + "src/Data.Aeson.html") == "Data.Aeson"


def test_warnings_of_one_page():
    md = "# T\n\n<table><tr><td>x</td></tr></table>\n\n`<b>` and \\<b> and <https://x.org>\n\n```py\nx\n"
    assert raw_html_lines(md) == 1
    assert page_warnings(md, 3, 2, 1) == {
        "repeated_lines": 2, "near_empty": 3, "unbalanced_fences": 1, "raw_html_lines": 1,
        "unresolved_links": 1,
    }
    assert page_warnings("# T\n\nfine\n", 0, 0, 0) == {"empty": 1}
    assert page_warnings("# T\n\n" + "word " * 30, 30, 0, 0) == {}


def test_lines_on_most_pages_are_flagged_as_possible_chrome():
    lines = RepeatedLines()
    chrome = "View as JSON · Edit on GitHub · Report a problem"
    for n in range(10):
        lines.sample(f"# Page {n}\n\n{chrome}\n\nContent of page number {n} alone.\n")
    assert lines.count(f"# X\n\n{chrome}\n\nSomething else entirely here.\n") == 1
    assert lines.count("```\n" + chrome + "\n```\n") == 0  # code is not chrome


def test_links_to_ids_land_on_their_heading_and_misses_are_reported():
    anchors = {"path.html": {"path_join_paths": ["path.join(paths)", 0]}}
    recorder = Recorder()
    job = Job(job_id="j1", url=ROOT, options=CrawlOptions())
    result = write_outputs(
        job, PAGES, MARKDOWN.__getitem__, recorder.open, lambda key: anchors.get(key, {})
    )
    fs = recorder.text("pages/0001-fs.md")
    assert "[open](0002-path.md#pathjoinpaths)" in fs
    assert "[gone](0002-path.md)" in fs  # no such id: the page's top, counted
    docs = recorder.text("docs.md")
    assert "[open](#pathjoinpaths)" in docs and "[gone](#path)" in docs
    manifest = [json.loads(line) for line in recorder.text("manifest.jsonl").splitlines()]
    by_title = {m["title"]: m for m in manifest}
    assert set(by_title) == {"File system", "Path", "Data.Aeson", "Guide"}
    assert by_title["File system"]["warnings"] == {"unresolved_links": 1}
    assert by_title["Data.Aeson"]["warnings"] == {"empty": 1}
    assert by_title["Guide"]["tokens"] == 4  # "# Guide\n\nWords.\n": 16 characters
    assert result.warnings == {"empty": 1, "unresolved_links": 1}
    assert result.pages_with_warnings == 2


def test_the_summary_line_sums_the_warnings():
    from mdcrawl.cli import quality_note

    assert quality_note({}) == ""
    assert quality_note({"pages_with_warnings": 0, "warnings": {}}) == ""
    note = quality_note({"pages_with_warnings": 3, "warnings": {"raw_html_lines": 1, "empty": 2}})
    assert note == "3 pages with warnings (1 raw HTML, 2 empty; see manifest.jsonl)"
    assert quality_note({"pages_with_warnings": 1, "warnings": {"near_empty": 1}}).startswith(
        "1 page with warnings (1 near-empty"
    )


def test_repeated_lines_are_counted_as_the_lines_read_one_by_one() -> None:
    """``count`` looks every line up at once (C speed): the same count as reading the
    prose lines one by one, blank lines, indented and code lines included."""
    chrome = "View as JSON · Edit on GitHub · Report a problem"
    page = (
        f"# T\n\n  {chrome}  \n\n\t{chrome}\n   \n```\n{chrome}\n```\n{chrome} and more\n"
        f"> {chrome}\n\n{chrome}"
    )
    lines = RepeatedLines()
    for n in range(4):
        lines.add_sample(line_hashes(f"# P{n}\n\n{chrome}\n\nThe words of page {n} alone.\n"))
    one_by_one = sum(1 for line in prose_lines(page) if hash(line) in lines.repeated())
    assert lines.count(page) == one_by_one == 3
    # an empty line is never counted, even were its hash among the repeated ones
    lines._repeated = lines.repeated() | {hash("")}
    assert lines.count(page + "\n\n\n") == 3


def test_raw_html_is_looked_for_on_lines_with_a_tag_only() -> None:
    md = "# T\n\n  <div>x</div>  \n\nplain\n\n```\n<b>in code</b>\n```\na <span>b</span>\n`<b>`\n"
    assert raw_html_lines(md) == 2
