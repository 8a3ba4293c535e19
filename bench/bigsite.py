"""A generated documentation site of any size, for scale runs of the AWS pipeline.

    python -m bench.bigsite OUT [--pages 10000]
    python -m bench.cost --serve OUT --max-pages 10000 --fresh-only

Built like a real docs site so the crawl does real work: a root index, one index page per
section, and pages in sections of ``SECTION_PAGES``. Every page has the chrome a
generator writes (header, a sidebar with every section and the current section's pages,
breadcrumbs, "Previous / Next", a footer), and content that varies: headings with ids,
paragraphs with inline code, a fenced-looking ``<pre><code>`` block, a parameter table,
links to related pages in other sections and to anchors on them. The same arguments
always give the same bytes (no randomness, no dates), so runs compare.
"""

from __future__ import annotations

import argparse
import html
from pathlib import Path

SECTION_PAGES = 100
WORDS = (
    "request", "response", "handler", "client", "server", "option", "value", "default",
    "timeout", "retry", "buffer", "stream", "record", "index", "query", "cursor", "session",
    "token", "schema", "field", "parser", "encoder", "decoder", "channel", "worker", "queue",
    "lease", "batch", "cache", "entry", "policy", "limit", "window",
)


def layout(pages: int) -> list[list[str]]:
    """Page paths by section: ``s{i}/index.html`` then ``s{i}/p{j}.html``."""
    sections = max(1, -(-(pages - 1) // (SECTION_PAGES + 1)))
    out: list[list[str]] = []
    left = pages - 1  # the root index
    for i in range(sections):
        size = min(SECTION_PAGES + 1, left)
        out.append([f"s{i}/index.html"] + [f"s{i}/p{j}.html" for j in range(size - 1)])
        left -= size
    return out


def words(seed: int, count: int) -> str:
    return " ".join(WORDS[(seed * 7 + k * 13) % len(WORDS)] for k in range(count))


def sidebar(sections: list[list[str]], current: int) -> str:
    items = []
    for i, paths in enumerate(sections):
        sub = ""
        if i == current:
            sub = "<ul>" + "".join(
                f'<li><a href="/{p}">{_title(p)}</a></li>' for p in paths[1:]
            ) + "</ul>"
        items.append(f'<li><a href="/{paths[0]}">Section {i}</a>{sub}</li>')
    return f'<nav class="sidebar"><ul>{"".join(items)}</ul></nav>'


def content(path: str, n: int, flat: list[str]) -> str:
    related = [flat[(n * 31 + k * 997) % len(flat)] for k in range(3)]
    links = ", ".join(f'<a href="/{p}#usage">{_title(p)}</a>' for p in related)
    rows = "".join(
        f"<tr><td><code>{WORDS[(n + k) % len(WORDS)]}</code></td><td>{words(n + k, 8)}</td></tr>"
        for k in range(4)
    )
    code = html.escape(
        f"client = Client(timeout={n % 30 + 1})\n"
        f"for record in client.query('{WORDS[n % len(WORDS)]}'):\n"
        f"    print(record.field_{n % 9})\n"
    )
    return (
        f"<h1>{_title(path)}</h1><p>{words(n, 40)} with <code>{WORDS[n % len(WORDS)]}()</code>."
        f"</p><h2 id=\"usage\">Usage</h2><p>{words(n + 1, 60)}</p>"
        f'<pre><code class="language-python">{code}</code></pre>'
        f'<h2 id="parameters">Parameters</h2><table><thead><tr><th>name</th>'
        f"<th>meaning</th></tr></thead><tbody>{rows}</tbody></table>"
        f'<h2 id="see-also">See also</h2><p>{words(n + 2, 20)}: {links}.</p>'
    )


def page(path: str, n: int, flat: list[str], sections: list[list[str]], section: int) -> str:
    prev_link = f'<a rel="prev" href="/{flat[n - 1]}">Previous</a>' if n > 0 else ""
    next_link = f'<a rel="next" href="/{flat[n + 1]}">Next</a>' if n + 1 < len(flat) else ""
    crumbs = '<a href="/index.html">Docs</a>'
    if section >= 0:
        crumbs += f' » <a href="/s{section}/index.html">Section {section}</a>'
    body = content(path, n, flat)
    if path.endswith("index.html"):
        children = sections[section][1:] if section >= 0 else [s[0] for s in sections]
        body += "<ul>" + "".join(f'<li><a href="/{p}">{_title(p)}</a></li>' for p in children)
        body += "</ul>"
    return (
        f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{_title(path)} — Bigdoc"
        f"</title></head><body><header><a href=\"/index.html\">Bigdoc</a> "
        f"<form><input name=\"q\" placeholder=\"Search\"></form></header>"
        f"{sidebar(sections, section)}<main><div class=\"breadcrumbs\">{crumbs}</div>"
        f"<article>{body}</article><div class=\"pager\">{prev_link} {next_link}</div></main>"
        f"<footer>© Bigdoc authors. Built with Nobodydoc.</footer></body></html>"
    )


def write_site(out: Path, pages: int) -> int:
    sections = layout(pages)
    flat = ["index.html"] + [p for paths in sections for p in paths]
    for n, path in enumerate(flat):
        section = -1 if n == 0 else int(path.split("/")[0][1:])
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page(path, n, flat, sections, max(section, 0) if n else -1))
    return len(flat)


def _title(path: str) -> str:
    name = path.rsplit("/", 1)[-1].removesuffix(".html")
    section = path.split("/")[0]
    return "Bigdoc" if path == "index.html" else f"{section.upper()} {name}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pages", type=int, default=10_000)
    args = parser.parse_args(argv)
    print(f"{write_site(args.out, args.pages)} pages in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
