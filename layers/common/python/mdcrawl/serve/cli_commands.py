"""`mdcrawl serve`: argparse wiring only; the work is in server.py. (The client commands,
`submit` and `watch`, are in mdcrawl.client.)"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from ..errors import InvalidInput
from ..option_flags import add_cap_arguments, caps_from_arguments
from ..runtime.local import cache_root

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    _add_serve(commands)


def _add_serve(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cmd = commands.add_parser(
        "serve",
        help="run the REST + WebSocket API and the web page on this machine",
        description="Serve the mdcrawl API (docs/api.md) and a web page on one port. "
        "Crawls run here; unfinished ones resume when the server starts again.",
    )
    cmd.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: %(default)s)"
    )
    cmd.add_argument(
        "--port", type=_port, default=8000, help="port (default: %(default)s; 0: any free)"
    )
    cmd.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="state and cache (default: "
        "$XDG_CACHE_HOME/mdcrawl or ~/.cache/mdcrawl; jobs under DIR/serve)",
    )
    cmd.add_argument(
        "--api-key",
        metavar="KEY",
        help="the key clients must send (default: a new random key, printed at start)",
    )
    cmd.add_argument(
        "--allow-hosts",
        action="append",
        default=[],
        metavar="CIDR",
        help="let crawls reach only these networks, given as addresses (repeatable; e.g. "
        "127.0.0.1/32 for a docs server on this machine; 'public' adds the public "
        "internet). Default: public addresses only; loopback, private, link-local and "
        "metadata addresses are refused",
    )
    cmd.add_argument("--verbose", "-v", action="store_true", help="log warnings")
    caps = cmd.add_argument_group("caps", "the most a job may ask for (options.py's hosted caps)")
    add_cap_arguments(caps)  # type: ignore[arg-type]
    cmd.set_defaults(handler=serve_command)


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: a port is 0-65535")
    return int(text)


def serve_command(args: argparse.Namespace) -> int:
    from .hosts import serve_guard
    from .server import ServeConfig, new_api_key, serve  # uvicorn: only for this command

    logging.basicConfig(level=logging.WARNING if args.verbose else logging.ERROR)
    try:
        serve_guard(args.allow_hosts)
    except InvalidInput as exc:
        return _error(f"--allow-hosts: {exc}", EXIT_USAGE)
    config = ServeConfig(
        host=args.host,
        port=args.port,
        cache_dir=cache_root(args.cache_dir),
        api_key=args.api_key or new_api_key(),
        allow_hosts=tuple(args.allow_hosts),
        caps=caps_from_arguments(args),
    )
    try:
        asyncio.run(serve(config))
    except OSError as exc:  # the port is taken, the address is not ours...
        return _error(f"cannot serve on {args.host}:{args.port}: {exc}", EXIT_FAILED)
    return EXIT_OK


def _error(message: str, code: int) -> int:
    print(f"mdcrawl: {message}", file=sys.stderr)
    return code
