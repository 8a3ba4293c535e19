"""`mdcrawl list`, `search`, `diff` (the docs library) and `mcp` (the MCP server on stdio).

Registered by cli.py with one call, like serve's commands; each handler returns the exit
code."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import httpx

from ..errors import MdcrawlError
from ..runtime.local import cache_root
from .changes import changes_md
from .pull import pull
from .store import Library, Snapshot

EXIT_OK, EXIT_NOT_FOUND = 0, 1


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    listing = commands.add_parser("list", help="list the sites and versions in the library")
    _common(listing)
    listing.set_defaults(handler=list_command)

    search = commands.add_parser("search", help="search the library's docs (BM25)")
    search.add_argument("query", help="what you are looking for, in your own words")
    search.add_argument("--site", metavar="S", help="only this site (a part of its name)")
    search.add_argument("--version", dest="docs_version", metavar="V", help="only this version")
    search.add_argument("--limit", type=int, default=5, metavar="N", help="passages (default 5)")
    _common(search)
    search.set_defaults(handler=search_command)

    diff = commands.add_parser("diff", help="what changed in a site since its previous crawl")
    diff.add_argument("site", metavar="SITE", help="the site (a part of its name will do)")
    diff.add_argument("--patch", action="store_true", help="a unified diff per changed page")
    _common(diff)
    diff.set_defaults(handler=diff_command)

    pull = commands.add_parser(
        "pull", help="bring a finished hosted job (AWS or serve) into the local library"
    )
    pull.add_argument("job_id", metavar="JOB_ID")
    pull.add_argument("--api", required=True, metavar="URL", help="the API's base URL")
    pull.add_argument("--api-key", required=True, metavar="KEY")
    pull.add_argument("--label", metavar="NAME", help="the version's name in the library")
    _common(pull)
    pull.set_defaults(handler=pull_command)

    mcp = commands.add_parser(
        "mcp", help="serve the library to coding agents: an MCP server on stdio"
    )
    mcp.add_argument("--cache-dir", type=Path, metavar="DIR", help="cache and library folder")
    mcp.set_defaults(handler=mcp_command)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-dir", type=Path, metavar="DIR", help="cache and library folder")
    parser.add_argument("--json", action="store_true", help="JSON instead of text")


def _library(args: argparse.Namespace) -> Library:
    return Library(cache_root(args.cache_dir))


def list_command(args: argparse.Namespace) -> int:
    snapshots = _library(args).snapshots()
    if args.json:
        print(json.dumps([s.to_dict() for s in snapshots], indent=1))
    elif not snapshots:
        print("The library is empty: `mdcrawl crawl URL` adds a site.")
    else:
        print(f"{'SITE':40} {'VERSION':12} {'PAGES':>6} {'TOKENS':>10}  AGE")
        for s in snapshots:
            print(f"{s.site:40} {s.version:12} {s.pages:>6} {s.tokens:>10,}  {_age(s)}")
    return EXIT_OK


def _age(snapshot: Snapshot) -> str:
    seconds = max(0.0, time.time() - snapshot.crawled_at)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def search_command(args: argparse.Namespace) -> int:
    hits = _library(args).search(args.query, args.site, args.docs_version, max(1, args.limit))
    if args.json:
        print(json.dumps([h.to_dict() for h in hits], indent=1, ensure_ascii=False))
        return EXIT_OK
    if not hits:
        print("No passage found.", file=sys.stderr)
        return EXIT_NOT_FOUND
    for rank, hit in enumerate(hits, start=1):
        path = " > ".join(hit.heading_path) or hit.title
        print(f"[{rank}] {path}\n    {hit.link}  ({hit.site} {hit.version})\n")
        print(hit.text.strip() + "\n")
    return EXIT_OK


def diff_command(args: argparse.Namespace) -> int:
    library = _library(args)
    changes = library.changes(args.site)
    if changes is None:
        print(f"mdcrawl: no site in the library matches {args.site!r}", file=sys.stderr)
        return EXIT_NOT_FOUND
    if args.json:
        print(json.dumps(changes.to_dict(), indent=1))
    else:
        print(changes_md(changes))
    if args.patch:
        print(library.patch(changes))
    return EXIT_OK


def pull_command(args: argparse.Namespace) -> int:
    try:
        recorded = pull(args.job_id, args.api, args.api_key, _library(args), args.label)
    except (MdcrawlError, httpx.HTTPError) as exc:
        print(f"mdcrawl: pull failed: {exc}", file=sys.stderr)
        return EXIT_NOT_FOUND
    s = recorded.snapshot
    print(f"{s.site} {s.version}: {s.pages} pages, ~{s.tokens:,} tokens in the library")
    if recorded.changes.previous is not None:
        print(f"{recorded.changes.count} changed since {recorded.changes.previous}")
    return EXIT_OK


def mcp_command(args: argparse.Namespace) -> int:
    from ..mcp_server import run_stdio  # the mcp SDK is an optional extra

    run_stdio(cache_root(args.cache_dir))
    return EXIT_OK
