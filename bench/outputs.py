"""What the outputs of a crawl look like, per site: raw HTML, links, headings, titles.

    python -m bench.outputs [--site NAME ...] [--keep DIR]

Serves each site on 127.0.0.1, crawls it with the CLI (isolated cache), and prints per
site: pages, raw-HTML lines (markdown-it's html blocks and inline HTML, outside code),
in-bundle links and how many do not resolve (tests/support/linkcheck.py), absolute links
left pointing at a bundled page, file:/javascript:/data: links, headings that keep a
permalink glyph, and pages whose title another page also has. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

from markdown_it import MarkdownIt

from tests.support.demo import crawl
from tests.support.linkcheck import check_bundle
from tests.support.server import serve_directory

SITES = {
    "requests": ("/usr/share/doc/python-requests-doc/html", "/index.html"),
    "mkdocs": ("/usr/share/doc/mkdocs/html", "/index.html"),
    "flask": ("/usr/share/doc/python-flask-doc/html", "/index.html"),
    "glib": ("/usr/share/gtk-doc/html/glib", "/index.html"),
    "nodejs": ("/usr/share/doc/nodejs/api", "/index.html"),
    "aeson": ("/usr/share/doc/libghc-aeson-doc/html", "/index.html"),
    "sbcl": ("/usr/share/doc/sbcl/sbcl-internals", "/index.html"),
}
_GLYPH = re.compile(r"(?:[#¶§🔗]|\bpermalink\b)\s*$", re.I)


def measure(out: Path) -> dict[str, object]:
    md = MarkdownIt("commonmark").enable("table")
    raw_lines = glyphs = 0
    for file in sorted((out / "pages").glob("*.md")):
        tokens = md.parse(file.read_text(encoding="utf-8"))
        raw_lines += _raw_html_lines(tokens)
        glyphs += sum(
            1
            for i, t in enumerate(tokens)
            if t.type == "heading_open" and _GLYPH.search(tokens[i + 1].content)
        )
    manifest = [json.loads(line) for line in (out / "manifest.jsonl").open(encoding="utf-8")]
    titles = Counter(e["title"] for e in manifest if e.get("file"))
    links = check_bundle(out)
    return {
        "pages": sum(titles.values()),
        "raw_html_lines": raw_lines,
        "in_bundle_links": links.in_bundle,
        "unresolved": len(links.unresolved),
        "absolute_to_bundle": len(links.absolute_to_bundle),
        "unsafe_links": len(links.unsafe),
        "glyph_headings": glyphs,
        "dup_titles": sum(n for n in titles.values() if n > 1),
    }


def _raw_html_lines(tokens: list) -> int:  # noqa: ANN001 - markdown-it tokens
    lines = 0
    for token in tokens:
        if token.type == "html_block" and token.map:
            lines += token.map[1] - token.map[0]
        elif token.type == "inline" and any(c.type == "html_inline" for c in token.children or []):
            lines += 1
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--site", action="append", choices=sorted(SITES))
    parser.add_argument("--keep", type=Path, help="write each site's outputs under DIR/NAME")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.site or list(SITES):
            root, start = SITES[name]
            out = (args.keep or Path(tmp)) / name
            with serve_directory(root) as server:
                crawl(server.url(start), Path(tmp) / "cache", out)
            print(name, json.dumps(measure(out)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
