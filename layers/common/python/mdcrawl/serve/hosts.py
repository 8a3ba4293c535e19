"""``mdcrawl serve --allow-hosts``: which addresses the server's crawls may reach.

Safe by default: without the flag a job may reach public internet addresses only (the
hosted API's rule, ``netguard.AddressGuard``); loopback, private, link-local, CGNAT and
cloud-metadata addresses are refused. ``--allow-hosts CIDR`` (repeatable) fences the
server in to those networks instead, checked without DNS (give addresses, or
``localhost``); the word ``public`` adds the public internet back. The same guard checks
the start URL when a job is created (before any connection) and every request the job
then makes: pages, redirect hops, robots.txt, sitemaps and their children.

A refused start URL always gets the same answer (``REFUSED``), whatever the address and
whatever listens there: a job's error must not tell an outsider which internal ports are
open.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InvalidInput, UnsafeUrl
from ..netguard import AddressGuard, host_and_port, refuse_credentials

PUBLIC = "public"
REFUSED = (
    "this server only crawls public addresses, or those named by its --allow-hosts; "
    "loopback, private, link-local and metadata addresses need e.g. "
    "`mdcrawl serve --allow-hosts 127.0.0.1/32` to crawl a docs server on this machine"
)


def serve_guard(allow_hosts: Sequence[str]) -> AddressGuard:
    """The guard for ``--allow-hosts`` values; ``InvalidInput`` for a value that is
    neither a network nor ``public``."""
    if not allow_hosts:
        return AddressGuard()
    networks = [h for h in allow_hosts if h.strip().lower() != PUBLIC]
    return AddressGuard(networks, allow_public=len(networks) < len(allow_hosts))


class StartUrlCheck:
    """The service's ``UrlChecker``: credentials and schemes get their own message; every
    address refusal the same one."""

    def __init__(self, guard: AddressGuard) -> None:
        self.guard = guard  # also for the requests of crawls this check let in (MCP tools)

    def __call__(self, url: str) -> None:
        host_and_port(url)  # not http(s): says so
        refuse_credentials(url)
        try:
            self.guard.check_url(url)
        except InvalidInput:
            raise UnsafeUrl(REFUSED) from None
