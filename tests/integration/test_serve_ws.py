"""Live progress over `mdcrawl serve`'s WebSocket: a client that loses its connection
mid-crawl and comes back with `after` receives every event exactly once, in order."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from mdcrawl.service.ws import EventCursor, Verdict, events_in
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.integration.test_serve_support import all_events, create, run_serve
from tests.support.server import serve_directory
from tests.support.sites import require_site

TERMINAL = {"job.completed", "job.failed", "job.cancelled"}
DROPS = 3
EVENTS_BETWEEN_DROPS = 5


async def subscribe(sock: ClientConnection, job_id: str, after: int) -> None:
    await sock.send(json.dumps({"action": "subscribe", "job_id": job_id, "after": after}))


async def follow_once(
    url: str, job_id: str, cursor: EventCursor, delivered: list[dict[str, Any]], drop_at: int
) -> bool:
    """One connection: handle events until the job ends (True) or ``drop_at`` events have
    been handled in all, when the connection is cut without a close handshake (False):
    the rest of that frame is lost with it."""
    sock = await connect(url)
    try:
        await subscribe(sock, job_id, cursor.last)
        async for text in sock:
            for event in events_in(json.loads(text)):  # a frame: several events, in order
                verdict = cursor.accept(event)
                if verdict is Verdict.RESYNC:
                    await subscribe(sock, job_id, cursor.last)
                    break
                if verdict is Verdict.DELIVER:
                    delivered.append(event)
                    if event["type"] in TERMINAL:
                        return True
                    if len(delivered) >= drop_at:
                        sock.transport.abort()  # the network vanishes: no close frame
                        return False
        return False
    finally:
        with contextlib.suppress(ConnectionClosed, OSError):
            await sock.close()


async def test_a_reconnecting_client_gets_every_event_exactly_once(tmp_path: Path) -> None:
    site = require_site("requests")
    with serve_directory(site.root, latency=0.05) as docs, run_serve(tmp_path / "s") as server:
        client = server.client()
        job_id = create(client, docs.url(site.start), concurrency=2)["job_id"]
        cursor, delivered, drops = EventCursor(), [], 0
        while not await follow_once(
            server.ws_url, job_id, cursor, delivered, (drops + 1) * EVENTS_BETWEEN_DROPS
        ):
            drops += 1
        stored = all_events(client, job_id)
    assert drops >= DROPS  # the connection was lost several times before the job ended
    assert [e["seq"] for e in delivered] == list(range(1, len(stored) + 1))
    assert delivered == stored  # the same events, each once, in order
    assert delivered[-1]["type"] == "job.completed"


async def test_the_socket_refuses_a_wrong_key_and_foreign_jobs(tmp_path: Path) -> None:
    with run_serve(tmp_path / "s") as server:
        for bad in ("", "?api_key=wrong"):
            with pytest.raises(InvalidStatus):
                await connect(server.base_url.replace("http", "ws") + "/" + bad)
        async with connect(server.ws_url) as sock:
            await subscribe(sock, "no-such-job", 0)
            answer = json.loads(await sock.recv())
            await sock.send(json.dumps({"action": "ping"}))
            pong = json.loads(await sock.recv())
    assert answer["type"] == "error" and answer["error"]["code"] == "not_found"
    assert pong == {"type": "pong"}
