"""`mdcrawl serve`: compose the local stores, the job runner, the WebSocket hub and the
ASGI app, and serve them on one port with uvicorn (HTTP/1.1 via h11, WebSocket via
websockets' sans-I/O protocol) under a Starlette app (app.py)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

import anyio.from_thread
import uvicorn

from ..adapters.local import LocalStores, open_local_stores
from ..options import OptionLimits, Profile
from ..service import ApiDeps, ServiceLimits, WsDeps
from ..service.deps import UrlChecker
from .app import ServeApp
from .downloads import LinkSigner, SignedBlobStore
from .hosts import StartUrlCheck, serve_guard
from .hub import Hub, QueuePusher
from .mcp_mount import McpMount, mcp_available
from .runner import JobRunner

STATE_DIR = "serve"  # under the cache folder: never mixed with the CLI's own jobs


@dataclass(frozen=True)
class ServeConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    cache_dir: Path = Path(".")
    api_key: str = ""
    allow_hosts: tuple[str, ...] = ()  # CIDRs and/or "public"; empty: public addresses only
    caps: Mapping[str, float] = field(default_factory=dict)  # over the hosted caps


@dataclass
class Running:
    """A started server, for whoever started it (the CLI, or a test)."""

    app: ServeApp
    runner: JobRunner
    stores: LocalStores
    server: uvicorn.Server
    base_url: str
    resumed: list[str]


def state_root(cache_dir: Path) -> Path:
    """Serve's jobs live apart from `mdcrawl crawl`'s (those finalize into folders, and
    a restarting server must not pick up a terminal's crawl)."""
    return cache_dir / STATE_DIR


def new_api_key() -> str:
    return secrets.token_urlsafe(24)


def url_checker(allow_hosts: tuple[str, ...]) -> UrlChecker:
    """What a job's start URL must pass (hosts.py): public addresses only by default."""
    return StartUrlCheck(serve_guard(allow_hosts))


def on_loop(start: Callable[[str], bool]) -> Callable[[str], bool]:
    """``start`` run on the event loop's thread, whichever thread calls (the runner's
    tasks belong to the loop; a REST request is answered in a worker thread)."""

    def call(job_id: str) -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return bool(anyio.from_thread.run_sync(start, job_id))
        return start(job_id)

    return call


def serve_limits(caps: Mapping[str, float]) -> ServiceLimits:
    """options.py's serve profile: the hosted caps (``mdcrawl serve --max-pages N``...
    changes them), and the machine's owner may ignore robots.txt as the CLI can."""
    return ServiceLimits(OptionLimits.of(Profile.SERVE, **caps))


def build_app(
    stores: LocalStores,
    runner: JobRunner,
    api_key: str,
    check_url: UrlChecker | None = None,
    caps: Mapping[str, float] | None = None,
) -> ServeApp:
    blobs = stores.blobs
    assert isinstance(blobs, SignedBlobStore)
    api = ApiDeps(
        stores.jobs,
        stores.frontier,
        stores.pages,
        stores.events,
        blobs,
        stores.clock,
        start_job=on_loop(runner.start),  # REST runs in worker threads (serve/app.py)
        check_url=check_url or url_checker(()),
        limits=serve_limits(caps or {}),
    )
    pusher = QueuePusher()
    ws_deps = WsDeps(stores.jobs, stores.events, stores.connections, pusher, stores.clock)
    return ServeApp(api, blobs, Hub(ws_deps, stores.events, pusher), api_key)


def open_stores(root: Path) -> LocalStores:
    root.mkdir(parents=True, exist_ok=True)
    stores = open_local_stores(root)
    signer = LinkSigner(secrets.token_bytes(32))
    return replace(stores, blobs=SignedBlobStore(stores.blobs.root, signer))


@contextlib.asynccontextmanager
async def running(config: ServeConfig) -> AsyncIterator[Running]:
    """Serve until the block ends (or a signal stops uvicorn); crawls stop where they are."""
    root = state_root(config.cache_dir)
    stores = open_stores(root)
    guard = serve_guard(config.allow_hosts)  # the start URL and every request after it
    runner = JobRunner(stores, root, guard)
    check_url = StartUrlCheck(guard)
    app = build_app(stores, runner, config.api_key, check_url, config.caps)
    if mcp_available():  # /mcp: the library's MCP tools, same key, same host allow-list
        # the same page cap as POST /jobs (``serve --max-pages``)
        page_cap = int(serve_limits(config.caps).options.caps["max_pages"])
        app.mcp = McpMount(config.cache_dir, config.api_key, config.host, check_url, page_cap)
    uv = uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        lifespan="off",
        ws="websockets-sansio",
        log_level="warning",
        ws_max_size=app.hub.deps.max_message_bytes * 4,
    )
    server = _Server(uv)
    mcp_sessions = contextlib.AsyncExitStack()
    if app.mcp is not None:
        await mcp_sessions.enter_async_context(app.mcp.running())
    serving = asyncio.create_task(server.serve())
    hub = asyncio.create_task(app.hub.run())
    try:
        while not server.started and not serving.done():
            await asyncio.sleep(0.02)
        if serving.done():
            serving.result()  # raises why it could not start (port in use...)
            raise SystemExit(1)  # uvicorn reported it already and returned
        resumed = runner.resume_unfinished()
        yield Running(app, runner, stores, server, _base_url(server, config.host), resumed)
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        hub.cancel()
        await mcp_sessions.aclose()
        await runner.close()
        stores.close()


def _base_url(server: uvicorn.Server, host: str) -> str:
    port = server.servers[0].sockets[0].getsockname()[1]
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    return f"http://{shown}:{port}"


class _Server(uvicorn.Server):
    """uvicorn without its signal capture: it re-raises the signal after shutting down,
    which would kill the process before the crawls are stopped cleanly. ``serve``
    handles SIGINT/SIGTERM itself."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve(config: ServeConfig, out: TextIO = sys.stdout) -> None:
    async with running(config) as live:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, _stop, live.server)
        _announce(live, config.api_key, out)
        await _until_stopped(live.server)


def _stop(server: uvicorn.Server) -> None:
    server.should_exit = True


def _announce(live: Running, api_key: str, out: TextIO) -> None:
    write = out.write
    write(f"mdcrawl serve: {live.base_url}/#key={api_key}\n")
    write(f"  API:      {live.base_url}/jobs  (header x-api-key: {api_key})\n")
    write(f"  progress: {live.base_url.replace('http', 'ws', 1)}/?api_key={api_key}\n")
    if live.app.mcp is not None:
        write(f"  MCP:      {live.base_url}/mcp  (streamable HTTP, same header)\n")
    if live.resumed:
        write(f"  resumed {len(live.resumed)} unfinished job(s): {', '.join(live.resumed)}\n")
    write("Ctrl-C stops the server; unfinished crawls resume on the next start.\n")
    out.flush()  # a pipe (a test, a supervisor) sees the key and port at once


async def _until_stopped(server: uvicorn.Server) -> None:
    while not server.should_exit:
        await asyncio.sleep(0.1)
