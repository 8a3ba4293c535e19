"""The fidelity scorer on a hand-made site whose good output is written by hand: the good
output meets every target, and each metric falls below its target when the output is
damaged the way a converter can damage it. A metric is trusted only once it can fail."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mdcrawl.fidelity import LOWER_IS_BETTER, SITE_METRICS, load_gold, score_bundle, score_page
from mdcrawl.fidelity.mdread import github_slug, read_markdown
from mdcrawl.fidelity.targets import TARGETS

HERE = Path(__file__).parent.parent / "fixtures" / "fidelity"
BASE = "http://127.0.0.1:8000/"
GUIDE = "pages/0001-guide.md"


def score(bundle: Path) -> dict[str, float]:
    result = score_bundle(bundle, HERE / "site", BASE, load_gold(HERE / "gold.toml"))
    return {metric: result.metrics[metric].mean for metric in SITE_METRICS}


def meets(metric: str, value: float) -> bool:
    target = TARGETS[metric]
    return value <= target if metric in LOWER_IS_BETTER else value >= target


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    shutil.copytree(HERE / "bundle", tmp_path / "bundle")
    return tmp_path / "bundle"


def edit(bundle: Path, change: Callable[[str], str], file: str = GUIDE) -> None:
    path = bundle / file
    path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")


def test_the_good_output_meets_every_target(bundle: Path) -> None:
    scores = score(bundle)
    assert [m for m, v in scores.items() if not meets(m, v)] == []


def _drop_links(md: str) -> str:
    return re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", md)


def _wrong_fragment(md: str) -> str:
    return md.replace("0002-api.md#connection", "0002-api.md#connect-fn").replace(
        "#install-the-tool", "#install"
    )


def _absolute_in_bundle(md: str) -> str:
    return md.replace("0002-api.md#connection", BASE + "api.html#connect-fn")


def _append_nav(md: str) -> str:
    nav = "\n- [Getting started with the guide](0001-guide.md)\n- Application programming interface\n"
    return md + nav * 3 + "\nCopyright 2026 the example documentation authors\n"


def _reverse_blocks(md: str) -> str:
    return "\n\n".join(reversed(md.split("\n\n")))


def _raw_html(md: str) -> str:
    paragraphs = md.split("\n\n")
    return "\n\n".join(
        f'<div class="para"><p>{p}</p></div>' if not p.startswith(("#", "`", "|")) else p
        for p in paragraphs
    )


def _no_fences(md: str) -> str:
    return re.sub(r"```\w*\n", "    ", md).replace("```", "")


def _no_languages(md: str) -> str:
    return re.sub(r"```(\w+)", "```", md)


def _line_numbers(md: str) -> str:
    def number(match: re.Match[str]) -> str:
        lines = match.group(2).split("\n")
        return match.group(1) + "\n".join(f"{i:>2}  {line}" for i, line in enumerate(lines, 1))

    return re.sub(r"(```\w*\n)(.*?)(?=\n```)", number, md, flags=re.S)


def _code_changed(md: str) -> str:
    return md.replace("example-tool --version", "example-tool -V").replace(
        "client.close()", "client.close( )"
    )


def _no_headings(md: str) -> str:
    return re.sub(r"^#+ ", "", md, flags=re.M)


def _no_cells(md: str) -> str:
    return re.sub(r"^\|.*\n", "", md, flags=re.M)


def _half_the_words(md: str) -> str:
    return "\n".join(line for i, line in enumerate(md.split("\n")) if i % 2 == 0 or "`" in line)


def _padding(md: str) -> str:
    return md + "\n\n" + "Subscribe to our newsletter for weekly product updates and offers.\n" * 4


DAMAGE = {
    "links: links dropped": ("links", _drop_links),
    "links: fragments no heading defines": ("links", _wrong_fragment),
    "links: in-bundle page linked by its web URL": ("links", _absolute_in_bundle),
    "chrome_leak: nav and footer appended": ("chrome_leak", _append_nav),
    "order: blocks reversed": ("order", _reverse_blocks),
    "raw_html: paragraphs left as HTML": ("raw_html", _raw_html),
    "code_verbatim: fences removed": ("code_verbatim", _no_fences),
    "code_verbatim: code altered": ("code_verbatim", _code_changed),
    "code_language: languages removed": ("code_language", _no_languages),
    "code_unnumbered: line numbers added": ("code_unnumbered", _line_numbers),
    "headings: headings made plain text": ("headings", _no_headings),
    "table_cells: table rows dropped": ("table_cells", _no_cells),
    "recall: half the lines lost": ("recall", _half_the_words),
    "precision: words from nowhere added": ("precision", _padding),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_damage_drops_the_metric_below_its_target(case: str, bundle: Path) -> None:
    metric, damage = DAMAGE[case]
    for file in (GUIDE, "pages/0002-api.md"):
        edit(bundle, damage, file)
    assert meets(metric, score(bundle)[metric]) is False


def test_duplicated_titles_fail_the_title_metric(bundle: Path) -> None:
    entries = [json.loads(line) for line in (bundle / "manifest.jsonl").read_text().splitlines()]
    for entry in entries:
        entry["title"] = "Example Docs"
    (bundle / "manifest.jsonl").write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    assert meets("titles", score(bundle)["titles"]) is False


def test_a_metric_counts_a_five_percent_tail_not_only_the_mean() -> None:
    from mdcrawl.fidelity.metrics import Score
    from mdcrawl.fidelity.site import PageResult, aggregate

    pages = [PageResult(f"u{i}", "f", {m: Score(1.0, 1) for m in SITE_METRICS}) for i in range(19)]
    pages.append(PageResult("bad", "f", {m: Score(0.5 if m == "recall" else 1.0, 1)
                                         for m in SITE_METRICS}))
    recall = aggregate(pages)["recall"]
    assert recall.mean > 0.97 and recall.tail == 0.5


def test_github_slugs_and_explicit_anchors() -> None:
    assert github_slug("Install the `tool` (v2)!") == "install-the-tool-v2"
    assert github_slug("[Réglages](#x) généraux") == "réglages-généraux"
    md = read_markdown('# A\n\n## A\n\n<a id="raw-id"></a>\n\nText {#attr-id}\n')
    assert md.anchors == {"a", "a-1", "raw-id", "attr-id"}


def test_without_gold_the_generic_fallback_reads_landmarks() -> None:
    html = (HERE / "site" / "api.html").read_text().replace('<div class="body">', "<main>")
    html = html.replace("</div>\n<footer>", "</main>\n<footer>")
    good = (HERE / "bundle" / "pages" / "0002-api.md").read_text()
    md = good.replace("(0001-guide.md)", f"({BASE}guide.html)")  # no bundle: absolute
    scores = score_page(html, BASE + "api.html", md)
    assert scores["recall"].value == 1.0 and scores["links"].value == 1.0
    leaked = score_page(html, BASE + "api.html", md + "\n\nApplication programming interface\n")
    assert leaked["chrome_leak"].value > TARGETS["chrome_leak"]


def test_the_scorer_imports_nothing_of_the_converter() -> None:
    """Run in a fresh interpreter: importing every scoring module must not load the
    converter's modules (the crawl runner, run.py, imports the CLI only when it runs a crawl)."""
    code = (
        "import sys, mdcrawl.fidelity, mdcrawl.fidelity.__main__, mdcrawl.fidelity.run;"
        "bad = [m for m in sys.modules if m.split('.')[:2] in (['mdcrawl','extract'],"
        "['mdcrawl','selectors'],['mdcrawl','markdown'],['mdcrawl','convert'])];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_without_a_manifest_title_the_first_h1_is_the_title(bundle: Path) -> None:
    lines = (bundle / "manifest.jsonl").read_text().splitlines()
    entries = [{k: v for k, v in json.loads(line).items() if k != "title"} for line in lines]
    (bundle / "manifest.jsonl").write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    assert score(bundle)["titles"] == 1.0
    edit(bundle, lambda md: md.replace("# API\n", "# Guide\n"), "pages/0002-api.md")
    assert score(bundle)["titles"] == 0.0  # two pages, different content, one title


def test_a_link_to_the_page_itself_may_land_on_its_title_anchor() -> None:
    """`[git-notes(1)](git-notes.html)` on git-notes.html: the page's top, or its title's
    anchor (where the top is); another heading of the page is another place."""
    html = (
        '<html><body><div class="body"><h1>Notes</h1><p>See <a href="notes.html">notes</a>'
        "</p><h2>Usage</h2><p>Use it.</p></div></body></html>"
    )
    url = BASE + "notes.html"
    body = "# Notes\n\nSee [notes]({})\n\n## Usage\n\nUse it.\n"
    assert score_page(html, url, body.format("#notes"))["links"].value == 1.0
    assert score_page(html, url, body.format("#usage"))["links"].value == 0.0


def test_a_link_to_an_id_the_page_lacks_lands_on_the_page_itself() -> None:
    """`#v:arbitrary` names no element (Haddock links a class method not on the page):
    a browser stays on the page; its top or its title's anchor, not another heading."""
    html = (
        '<html><body><div class="body"><h1>Notes</h1><p>See <a href="#v:gone">gone</a>'
        "</p><h2>Usage</h2><p>Use it.</p></div></body></html>"
    )
    url = BASE + "notes.html"
    body = "# Notes\n\nSee [gone]({})\n\n## Usage\n\nUse it.\n"
    assert score_page(html, url, body.format("#notes"))["links"].value == 1.0
    assert score_page(html, url, body.format("#usage"))["links"].value == 0.0
