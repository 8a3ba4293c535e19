"""`python -m tests.support.demo [--out DIR]`: the README's first command, offline.

Serves the Debian python-requests-doc site on 127.0.0.1 and crawls it with the CLI, so
anyone can see mdcrawl work without choosing a site or reaching the internet.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mdcrawl.cli import main as mdcrawl_main

from tests.support.server import serve_directory
from tests.support.sites import SITES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Crawl the requests docs served locally.")
    parser.add_argument("--out", type=Path, default=Path("mdcrawl-out/requests-docs"))
    args, extra = parser.parse_known_args(argv)
    site = SITES["requests"]
    if not (site.root / site.start.lstrip("/")).is_file():
        print(f"{site.package} is missing: run `make fixtures`", file=sys.stderr)
        return 1
    with serve_directory(site.root) as server:
        url = server.url(site.start)
        print(f"serving {site.root} at {server.base_url}; crawling {url}", file=sys.stderr)
        return mdcrawl_main(["crawl", url, "--out", str(args.out), *extra])


if __name__ == "__main__":
    sys.exit(main())


# --- helpers for the tests that drive the CLI --------------------------------------------


def crawl(url: str, cache_dir: Path, out: Path, *flags: str) -> int:
    """Run `mdcrawl crawl` in this process (quiet, isolated cache) and return its exit code."""
    return mdcrawl_main(
        ["crawl", url, "--cache-dir", str(cache_dir), "--out", str(out), "--quiet", *flags]
    )


def read_manifest(out: Path) -> list[dict[str, object]]:

    with (out / "manifest.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def write_site(root: Path, pages: dict[str, str]) -> Path:
    """A small site on disk: path -> body (HTML bodies get a minimal document around them)."""
    for path, body in pages.items():
        file = root / path.lstrip("/")
        file.parent.mkdir(parents=True, exist_ok=True)
        if path.endswith(".html") and "<html" not in body:
            title = path.rsplit("/", 1)[-1]
            body = (
                f"<!doctype html><html><head><title>{title}</title></head><body><main>"
                f"<h1>Page {title}</h1><p>Some words about {title} for the reader.</p>"
                f"{body}</main></body></html>"
            )
        file.write_text(body, encoding="utf-8")
    return root
