"""Walk every link in a crawl's outputs and say which in-bundle links do not resolve.

Written apart from ``mdcrawl.rewrite`` on purpose (a check that shares the code it checks
cannot fail): the markdown is parsed by markdown-it-py (CommonMark + GFM tables), heading
anchors are computed with github-slugger's rules from the rendered heading text, and a
raw ``id=``/``name=`` attribute counts as an anchor too.

An in-bundle link is a relative target (``other.md#x``, ``#x``) or an absolute URL of a
page the manifest lists with a file (the rewrite should have made it relative). It
resolves when its file exists in the bundle and its fragment, if any, is an anchor there.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

_HTML_ANCHOR = re.compile(r"""\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.I)
_HTML_HREF = re.compile(r"""\bhref\s*=\s*["']([^"']*)["']""", re.I)
_UNSAFE_SCHEMES = ("file:", "javascript:", "data:")


@dataclass
class LinkReport:
    links: int = 0  # every link target seen (markdown links and raw href)
    in_bundle: int = 0
    unresolved: list[tuple[str, str]] = field(default_factory=list)  # (file, target)
    absolute_to_bundle: list[tuple[str, str]] = field(default_factory=list)
    unsafe: list[tuple[str, str]] = field(default_factory=list)  # file:, javascript:, data:


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def github_slug(text: str) -> str:
    """github-slugger: lower case; drop what is not a letter, digit, mark, connector
    punctuation, hyphen or space; spaces become hyphens."""
    kept = []
    for ch in text.lower():
        category = unicodedata.category(ch)
        if ch in " -" or category[0] in "LNM" or category == "Pc":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def _heading_text(inline: Token) -> str:
    parts = []
    for child in inline.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type == "softbreak":
            parts.append(" ")
    return "".join(parts).strip()


def anchors(tokens: list[Token]) -> set[str]:
    """Every anchor a GitHub-style viewer gives the document."""
    found: set[str] = set()
    counts: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            base = github_slug(_heading_text(tokens[i + 1]))
            slug = base
            while slug in counts:
                counts[base] += 1
                slug = f"{base}-{counts[base]}"
            counts[slug] = 0
            found.add(slug)
        for html in _html_of(token):
            found.update(_HTML_ANCHOR.findall(html))
    return found


def _html_of(token: Token) -> Iterator[str]:
    if token.type in ("html_block", "html_inline"):
        yield token.content
    for child in token.children or []:
        if child.type == "html_inline":
            yield child.content


def link_targets(tokens: list[Token]) -> Iterator[str]:
    for token in tokens:
        for node in [token, *(token.children or [])]:
            if node.type == "link_open":
                yield str(node.attrs.get("href", ""))
        for html in _html_of(token):
            yield from _HTML_HREF.findall(html)


def check_bundle(out: Path) -> LinkReport:
    """Walk docs.md and pages/*.md under ``out``."""
    md = _parser()
    files = [out / "docs.md", *sorted((out / "pages").glob("*.md"))]
    parsed = {f: md.parse(f.read_text(encoding="utf-8")) for f in files if f.is_file()}
    known = {f.resolve(): anchors(tokens) for f, tokens in parsed.items()}
    bundled = _bundled_urls(out)
    report = LinkReport()
    for file, tokens in parsed.items():
        name = str(file.relative_to(out))
        for target in link_targets(tokens):
            report.links += 1
            _judge(file, name, target, known, bundled, report)
    return report


def _bundled_urls(out: Path) -> set[str]:
    manifest = out / "manifest.jsonl"
    urls = set()
    for line in manifest.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("file"):
            urls.add(_page_key(entry["url"]))
    return urls


def _page_key(url: str) -> str:
    parts = urlsplit(url)
    path = re.sub(r"/index\.html?$", "/", parts.path or "/")
    return f"{parts.scheme}://{parts.netloc}{path}"


def _judge(
    file: Path,
    name: str,
    target: str,
    known: dict[Path, set[str]],
    bundled: set[str],
    report: LinkReport,
) -> None:
    lowered = target.strip().lower()
    if lowered.startswith(_UNSAFE_SCHEMES):
        report.unsafe.append((name, target))
        return
    parts = urlsplit(target)
    if parts.scheme or target.startswith("//"):
        if parts.scheme in ("http", "https") and _page_key(target) in bundled:
            report.absolute_to_bundle.append((name, target))
        return
    report.in_bundle += 1
    path = file if not parts.path else (file.parent / unquote(parts.path))
    path = Path(str(PurePosixPath(path))).resolve()
    if path not in known or parts.fragment and unquote(parts.fragment) not in known[path]:
        report.unresolved.append((name, target))
