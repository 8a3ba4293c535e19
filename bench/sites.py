"""How the converter does on whole doc trees, with or without rules and a learned template.

    python -m bench.sites DIR [DIR...] [--limit N] [--no-rules] [--no-template] [--out DIR]

Every ``*.html`` under each tree (sorted, at most ``--limit``) is converted; the template
is learned from the first ``template.SAMPLE_SIZE`` of them, as a crawl learns it from its
first pages in discovery order. Printed per site, as means over pages (fidelity itself:
``python -m mdcrawl.fidelity``, which crawls and scores against gold files):

- ``repeated``: the share of output lines (not blank, not fences) that also appear on at
  least 40 % of the site's pages: chrome that leaked (a site's real content rarely repeats);
- ``lines`` and ``words`` per page, and which extractor picked the region.

``--out`` writes each page's markdown there, for reading. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter
from pathlib import Path
from urllib.parse import urljoin

from mdcrawl.convert import convert_html

REPEAT_SHARE = 0.4


def site_files(root: Path, limit: int | None) -> list[tuple[str, bytes]]:
    files = sorted(p for p in root.rglob("*.html") if p.is_file())[: limit or None]
    base = "http://127.0.0.1:8000/"
    return [(urljoin(base, str(f.relative_to(root))), f.read_bytes()) for f in files]


def repeated_share(pages: list[str]) -> float:
    """Share of lines (over all pages) that appear on at least REPEAT_SHARE of pages."""
    per_page = [[ln.strip() for ln in md.splitlines()[1:] if _countable(ln)] for md in pages]
    df = Counter(line for lines in per_page for line in set(lines))
    floor = max(2, REPEAT_SHARE * len(pages))
    total = sum(len(lines) for lines in per_page)
    repeated = sum(1 for lines in per_page for line in lines if df[line] >= floor)
    return repeated / total if total else 0.0


def _countable(line: str) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith("```") and text not in ("---", "|", "* * *")


def measure(root: Path, args: argparse.Namespace) -> None:
    todo = site_files(root, args.limit)
    template = None
    if args.baseline and args.no_rules:
        import mdcrawl.extract  # an older converter had no switch: no rule is ever found

        mdcrawl.extract.detect_generator = lambda root: None  # type: ignore[assignment]
    if not args.no_template and not args.baseline:
        from mdcrawl.convert import learn_template
        from mdcrawl.template import SAMPLE_SIZE

        sample = [(body, None) for _, body in todo[:SAMPLE_SIZE]]
        template = learn_template(sample, not args.no_rules)
    outputs, extractors = [], Counter()
    for url, body in todo:
        if args.baseline:  # today's converter, as it was before templates
            page = convert_html(body, url)
        else:
            page = convert_html(body, url, template=template, generator_rules=not args.no_rules)
        outputs.append(page.markdown)
        extractors[page.extractor.split(":")[0]] += 1
        if args.out:
            name = url.rsplit("/", 1)[-1].replace(".html", ".md")
            folder = args.out / root.name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(page.markdown)
    lines = statistics.mean(len(md.splitlines()) for md in outputs)
    words = statistics.mean(len(md.split()) for md in outputs)
    print(
        f"{root}: {len(todo)} pages, template {template.id if template else '-'}\n"
        f"  repeated {repeated_share(outputs):.3f}  lines/page {lines:.0f}  "
        f"words/page {words:.0f}  extractors {dict(extractors)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--no-rules", action="store_true", help="generator rules off")
    parser.add_argument("--no-template", action="store_true", help="no learned template")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="convert_html(body, url) only, as an older converter (PYTHONPATH) is called",
    )
    args = parser.parse_args()
    for root in args.dirs:
        measure(root, args)


if __name__ == "__main__":
    main()
