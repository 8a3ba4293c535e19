"""httpcore's network backend straight on asyncio streams, for the fetcher.

httpcore talks to the network through a pluggable backend (``httpcore.AsyncNetworkBackend``);
under asyncio its default is anyio's, which wraps every read and write in a cancel scope
and answers httpcore's per-request "is this idle connection still open?" question by
building a dict of every socket attribute for each pooled connection. On a crawl that was
about a quarter of the event loop's CPU per fetched page (``python -m bench.loop``). This
backend does the same work with asyncio's own streams: one ``asyncio.timeout`` per
operation, the socket's readability polled directly. Errors and timeouts map to the same
httpcore exceptions, so the fetcher and httpx see no difference; the address guard
(``netguard.GuardedNetworkBackend``) wraps this backend as it wrapped anyio's.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
from httpcore._utils import is_socket_readable  # httpcore is pinned: its own idle test

READ_LIMIT = 2**16  # the StreamReader's buffer bound; httpcore reads 64 KiB at a time
# httpcore's extra-info names, as asyncio's transports call them
_EXTRA_INFO = {
    "ssl_object": "ssl_object",
    "client_addr": "sockname",
    "server_addr": "peername",
    "socket": "socket",
}


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection: a reader and a writer from ``asyncio.open_connection``."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ReadError(str(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            async with asyncio.timeout(timeout):
                self._writer.write(buffer)
                await self._writer.drain()
        except TimeoutError as exc:
            raise httpcore.WriteTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.WriteError(str(exc)) from exc

    async def aclose(self) -> None:
        # As anyio does: the socket is closed before this returns (a test that blocks the
        # loop right after may wait for the server to see it), and a peer that never ends
        # TLS cleanly cannot hold the connection open.
        self._writer.close()
        await asyncio.sleep(0)  # the transport lets go of its socket on the loop's next turn
        self._writer.transport.abort()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError as exc:
            await self.aclose()
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except (OSError, ssl.SSLError) as exc:
            await self.aclose()
            raise httpcore.ConnectError(str(exc)) from exc
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # an idle pooled connection the server has closed
            sock = self._writer.get_extra_info("socket")
            return self._reader.at_eof() or is_socket_readable(sock)
        name = _EXTRA_INFO.get(info)
        return self._writer.get_extra_info(name) if name is not None else None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Connects with ``asyncio.open_connection`` (addresses tried in turn)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        local = (local_address, 0) if local_address else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, local_addr=local, limit=READ_LIMIT
                )
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock = writer.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not fetched")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
