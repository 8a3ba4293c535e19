"""Conversion CPU per page, ours against the naive pipeline, on a doc tree's files.

    python -m bench.convert [--site django | --dir PATH [--manifest FILE]] [--limit N]
                            [--repeat N]
                            [--hashes FILE] [--compare FILE] [--no-naive]
                            [--template] [--no-rules]

No crawl, no server: every ``*.html`` under the tree is converted in this process
(``time.process_time``), ours then naive (readability-lxml ``Document.summary()`` +
markdownify) per page, so both see the same machine load. ``--hashes`` writes a
sha256 of each page's markdown; ``--compare`` checks them against an earlier file
(output must not change when only speed does). ``--template`` learns the site's template
from the first ``template.SAMPLE_SIZE`` pages first, as a crawl does, and spreads that
CPU over every page's time (each page is converted once: a page the unsettled template
could change waits for it); ``--no-rules`` turns the generator rules off. Nothing is
asserted on time. ``--manifest`` takes the pages a crawl of ``--dir`` kept, in its order
(its ``manifest.jsonl``; e.g. rustcore: ``bench.crawl``'s 2,400 pages from
``core/index.html``), instead of every file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

SITES = {
    "django": Path("/usr/share/doc/python-django-doc/html"),
    "python": Path("/usr/share/doc/python3.11/html"),
    "requests": Path("/usr/share/doc/python-requests-doc/html"),
    "mkdocs": Path("/usr/share/doc/mkdocs/html"),
    "proc_macro2": Path("/usr/share/doc/cargo/doc/proc_macro2"),
    "celery": Path("/usr/share/doc/python-celery-doc/html"),
}


def pages(root: Path, limit: int | None) -> list[tuple[str, bytes]]:
    files = sorted(p for p in root.rglob("*.html") if p.is_file())
    if limit:
        files = files[:limit]
    base = "http://127.0.0.1:8000/"
    return [(base + str(f.relative_to(root)), f.read_bytes()) for f in files]


def manifest_pages(root: Path, manifest: Path, limit: int | None) -> list[tuple[str, bytes]]:
    """The pages a crawl of ``root`` converted (status ok), read from their files."""
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    todo = []
    for row in rows:
        if row["status"] != "ok":
            continue
        path = row["url"].split("/", 3)[3].split("#")[0]
        file = root / path
        file = file / "index.html" if file.is_dir() else file
        todo.append(("http://127.0.0.1:8000/" + path, file.read_bytes()))
    return todo[:limit] if limit else todo


def ours(body: bytes, url: str, **settings: object) -> str:
    from mdcrawl.convert import convert_html

    return convert_html(body, url, **settings).markdown  # type: ignore[arg-type]


def learned(todo: list[tuple[str, bytes]], rules: bool) -> tuple[object, float, float]:
    """What a crawl spends on the template besides each page's one conversion: until it
    settles, a page no rule recognises waits for it, converted once at finalize (with
    rules on, telling costs a parse; a page a rule recognises is converted at once, its
    one conversion); then it is learned from the first SAMPLE_SIZE pages, unless rules
    found nearly all of them. Returns (template, learning ms, waiting checks ms)."""
    from mdcrawl.convert import depends_on_template, learn_template
    from mdcrawl.template import RULED_SHARE, SAMPLE_SIZE

    sample = todo[:SAMPLE_SIZE]
    start = time.process_time()
    waiting = [depends_on_template(body, None, rules) for _, body in sample]
    checks_ms = (time.process_time() - start) * 1000
    if rules and len(waiting) - sum(waiting) >= RULED_SHARE * len(sample):
        return None, 0.0, checks_ms
    start = time.process_time()
    template = learn_template([(body, None) for _, body in sample], rules)
    return template, (time.process_time() - start) * 1000, checks_ms


def naive(body: bytes, url: str) -> str:
    from markdownify import markdownify
    from readability import Document

    return markdownify(Document(body.decode("utf-8", "replace")).summary())


def timed(fn, body: bytes, url: str, repeat: int, **settings) -> tuple[float, str]:  # noqa: ANN001
    best = float("inf")
    out = ""
    for _ in range(repeat):
        start = time.process_time()
        out = fn(body, url, **settings)
        best = min(best, time.process_time() - start)
    return best * 1000, out


def describe(label: str, times: list[float]) -> str:
    p90 = statistics.quantiles(times, n=10)[-1] if len(times) > 1 else times[0]
    return (
        f"{label}: median {statistics.median(times):6.2f} ms/page, p90 {p90:6.2f}, "
        f"total {sum(times) / 1000:6.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", choices=sorted(SITES))
    parser.add_argument("--dir", type=Path)
    parser.add_argument("--manifest", type=Path, help="the pages a crawl of --dir kept")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--repeat", type=int, default=1, help="best of N per page")
    parser.add_argument("--hashes", type=Path, help="write {url: sha256} here")
    parser.add_argument("--compare", type=Path, help="compare with an earlier --hashes file")
    parser.add_argument("--no-naive", action="store_true")
    parser.add_argument("--template", action="store_true", help="learn the site's template")
    parser.add_argument("--no-rules", action="store_true", help="generator rules off")
    args = parser.parse_args()
    roots = [args.dir] if args.dir else [SITES[args.site or "django"]]
    if args.manifest:
        todo = manifest_pages(roots[0], args.manifest, args.limit)
    else:
        todo = [page for root in roots for page in pages(root, args.limit)]
    ours(b"<html><body><p>warm</p></body></html>", "http://x/")  # imports
    naive(b"<html><body><p>warm up</p></body></html>", "http://x/")
    our_ms, naive_ms, hashes = [], [], {}
    settings: dict[str, object] = {"generator_rules": False} if args.no_rules else {}
    extra_ms = 0.0
    if args.template:
        settings["template"], learning_ms, checks_ms = learned(todo, not args.no_rules)
        # Each page is converted once (below); learning and the waiting checks are extra.
        extra_ms = learning_ms + checks_ms
        print(
            f"template learned in {learning_ms:.0f} ms CPU; sample pages checked for a rule "
            f"in {checks_ms:.0f} ms: {extra_ms:.0f} ms spread over the pages"
        )
    for url, body in todo:
        ms, markdown = timed(ours, body, url, args.repeat, **settings)
        our_ms.append(ms + extra_ms / len(todo))
        hashes[url] = hashlib.sha256(markdown.encode()).hexdigest()
        if not args.no_naive:
            naive_ms.append(timed(naive, body, url, args.repeat)[0])
    print(f"{len(todo)} pages from {', '.join(map(str, roots))}")
    print(describe("ours ", our_ms))
    if naive_ms:
        print(describe("naive", naive_ms))
        print(f"ours / naive CPU  {sum(our_ms) / sum(naive_ms):.3f}")
    rows = sorted(zip(our_ms, todo, strict=True), key=lambda r: -r[0])[:5]
    for ms, (url, body) in rows:
        print(f"  {ms:7.1f} ms {len(body) / 1024:6.0f} KiB  {url.rsplit('/', 2)[-2:]}")
    if args.hashes:
        args.hashes.write_text(json.dumps(hashes, indent=0, sort_keys=True))
    if args.compare:
        before = json.loads(args.compare.read_text())
        changed = sorted(u for u in hashes if before.get(u) != hashes[u])
        print(f"markdown changed on {len(changed)} of {len(hashes)} pages")
        for url in changed[:20]:
            print("  changed:", url)
        if changed:
            sys.exit(1)


if __name__ == "__main__":
    main()
