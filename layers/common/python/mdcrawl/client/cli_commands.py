"""`mdcrawl submit` and `mdcrawl watch`: argparse wiring for the API client (api.py).
They talk to any deployment that speaks docs/api.md: `mdcrawl serve` or the AWS stack."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from ..option_flags import add_option_arguments, given_options

if TYPE_CHECKING:
    from .api import Endpoint

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130



def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    _add_submit(commands)
    _add_watch(commands)


def _add_client_args(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--api",
        required=True,
        metavar="URL",
        help="the API's base URL (http://127.0.0.1:8000, or a stack's .../prod)",
    )
    cmd.add_argument("--api-key", required=True, metavar="KEY", help="your API key")
    cmd.add_argument(
        "--ws",
        metavar="URL",
        default="",
        help="the WebSocket URL (default: --api with a ws:// or wss:// scheme)",
    )


def _add_submit(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cmd = commands.add_parser(
        "submit",
        help="start a crawl on an mdcrawl API",
        description="POST /jobs: start crawling URL; prints the job id.",
    )
    cmd.add_argument("url", metavar="URL", help="the site's start page")
    _add_client_args(cmd)
    # the crawl options (options.py); one left out takes the service's default
    add_option_arguments(cmd, given_only=True)
    cmd.add_argument("--job-id", metavar="ID", help="choose the id (a retried submit reuses it)")
    cmd.add_argument("--idempotency-key", metavar="KEY")
    cmd.add_argument("--watch", action="store_true", help="then follow its progress")
    cmd.set_defaults(handler=submit_command)


def _add_watch(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cmd = commands.add_parser(
        "watch",
        help="follow a job's progress live",
        description="Follow a job over WebSocket until it ends; "
        "exit 0 if it completed, 1 if it failed or was cancelled.",
    )
    cmd.add_argument("job_id", metavar="JOB")
    _add_client_args(cmd)
    cmd.set_defaults(handler=watch_command)


def submit_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"url": args.url, **given_options(args)}
    if args.job_id is not None:
        body["job_id"] = args.job_id
    return body


def submit_command(args: argparse.Namespace) -> int:
    from .api import ApiFailure, Endpoint, submit  # websockets: only for the client

    endpoint = Endpoint(args.api, args.api_key, args.ws)
    try:
        job = submit(endpoint, submit_body(args), args.idempotency_key)
    except ApiFailure as exc:
        return _error(str(exc), EXIT_FAILED)
    print(job["job_id"], flush=True)
    if not args.watch:
        return EXIT_OK
    return _watch(endpoint, job["job_id"])


def watch_command(args: argparse.Namespace) -> int:
    from .api import Endpoint

    return _watch(Endpoint(args.api, args.api_key, args.ws), args.job_id)


def _watch(endpoint: Endpoint, job_id: str) -> int:
    from .api import ApiFailure, describe, watch

    def show(event: dict) -> None:
        print(describe(event), file=sys.stderr, flush=True)

    try:
        return asyncio.run(watch(endpoint, job_id, show))
    except ApiFailure as exc:
        return _error(str(exc), EXIT_FAILED)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _error(message: str, code: int) -> int:
    print(f"mdcrawl: {message}", file=sys.stderr)
    return code
