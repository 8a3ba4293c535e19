"""The fetcher's network backend (netstream.py) against real sockets on 127.0.0.1: plain
and TLS, keep-alive reuse, a connection the server closed, timeouts and refusals mapped
to httpcore's exceptions, as anyio's backend mapped them."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpcore
import pytest
from mdcrawl.errors import ConnectFailed
from mdcrawl.fetch import HttpxFetcher
from mdcrawl.models import CrawlOptions
from mdcrawl.netguard import AddressGuard, BlockedAddress, GuardedNetworkBackend
from mdcrawl.netstream import AsyncioBackend

BODY = b"<!doctype html><html><head><title>t</title></head><body><p>hi</p></body></html>"


class Server:
    """HTTP/1.1 with keep-alive; counts connections; ``close_after`` ends each one after
    that many answers; ``stall`` never answers."""

    def __init__(self, close_after: int = 0, stall: bool = False) -> None:
        self.connections = 0
        self.close_after, self.stall = close_after, stall
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        answered = 0
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                if self.stall:
                    await asyncio.sleep(30)
                head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(BODY)}"
                writer.write(head.encode() + b"\r\n\r\n" + BODY)
                await writer.drain()
                answered += 1
                if answered == self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


@pytest.fixture
def tls_files(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


async def serving(server: Server, tls: ssl.SSLContext | None = None) -> AsyncIterator[Server]:
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0, ssl=tls)
    server.port = listener.sockets[0].getsockname()[1]
    async with listener:
        yield server


def pool(
    ssl_context: ssl.SSLContext | None = None, guard: bool = False
) -> httpcore.AsyncConnectionPool:
    backend: httpcore.AsyncNetworkBackend = AsyncioBackend()
    if guard:
        backend = GuardedNetworkBackend(AddressGuard(), backend)
    return httpcore.AsyncConnectionPool(ssl_context=ssl_context, network_backend=backend)


async def test_plain_http_keeps_the_connection_alive() -> None:
    async for server in serving(Server()):
        async with pool() as p:
            for _ in range(3):
                response = await p.request("GET", f"http://127.0.0.1:{server.port}/")
                assert (response.status, response.content) == (200, BODY)
        assert server.connections == 1


async def test_a_connection_the_server_closed_is_not_reused() -> None:
    async for server in serving(Server(close_after=1)):
        async with pool() as p:
            for _ in range(3):
                response = await p.request("GET", f"http://127.0.0.1:{server.port}/")
                assert response.content == BODY
                await asyncio.sleep(0.05)  # the server's close arrives while the pool holds it
        assert server.connections == 3


async def test_tls_through_start_tls(tls_files: tuple[Path, Path]) -> None:
    cert, key = tls_files
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))
    async for server in serving(Server(), served):
        async with pool(trusting) as p:
            for _ in range(2):
                response = await p.request("GET", f"https://localhost:{server.port}/")
                assert response.content == BODY
        assert server.connections == 1


async def test_the_fetcher_refuses_a_certificate_it_cannot_verify(
    tls_files: tuple[Path, Path],
) -> None:
    cert, key = tls_files
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)
    async for server in serving(Server(), served):
        async with HttpxFetcher(CrawlOptions(retries=0)) as fetcher:
            with pytest.raises(ConnectFailed, match="CERTIFICATE_VERIFY_FAILED"):
                await fetcher.fetch(f"https://localhost:{server.port}/")


async def test_timeouts_and_refusals_are_httpcore_errors() -> None:
    async for server in serving(Server(stall=True)):
        async with pool() as p:
            with pytest.raises(httpcore.ReadTimeout):
                url = f"http://127.0.0.1:{server.port}/"
                await p.request("GET", url, extensions={"timeout": {"read": 0.2}})
        port = server.port
    with pytest.raises(httpcore.ConnectError):
        await AsyncioBackend().connect_tcp("127.0.0.1", port)


async def test_the_guard_still_refuses_before_connecting() -> None:
    async for server in serving(Server()):
        async with pool(guard=True) as p:
            with pytest.raises(BlockedAddress):
                await p.request("GET", f"http://127.0.0.1:{server.port}/")
        assert server.connections == 0
