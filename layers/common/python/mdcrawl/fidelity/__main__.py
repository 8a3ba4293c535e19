"""``python -m mdcrawl.fidelity DIR``: crawl a folder of built HTML docs with mdcrawl
(served on 127.0.0.1) and print how faithfully each metric kept it."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from . import find_gold, load_gold
from .report import format_report
from .run import crawl, serve_folder
from .site import score_bundle


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mdcrawl.fidelity", description=__doc__)
    parser.add_argument("dir", type=Path, help="folder of HTML files (a built docs site)")
    parser.add_argument("--start", default="index.html", help="start page, relative to DIR")
    parser.add_argument("--gold", type=Path, help="gold file (default: generic fallback)")
    parser.add_argument("--gold-dir", type=Path, help="folder of <site>.toml gold files")
    parser.add_argument("--site", default="", help="site name to look up in --gold-dir")
    parser.add_argument("--bundle", type=Path, help="score this crawl output (no crawl)")
    parser.add_argument("--base-url", help="URL DIR was served at for --bundle")
    parser.add_argument("--worst", type=int, default=3, help="worst pages listed per metric")
    parser.add_argument("crawl_args", nargs="*", help="after --: extra `mdcrawl crawl` args")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    gold = load_gold(args.gold) if args.gold else find_gold(args.gold_dir, args.site)
    if args.bundle:
        result = score_bundle(args.bundle, args.dir, args.base_url or "", gold)
    else:
        with tempfile.TemporaryDirectory() as work, serve_folder(args.dir) as base:
            code, bundle = crawl(base + args.start, Path(work), args.crawl_args)
            if code != 0:
                print(f"mdcrawl crawl exited {code}", file=sys.stderr)
                return code
            result = score_bundle(bundle, args.dir, base, gold)
    print(format_report(result, args.worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
