"""How faithfully a page's markdown keeps its content: a report runnable on any site.

    python -m mdcrawl.fidelity DIR [--base-url URL] [--worst N]

Each page is scored against the region its generator marks as content, found here
with this module's own short list of content selectors (not ``selectors.py``), so the
converter is not graded by its own rules. Only chrome the converter is asked to remove
(permalinks, copy buttons, source links, line-number gutters) is left out of that
region. Shares are 1.0 when a page has nothing to measure; site scores are the mean
over pages that had something, so an index or API page weighs as much as prose.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from urllib.parse import urljoin

import lxml.html
from lxml.html import HtmlElement

from .convert import convert_html
from .extract import decode_html, parse_html, select

# The content region as each generator marks it, most specific first.
CONTENT_REGIONS = (
    "div.body[role=main]",
    "div[itemprop=articleBody]",
    "article[role=main]",
    "article.md-content__inner",
    ".theme-doc-markdown",
    "#main-content",
    "div[role=main]",
    "main",
    "article",
    "#yui-main div.yui-b",  # Sphinx djangodocs theme (YUI grid)
    "div.contents",  # Doxygen
    "body > div.book",  # DocBook XSL, chunked: one of these per page
    "body > div.part",
    "body > div.chapter",
    "body > div.appendix",
    "body > div.preface",
    "body > div.refentry",
    "body > div.article",
    "body > div.section",
    "body > div.sect1",
    "body > div.reference",
    "body > div.index",
    "body > div.glossary",
    "body > div.set",
    "body",
)
# Inside the region, what the brief names as chrome (plus markup that is not text).
IGNORED = (
    "script",
    "style",
    "noscript",
    "template",
    "button",
    "a.headerlink",
    "a.anchor",
    "a.srclink",
    "a.src",
    ".linenos",
    "pre.line-numbers",
    "pre.src-line-numbers",
    ".example-line-numbers",
    "summary.hideme",
    ".copybtn",
    "a.test-arrow",
    "#versioninfo",
    "#copy-path",
    ".out-of-band",
    ".rightside",
    "nav.contents",
    ".contents.local",
    "a.md-content__button",
    ".tooltip",
    ".viewcode-link",
    ".viewcode-back",
    ".prev-next-area",  # prev/next links (pydata and book themes)
    ".prev-next-footer",
    "span.icona",  # Doxygen's lettered icons ("C" for a struct) beside index entries
    "td span.arrow",  # Doxygen's tree expanders (Prism marks "=>" in code span.arrow too)
)
# Outside the region: where navigation and footer text lives.
CHROME = (
    "nav",
    "footer",
    "header",
    ".sphinxsidebar",
    "[role=navigation]",
    ".related",
    ".footer",
    "aside.md-sidebar",
    ".bs-sidebar",
    ".navheader",
    ".navfooter",
    "#footer",
    "#toc",
)
_BLOCKS = (
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "tr",
    "td",
    "th",
    "table",
    "section",
    "pre",
    "br",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "details",
    "summary",
    "article",
    "aside",
    "main",
    "header",
    "footer",
    "label",  # tab labels side by side ("Tab 1Tab 2" in minified markup) read apart
)
_NAV_LINE_MIN = 12  # shorter lines ("Next", "Home") are too common to call a leak
_NO_LANG = {"", "none", "text", "default", "nohighlight", "plaintext"}
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language|lang|highlight)-([\w+#.-]+)")
_TOKEN = re.compile(r"[^\W_]+")
_FENCE_OPEN = re.compile(r"^((?:> ?|\s)*)(`{3,})([^`\s]*)\s*$")
_MD_LINK = re.compile(r"\]\(<?([^)\s>]*)[^)]*\)")
_MD_HEADING = re.compile(r"^(?:>\s?)*\s*#{1,6}\s+(.*)$", re.MULTILINE)
# An admonition's title heading ("<h3>Tip</h3>") becomes the label of its blockquote,
# as the brief asks: "> **Tip:** ...". That keeps the heading.
_MD_LABEL = re.compile(r"^(?:>\s?)+\*\*([^*\n]+?):\*\*", re.MULTILINE)
# Link targets are not text; an autolink's URL is (it is what the reader sees).
_URL_IN_MD = re.compile(r"\]\([^)]*\)")


@dataclass(frozen=True)
class PageScores:
    words: float = 1.0
    code_verbatim: float = 1.0
    code_language: float = 1.0
    headings: float = 1.0
    table_cells: float = 1.0
    nav_leak: float = 0.0
    links: float = 1.0
    # How many items each share was measured over (0 = nothing to measure).
    n_words: int = 0
    n_code: int = 0
    n_code_lang: int = 0
    n_headings: int = 0
    n_cells: int = 0
    n_lines: int = 0
    n_links: int = 0

    def worst_gap(self) -> float:
        """Distance of the worst share from its target, for ranking bad pages."""
        gaps = [TARGETS[name] - getattr(self, name) for name in SHARES]
        gaps.append(self.nav_leak - TARGETS["nav_leak"])
        return max(gaps)


SHARES = ("words", "code_verbatim", "code_language", "headings", "table_cells", "links")
_COUNT_OF = {
    "words": "n_words",
    "code_verbatim": "n_code",
    "code_language": "n_code_lang",
    "headings": "n_headings",
    "table_cells": "n_cells",
    "links": "n_links",
    "nav_leak": "n_lines",
}
TARGETS = {
    "words": 0.99,
    "code_verbatim": 0.99,
    "code_language": 0.95,
    "headings": 0.98,
    "table_cells": 0.98,
    "links": 0.98,
    "nav_leak": 0.005,
}


@dataclass(frozen=True)
class SiteScores:
    pages: int
    means: dict[str, float]  # per metric, mean over pages that had items to measure
    duplicates: int  # pages whose markdown is identical to an earlier page's
    worst: list[tuple[str, PageScores]]


# ---------------------------------------------------------------- one page


def score_page(html: bytes | str, url: str, markdown: str) -> PageScores:
    root = parse_html(decode_html(html))
    region = _content_region(root)
    chrome_lines = _chrome_lines(root, region)
    # A page whose generator marks no region is scored on its body, minus its chrome.
    ignored = IGNORED + CHROME if region.tag == "body" else IGNORED
    for element in [e for css in ignored for e in select(region, css)]:
        if element.getparent() is not None:
            element.drop_tree()
    _breaks_in_pre(region)
    fences, prose = parse_fences(markdown)
    # HTML blocks (tables GFM cannot hold) are read as rendered: their text, their pres.
    html_pres, prose_text = read_html_blocks(prose)
    code_blocks = fences + html_pres
    verbatim, lang, n_code, n_lang = _code_shares(region, code_blocks)  # before spacing
    _space_blocks(region)
    # Link targets are dropped from the prose only: in code, "[a](/b)" is all text.
    prose_text = _URL_IN_MD.sub("]", prose_text)
    readable = "\n".join([prose_text, *(f"{info}\n{body}" for info, body in fences)])
    # Emphasis markers split intraword words ("*PAM*s"): the reader sees one word.
    md_tokens = _tokens(readable.replace("*", ""))
    word_share, n_words = _word_share(region, md_tokens)
    headings, n_headings = _heading_share(region, prose)
    cells, n_cells = _cell_share(region, md_tokens)
    leak, n_lines = _nav_leak(prose, chrome_lines)
    links, n_links = _link_share(prose)
    return PageScores(
        word_share,
        verbatim,
        lang,
        headings,
        cells,
        leak,
        links,
        n_words,
        n_code,
        n_lang,
        n_headings,
        n_cells,
        n_lines,
        n_links,
    )


def _breaks_in_pre(region: HtmlElement) -> None:
    """Code is read as a browser shows it: a <br> in a <pre> starts a new line
    (Docusaurus writes each line as ``<div class=token-line>...<br></div>``)."""
    for pre in region.iter("pre"):
        for br in list(pre.iter("br")):
            br.tail = "\n" + (br.tail or "")
            br.drop_tag()


def _space_blocks(region: HtmlElement) -> None:
    """Minified HTML runs adjacent blocks together ("<li>a</li><li>b</li>" reads "ab");
    a browser shows them apart, so text is measured with a space at block edges."""
    for element in region.iter(*_BLOCKS):
        element.text = " " + (element.text or "")
        element.tail = " " + (element.tail or "")


def _content_region(root: HtmlElement) -> HtmlElement:
    for css in CONTENT_REGIONS:
        found = select(root, css)
        if found:
            return found[0]
    return root


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _word_share(region: HtmlElement, md_tokens: list[str]) -> tuple[float, int]:
    expected = Counter(_tokens(region.text_content()))
    have = Counter(md_tokens)
    total = sum(expected.values())
    kept = sum(min(n, have[word]) for word, n in expected.items())
    return (kept / total if total else 1.0), total


def parse_fences(markdown: str) -> tuple[list[tuple[str, str]], str]:
    """(info string, body) of each fenced block, blockquote/list prefixes removed; and
    the markdown outside the fences (where links and headings are looked for)."""
    blocks, prose, lines, i = [], [], markdown.split("\n"), 0
    while i < len(lines):
        match = _FENCE_OPEN.match(lines[i])
        if not match:
            prose.append(lines[i])
            i += 1
            continue
        prefix, ticks, info = match.groups()
        body, i = [], i + 1
        while i < len(lines) and lines[i][len(prefix) :].rstrip() != ticks:
            body.append(
                lines[i][len(prefix) :] if lines[i].startswith(prefix) else lines[i].lstrip("> ")
            )
            i += 1
        blocks.append((info, _normal_code("\n".join(body))))
        i += 1
    return blocks, "\n".join(prose)


_HTML_BLOCK_START = re.compile(r"^(?:>\s?|\s)*<(?:table|div|dl)\b", re.IGNORECASE)
_BLOCK_PREFIX = re.compile(r"^(?:>\s?|\s)*")


def read_html_blocks(prose: str) -> tuple[list[tuple[str, str]], str]:
    """The text of each HTML block (CommonMark: from a block-level tag to the next blank
    line) as a reader sees it rendered; and (language, text) of the pres inside them."""
    pres: list[tuple[str, str]] = []
    out: list[str] = []
    lines = prose.split("\n")
    i = 0
    while i < len(lines):
        if not _HTML_BLOCK_START.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        prefix = _BLOCK_PREFIX.match(lines[i]).group(0)  # type: ignore[union-attr]
        block = []
        while i < len(lines) and lines[i].strip(" >"):
            line = lines[i]
            block.append(line[len(prefix) :] if line.startswith(prefix) else line)
            i += 1
        fragment = lxml.html.fragment_fromstring("\n".join(block), create_parent="div")
        for pre in fragment.iter("pre"):
            named = _LANG_CLASS.search(pre.get("class") or "")
            pres.append((named.group(1) if named else "", _normal_code(pre.text_content())))
        _space_blocks(fragment)
        out.append(" ".join(fragment.text_content().split()))
    return pres, "\n".join(out)


def _normal_code(code: str) -> str:
    lines = [line.rstrip() for line in code.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _code_shares(
    region: HtmlElement, fences: list[tuple[str, str]]
) -> tuple[float, float, int, int]:
    pres = [pre for pre in region.iter("pre") if pre.text_content().strip()]
    bodies = {body for _, body in fences}
    langs_by_body = {body: info for info, body in fences}
    verbatim = named = lang_ok = 0
    for pre in pres:
        code = _normal_code(pre.text_content())
        verbatim += code in bodies
        wanted = _named_language(pre)
        if wanted is not None:
            named += 1
            got = langs_by_body.get(code, "")
            lang_ok += bool(got) and (wanted in _NO_LANG or got == wanted)
    n = len(pres)
    return (verbatim / n if n else 1.0), (lang_ok / named if named else 1.0), n, named


def _named_language(pre: HtmlElement) -> str | None:
    element: HtmlElement | None = pre
    for _ in range(4):
        if element is None:
            break
        classes = " ".join(
            filter(
                None,
                [element.get("class"), *(c.get("class") or "" for c in element.findall("code"))],
            )
        )
        match = _LANG_CLASS.search(classes)
        if match and match.group(1).lower() not in ("none", "nohighlight", "plaintext"):
            return match.group(1).lower()
        if element.tag == "pre" and "rust" in classes.split():
            return "rust"
        element = element.getparent()
    return None


def _heading_share(region: HtmlElement, markdown: str) -> tuple[float, int]:
    expected = [
        " ".join(_tokens(h.text_content())) for h in region.iter("h1", "h2", "h3", "h4", "h5", "h6")
    ]
    expected = [h for h in expected if h]
    titles = _MD_HEADING.findall(markdown) + _MD_LABEL.findall(markdown)
    found = {" ".join(_tokens(_URL_IN_MD.sub("]", m))) for m in titles}
    kept = sum(h in found for h in expected)
    return (kept / len(expected) if expected else 1.0), len(expected)


def _cell_share(region: HtmlElement, md_tokens: list[str]) -> tuple[float, int]:
    stream = " " + " ".join(md_tokens) + " "
    cells = [" ".join(_tokens(c.text_content())) for c in region.iter("td", "th")]
    cells = [c for c in cells if c]
    kept = sum(f" {c} " in stream for c in cells)
    return (kept / len(cells) if cells else 1.0), len(cells)


def _chrome_lines(root: HtmlElement, region: HtmlElement) -> set[str]:
    region_text = " ".join(_tokens(region.text_content()))
    lines = set()
    for css in CHROME:
        for box in select(root, css):
            if _inside(box, region) or _inside(region, box):
                continue
            for item in box.iter("a", "li", "p"):
                text = " ".join(_tokens(item.text_content()))
                if len(text) >= _NAV_LINE_MIN and text not in region_text:
                    lines.add(text)
    return lines


def _inside(element: HtmlElement, container: HtmlElement) -> bool:
    return (
        any(ancestor is container for ancestor in element.iterancestors()) or element is container
    )


def _nav_leak(markdown: str, chrome_lines: set[str]) -> tuple[float, int]:
    lines = markdown.split("\n")
    if lines and lines[0].startswith("# "):
        # The page's title heading (from its <title> when the content has no h1) names
        # the page itself, even when the sidebar repeats it: it is not a leak.
        lines = lines[1:]
    lines = [" ".join(_tokens(_URL_IN_MD.sub("]", line))) for line in lines]
    lines = [line for line in lines if line]
    leaked = sum(any(chrome in line for chrome in chrome_lines) for line in lines)
    return (leaked / len(lines) if lines else 0.0), len(lines)


def _link_share(markdown: str) -> tuple[float, int]:
    targets = [t for t in _MD_LINK.findall(markdown)]
    ok = sum(t.startswith(("http://", "https://", "mailto:", "#", "ftp://")) for t in targets)
    return (ok / len(targets) if targets else 1.0), len(targets)


# ---------------------------------------------------------------- a site


def score_site(
    root: Path,
    base_url: str = "https://docs.example/",
    worst: int = 10,
    files: Iterable[Path] | None = None,
) -> SiteScores:
    """Convert and score every HTML file under ``root`` (or the ``files`` given)."""
    paths = sorted(files if files is not None else root.rglob("*.html"))
    scored: list[tuple[str, PageScores]] = []
    seen: set[str] = set()
    duplicates = 0
    for path in paths:
        url = urljoin(base_url, path.relative_to(root).as_posix())
        body = path.read_bytes()
        markdown = convert_html(body, url).markdown
        digest = hashlib.sha256(markdown.encode()).hexdigest()
        duplicates += digest in seen
        seen.add(digest)
        scored.append((url, score_page(body, url, markdown)))
    scored.sort(key=lambda item: item[1].worst_gap(), reverse=True)
    return SiteScores(len(scored), site_means(s for _, s in scored), duplicates, scored[:worst])


def site_means(pages: Iterable[PageScores]) -> dict[str, float]:
    totals: dict[str, list[float]] = {name: [] for name in (*SHARES, "nav_leak")}
    for page in pages:
        for name, values in totals.items():
            if getattr(page, _COUNT_OF[name]):
                values.append(getattr(page, name))
    return {
        name: (sum(v) / len(v) if v else (0.0 if name == "nav_leak" else 1.0))
        for name, v in totals.items()
    }


def format_report(site: SiteScores) -> str:
    lines = [f"pages: {site.pages}   identical pages: {site.duplicates}"]
    for name, value in site.means.items():
        target = TARGETS[name]
        ok = value <= target if name == "nav_leak" else value >= target
        lines.append(
            f"  {name:<14} {value:.4f}  (target {'<=' if name == 'nav_leak' else '>='} "
            f"{target})  {'ok' if ok else 'BELOW'}"
        )
    lines.append("worst pages:")
    for url, page in site.worst:
        shown = ", ".join(
            f"{f.name}={getattr(page, f.name):.3f}"
            for f in fields(page)
            if not f.name.startswith("n_")
        )
        lines.append(f"  {url}\n    {shown}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mdcrawl.fidelity", description=__doc__)
    parser.add_argument("dir", type=Path, help="folder of HTML files (a built docs site)")
    parser.add_argument(
        "--base-url",
        default="https://docs.example/",
        help="URL the folder is served at (links resolve against it)",
    )
    parser.add_argument("--worst", type=int, default=10, help="how many worst pages to list")
    args = parser.parse_args(argv)
    base = args.base_url if args.base_url.endswith("/") else args.base_url + "/"
    print(format_report(score_site(args.dir, base, args.worst)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
