"""`mdcrawl ...`: the command line. Exit codes: 0 done (possibly truncated), 1 the crawl
failed, 2 usage error, 130 interrupted (state kept: the same command resumes)."""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from . import __version__
from .adapters.local.terminal import make_reporter
from .client import cli_commands as client_commands
from .errors import InvalidInput
from .library import cli_commands as library_commands
from .models import CrawlOptions, JobStatus
from .runtime.local import LocalRun, RunResult, default_out_dir, run_crawl
from .serve import cli_commands as serve_commands
from .urls import split_credentials, validate_start_url

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
DEFAULTS = CrawlOptions()

DESCRIPTION = "Turn a documentation site into clean, LLM-ready markdown."
CRAWL_EPILOG = """\
outputs (in --out DIR):
  docs.md          every page in the site's reading order, one document
  pages/           one NNNN-slug.md per page, linked to each other
  llms.txt         the llms.txt index of the site
  manifest.jsonl   one line per URL: url, title, file, words, from_cache, status, reason

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


def _bounded(kind: Callable[[str], float], low: float, high: float | None = None):
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value < low or (high is not None and value > high):
            limit = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
            raise argparse.ArgumentTypeError(f"must be {limit}, not {text}")
        return value

    return parse


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
    crawl.add_argument(
        "--max-pages",
        type=_bounded(int, 1),
        default=DEFAULTS.max_pages,
        metavar="N",
        help="stop discovering after N URLs (default: %(default)s)",
    )
    crawl.add_argument(
        "--max-depth",
        type=_bounded(int, 0),
        default=DEFAULTS.max_depth,
        metavar="N",
        help="links followed from the start page (default: %(default)s)",
    )
    crawl.add_argument(
        "--budget",
        type=_bounded(float, 1),
        default=DEFAULTS.budget_s,
        metavar="SECONDS",
        help="time budget; when it ends, what was fetched is delivered, "
        "marked truncated (default: %(default)g)",
    )
    crawl.add_argument(
        "--concurrency",
        type=_bounded(int, 1, 64),
        default=DEFAULTS.concurrency,
        metavar="N",
        help="requests in flight per host (default: %(default)s)",
    )
    crawl.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="only crawl paths matching GLOB (repeatable; see scope below)",
    )
    crawl.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="never crawl paths matching GLOB (repeatable)",
    )
    crawl.add_argument(
        "--max-age",
        type=_bounded(float, 0),
        default=DEFAULTS.max_age_s,
        metavar="SECONDS",
        help="a cached page younger than this is not fetched again; older ones "
        "are revalidated (default: %(default)g)",
    )
    crawl.add_argument(
        "--no-cache",
        action="store_true",
        help="fetch every page again (the cache is still refreshed)",
    )
    crawl.add_argument("--ignore-robots", action="store_true", help="do not honour robots.txt")
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
    crawl.add_argument(
        "--no-generator-rules",
        action="store_true",
        help="use no per-generator rule: the site's learned template and generic cascade only",
    )
    crawl.add_argument("--verbose", "-v", action="store_true", help="log warnings")
    _add_library_options(crawl)
    crawl.set_defaults(handler=crawl_command)


def _add_library_options(crawl: argparse.ArgumentParser) -> None:
    """The docs library and context-window options of `mdcrawl crawl`."""
    crawl.add_argument(
        "--label",
        metavar="NAME",
        help="the version's name in the library (default: from the URL, else the date)",
    )
    crawl.add_argument(
        "--max-tokens",
        type=_bounded(int, 200),
        metavar="N",
        help="also write docs-001.md... parts of at most N tokens (estimated: chars / 4)",
    )
    crawl.add_argument(
        "--prefer-native",
        action="store_true",
        help="use a page's own markdown twin (page.md beside page.html) when the site has "
        "them (probed on the start page; one more request per page)",
    )


def options_from(args: argparse.Namespace) -> CrawlOptions:
    return CrawlOptions(
        max_pages=int(args.max_pages),
        max_depth=int(args.max_depth),
        budget_s=float(args.budget),
        concurrency=int(args.concurrency),
        include=tuple(args.include),
        exclude=tuple(args.exclude),
        max_age_s=float(args.max_age),
        use_cache=not args.no_cache,
        respect_robots=not args.ignore_robots,
        max_tokens=int(args.max_tokens) if args.max_tokens else None,
        prefer_native=bool(args.prefer_native),
        generator_rules=not args.no_generator_rules,
    )


def crawl_command(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING if args.verbose else logging.ERROR)
    try:
        url, auth = split_credentials(validate_start_url(args.url))
        out_dir = args.out or default_out_dir(url)
        check_out_dir(out_dir)
    except InvalidInput as exc:
        return _error(str(exc), EXIT_USAGE)
    run = LocalRun(url, options_from(args), out_dir, args.cache_dir, args.label, auth=auth)
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
        f"{result.pages} pages, {result.words:,} words (~{result.tokens:,} tokens) "
        f"in {seconds:.1f} s",
        f"{c.cached} cache hits",
        f"{c.failed} failed, {c.skipped} skipped",
    ]
    if job.truncated:
        parts.append(f"truncated: {job.left} URLs left")
    if result.resumed:
        parts.append("resumed")
    if result.recorded is not None and result.recorded.changes.previous is not None:
        parts.append(f"{result.recorded.changes.count} changed since the last crawl")
    return " · ".join(parts) + f" → {result.out_dir}/"


def _error(message: str, code: int) -> int:
    print(f"mdcrawl: {message}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
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
