"""`mdcrawl ...`: the command line. Exit codes: 0 done (possibly truncated), 1 the crawl
failed, 2 usage error, 130 interrupted (state kept: the same command resumes)."""

from __future__ import annotations

import argparse
import gc
import logging
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .adapters.local.terminal import make_reporter
from .client import cli_commands as client_commands
from .errors import InvalidInput
from .library import cli_commands as library_commands
from .models import CrawlOptions, JobStatus
from .option_flags import add_option_arguments, model_from_arguments
from .options import OptionLimits, Profile
from .runtime.local import LocalRun, RunResult, default_out_dir, run_crawl
from .serve import cli_commands as serve_commands
from .urls import split_credentials, validate_start_url

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

DESCRIPTION = "Turn a documentation site into clean, LLM-ready markdown."
CRAWL_EPILOG = """\
outputs (in --out DIR):
  docs.md          every page in the site's reading order, one document
  pages/           one NNNN-slug.md per page, linked to each other
  llms.txt         the llms.txt index of the site
  manifest.jsonl   one line per URL: url, title, file, words, from_cache, status, reason,
                   tokens (estimated) and warnings (the page's quality report)

scope:
  By default the crawl stays on the start URL's host and folder:
  https://host/docs/v2/intro.html crawls https://host/docs/v2/... only.
  --include / --exclude take globs matched against the URL's path:
    *      any characters within one path segment
    **     any characters across segments (/a/**/b also matches /a/b)
    ?      one character within a segment
  A glob starting with / is anchored at the site root; any other is relative to the
  start folder ("api/**" from /docs/ means /docs/api/**). A glob matches the whole path:
  end it with /** to take a whole folder. With --include, a path must match one of them;
  --exclude always wins.

resume:
  Interrupted (Ctrl-C, kill)? Run the same command again: finished pages are not
  fetched again. Pages are cached (in --cache-dir) for later crawls too.

examples:
  mdcrawl crawl https://docs.python-requests.org/en/latest/
  mdcrawl crawl https://example.com/docs/ --out ./docs-md --max-pages 200 --exclude 'api/**'
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mdcrawl", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"mdcrawl {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_crawl(commands)
    serve_commands.register(commands)  # serve (mdcrawl[serve])
    client_commands.register(commands)  # submit, watch (mdcrawl[serve])
    library_commands.register(commands)  # list, search, diff, mcp (the docs library)
    return parser


def _add_crawl(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    crawl = commands.add_parser(
        "crawl",
        help="crawl a documentation site into markdown",
        description="Crawl a documentation site and write it as markdown.",
        epilog=CRAWL_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    crawl.add_argument(
        "url",
        metavar="URL",
        help="the site's start page (http or https). A user:password@ in it is sent as "
        "HTTP Basic auth to that host only, and never written to the outputs",
    )
    crawl.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="output folder (default: ./mdcrawl-out/<site-host-and-path>/)",
    )
    add_option_arguments(crawl)  # every crawl option, from options.py
    crawl.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no progress display (the summary line is still printed)",
    )
    crawl.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="cache and crawl state (default: $XDG_CACHE_HOME/mdcrawl or ~/.cache/mdcrawl)",
    )
    crawl.add_argument("--verbose", "-v", action="store_true", help="log warnings")
    _add_library_options(crawl)
    crawl.set_defaults(handler=crawl_command)


def _add_library_options(crawl: argparse.ArgumentParser) -> None:
    """The docs library option of `mdcrawl crawl` (the crawl options come from options.py)."""
    crawl.add_argument(
        "--label",
        metavar="NAME",
        help="the version's name in the library (default: from the URL, else the date)",
    )


def options_from(args: argparse.Namespace) -> CrawlOptions:
    """``InvalidInput`` for what only the whole can tell (more globs than allowed)."""
    chosen = model_from_arguments(args)
    return CrawlOptions(**OptionLimits.of(Profile.LOCAL).core_options(chosen))


def crawl_command(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING if args.verbose else logging.ERROR)
    try:
        url, auth = split_credentials(validate_start_url(args.url))
        options = options_from(args)
        out_dir = args.out or default_out_dir(url)
        check_out_dir(out_dir)
    except InvalidInput as exc:
        return _error(str(exc), EXIT_USAGE)
    run = LocalRun(url, options, out_dir, args.cache_dir, args.label, auth=auth)
    reporter = make_reporter(sys.stderr, quiet=args.quiet)
    started = time.monotonic()
    try:
        result = run_crawl(run, reporter)
    except InvalidInput as exc:
        return _error(str(exc), EXIT_USAGE)
    except KeyboardInterrupt:
        return _error(
            "interrupted; the crawl's state is kept. Run the same command again to resume it.",
            EXIT_INTERRUPTED,
        )
    finally:
        reporter.close()
    if result.job.status is not JobStatus.COMPLETED:
        why = result.job.error or f"the job ended {result.job.status}"
        return _error(f"crawl failed: {why}", EXIT_FAILED)
    print(summary_line(result, time.monotonic() - started))
    return EXIT_OK


def check_out_dir(out_dir: Path) -> None:
    """Make sure the outputs can be written before crawling (``InvalidInput`` if not): a
    file in the way was found only at the very end, after the whole crawl."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InvalidInput(f"--out {out_dir} is a file; give a folder") from None
    except NotADirectoryError:
        raise InvalidInput(f"--out {out_dir} is inside a file; give a folder") from None
    except OSError as exc:
        raise InvalidInput(f"--out {out_dir} cannot be created: {exc.strerror}") from None
    try:
        tempfile.TemporaryFile(dir=out_dir).close()
    except OSError as exc:
        raise InvalidInput(f"--out {out_dir} is not writable: {exc.strerror}") from None


def summary_line(result: RunResult, seconds: float) -> str:
    job, c = result.job, result.job.counters
    parts = [
        f"{result.pages} pages, {result.words:,} words (~{result.tokens:,} tokens, estimated) "
        f"in {seconds:.1f} s",
        f"{c.cached} cache hits",
        f"{c.failed} failed, {c.skipped} skipped",
    ]
    if job.truncated:
        parts.append(f"truncated: {job.left} URLs left")
    warned = quality_note(result.quality)
    if warned:
        parts.append(warned)
    if result.resumed:
        parts.append("resumed")
    if result.recorded is not None and result.recorded.changes.previous is not None:
        parts.append(f"{result.recorded.changes.count} changed since the last crawl")
    return " · ".join(parts) + f" → {result.out_dir}/"


_WARNING_NAMES = {
    "repeated_lines": "repeated lines (possible chrome)",
    "empty": "empty",
    "near_empty": "near-empty",
    "unbalanced_fences": "unclosed code fence",
    "raw_html_lines": "raw HTML",
    "unresolved_links": "unresolved links",
}


def quality_note(quality: dict[str, Any]) -> str:
    """``12 pages with warnings (10 repeated lines (possible chrome), 2 raw HTML)``: the
    quality report summed; each page's warnings are in manifest.jsonl."""
    pages = int(quality.get("pages_with_warnings") or 0)
    if not pages:
        return ""
    kinds = quality.get("warnings") or {}
    detail = ", ".join(f"{n} {_WARNING_NAMES.get(kind, kind)}" for kind, n in kinds.items())
    return f"{pages} page{'s' * (pages != 1)} with warnings ({detail}; see manifest.jsonl)"


def _error(message: str, code: int) -> int:
    print(f"mdcrawl: {message}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the process's own command line (the console script)
        # What the imports made lives as long as the process: out of the collector's
        # sight, a full collection no longer walks it (~30 ms of a cached re-crawl).
        gc.freeze()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error argparse reported
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
