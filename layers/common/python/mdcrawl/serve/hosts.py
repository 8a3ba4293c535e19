"""``mdcrawl serve --allow-hosts``: crawl only start URLs whose host is an address in the
given networks (or ``localhost`` when a loopback network is given). Nothing is resolved:
the check reads the URL alone, so a refused URL causes no traffic at all, not even DNS.
Scope keeps a crawl on its start host, and redirects off it are refused by the fetcher,
so checking the start URL is enough. Used to fence a server in (tests, demos)."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..errors import UnsafeUrl


@dataclass(frozen=True)
class HostAllowList:
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]

    @classmethod
    def of(cls, cidrs: Sequence[str]) -> HostAllowList:
        """Raises ValueError for a text that is not a network."""
        return cls(tuple(ipaddress.ip_network(c, strict=False) for c in cidrs))

    def check_url(self, url: str) -> None:
        host = (urlsplit(url).hostname or "").strip("[]")
        if host == "localhost":
            host = "127.0.0.1"
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            raise UnsafeUrl(f"this server only crawls addresses in {self._shown()}") from None
        if not any(address in network for network in self.networks):
            raise UnsafeUrl(f"{host} is outside the networks this server crawls ({self._shown()})")

    def _shown(self) -> str:
        return ", ".join(str(n) for n in self.networks)
