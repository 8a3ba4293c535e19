"""The SSRF guard for the hosted mode: no fetch may reach an internal address.

A URL is unsafe when its scheme is not http(s), or when its host is (or resolves to) an
address that is not public: loopback, private (RFC 1918, IPv6 ULA), link-local (cloud
metadata 169.254.169.254 among them), CGNAT 100.64/10, the EC2 IPv6 metadata
fd00:ec2::254, multicast, reserved, unspecified, documentation ranges. IPv6 forms that
embed an IPv4 address (::ffff:a.b.c.d, 64:ff9b::/96 NAT64, 2002::/16 6to4) are judged by
the IPv4 inside. ``allow_networks`` opens chosen ranges (tests allow 127.0.0.0/8).

A fence (``allow_public=False``, ``mdcrawl serve --allow-hosts``) admits the allowed
networks alone, and only as addresses: a host name other than ``localhost`` (taken as
127.0.0.1) is refused without asking DNS, so a fenced server sends no packet anywhere
else, not even a DNS query. ``start_guard`` is the CLI's rule: a crawl that starts on a
public address stays on public addresses, one that starts at home may stay there.

Every resolved address is checked, and ``GuardedNetworkBackend`` then connects only to
an address it has just checked: a DNS answer that changes between the check and the
connect (DNS rebinding) cannot slip through.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

import httpcore

from .errors import FetchError, InvalidInput, UnsafeUrl

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Not covered by ``is_global`` on every Python, or worth naming.
BLOCKED_NETWORKS: tuple[IpNetwork, ...] = tuple(
    ipaddress.ip_network(n)
    for n in ("100.64.0.0/10", "169.254.0.0/16", "fd00:ec2::254/128", "224.0.0.0/4", "ff00::/8")
)
NAT64_PREFIX = ipaddress.ip_network("64:ff9b::/96")


class BlockedAddress(UnsafeUrl, FetchError):
    """An unsafe URL met while fetching: an ``UnsafeUrl``, and a ``FetchError`` so a crawl
    that skips failed pages skips this one too (a redirect to an internal host, say)."""

    reason = "unsafe_url"


class AddressGuard:
    """Refuses URLs and addresses outside the public internet, unless allowed."""

    def __init__(self, allow_networks: Sequence[str] = (), allow_public: bool = True) -> None:
        try:
            networks = [ipaddress.ip_network(n.strip(), strict=False) for n in allow_networks]
        except ValueError as exc:
            raise InvalidInput(f"allow_networks: {exc}") from exc
        self._allowed: tuple[IpNetwork, ...] = tuple(networks)
        self._public = allow_public

    def check_url(self, url: str) -> None:
        """Raise ``UnsafeUrl`` unless ``url`` is http(s) without credentials and every
        address of its host is allowed. Resolves the host with the system resolver
        (blocking) unless this guard is a fence."""
        host, port = host_and_port(url)
        refuse_credentials(url)
        literal = self._literal(host)
        if literal is not None:
            self.check_addresses(host, literal)
            return
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise BlockedAddress(f"cannot resolve {host!r}: {exc}") from exc
        self.check_addresses(host, (info[4][0] for info in infos))

    async def resolve(self, host: str, port: int) -> list[str]:
        """Every address of ``host``, each checked; raises ``UnsafeUrl`` if any is unsafe,
        ``OSError`` if the name does not resolve."""
        literal = self._literal(host)
        if literal is None:
            loop = asyncio.get_running_loop()
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            literal = list(dict.fromkeys(str(info[4][0]) for info in infos))
        self.check_addresses(host, literal)
        return literal

    def _literal(self, host: str) -> list[str] | None:
        """The host's address when no DNS is needed (or allowed), else None."""
        bare = host.strip("[]")
        try:
            return [str(ipaddress.ip_address(bare.split("%", 1)[0]))]
        except ValueError:
            pass
        if self._public:
            return None
        if bare.lower().rstrip(".") == "localhost":
            return ["127.0.0.1"]
        raise BlockedAddress(f"{host!r} is a name; this fence admits addresses only")

    def check_addresses(self, host: str, addresses: Iterable[str]) -> None:
        seen = False
        for address in addresses:
            seen = True
            self.check_ip(address, host)
        if not seen:
            raise BlockedAddress(f"{host!r} has no address")

    def check_ip(self, address: str, host: str | None = None) -> None:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone id
        if any(ip in net for net in self._allowed):
            return
        if not self._public:
            raise BlockedAddress(f"{ip} is outside the allowed networks; it is not fetched")
        if not is_public(ip):
            shown = f"{host!r} ({ip})" if host and host != address else str(ip)
            raise BlockedAddress(f"{shown} is not a public address; fetching it is not allowed")


def refuse_credentials(url: str) -> None:
    """``UnsafeUrl`` for a URL with a user name or password in it: a hosted service would
    store them in the job and print them into every output."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise BlockedAddress(f"{url!r} is not a valid URL") from exc
    if parts.username is not None or parts.password is not None:
        raise UnsafeUrl(
            "the URL holds credentials (user:password@); this service does not accept them"
        )


def start_guard(url: str) -> AddressGuard | None:
    """The CLI's guard for a crawl from ``url``: a start on public addresses keeps every
    request (redirect, robots.txt, sitemap) on public addresses; a start on a loopback
    or private address (the user's own docs server) may go anywhere, as before. A name
    that does not resolve gets the strict guard: the crawl fails on it anyway."""
    host, port = host_and_port(url)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return AddressGuard()
    addresses = [ipaddress.ip_address(str(i[4][0]).split("%", 1)[0]) for i in infos]
    return AddressGuard() if all(is_public(a) for a in addresses) else None


def is_public(ip: IpAddress) -> bool:
    """True for addresses on the public internet."""
    embedded = _embedded_ipv4(ip)
    if embedded is not None:
        return is_public(embedded)
    if any(ip in net for net in BLOCKED_NETWORKS if net.version == ip.version):
        return False
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


def _embedded_ipv4(ip: IpAddress) -> ipaddress.IPv4Address | None:
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in NAT64_PREFIX:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def host_and_port(url: str) -> tuple[str, int]:
    """The host and port a URL connects to; ``UnsafeUrl`` if it is not http(s)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise BlockedAddress(f"{url!r} is not a valid URL") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise BlockedAddress(f"only http and https may be fetched, not {scheme or 'no scheme'!r}")
    if not parts.hostname:
        raise BlockedAddress(f"{url!r} has no host")
    return parts.hostname, port or (443 if scheme == "https" else 80)


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that resolves, checks, then connects to the checked
    address (TLS still verifies the host name: httpcore passes it separately)."""

    def __init__(self, guard: AddressGuard, inner: httpcore.AsyncNetworkBackend | None = None):
        self._guard = guard
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await self._guard.resolve(host, port)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host!r}: {exc}") from exc
        error: Exception = httpcore.ConnectError(f"no address for {host!r}")
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        raise error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise BlockedAddress("unix sockets are not fetched")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
