"""Shared doubles and builders for the service tests (not a test module by itself).

Real local stores (SQLite + files under tmp_path); only the two ports that reach
outside the process are doubles: the starter (Step Functions / a task runner) and the
pusher (API Gateway Management API / a socket).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mdcrawl.adapters.local import open_local_stores
from mdcrawl.adapters.local.stores import LocalStores
from mdcrawl.netguard import AddressGuard, host_and_port
from mdcrawl.service import ApiDeps, ApiRequest, ApiResponse, ServiceLimits, WsDeps
from mdcrawl.service.rest import handle_request


@dataclass
class RecordingStarter:
    """Starts nothing; remembers each call, answers True only the first time per job
    (like Step Functions refusing a second execution with the same name)."""

    calls: list[str] = field(default_factory=list)

    def __call__(self, job_id: str) -> bool:
        self.calls.append(job_id)
        return self.calls.count(job_id) == 1


@dataclass
class RecordingPusher:
    gone: set[str] = field(default_factory=set)
    sent: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def push(self, connection_id: str, message: dict[str, Any]) -> bool:
        if connection_id in self.gone:
            return False
        # A real pusher serialises: prove every message is plain JSON.
        self.sent.setdefault(connection_id, []).append(json.loads(json.dumps(message)))
        return True


# Unit tests have no DNS: names resolve from this table, then the real guard judges them.
FAKE_DNS = {"internal.example.com": "10.0.0.5", "metadata.example.com": "169.254.169.254"}
PUBLIC_ADDRESS = "93.184.216.34"


def url_checker() -> Callable[[str], None]:
    """AddressGuard's rules (hosted mode) over the fake DNS table above."""
    guard = AddressGuard()

    def check_url(url: str) -> None:
        host, _ = host_and_port(url)
        try:
            ipaddress.ip_address(host)
            address = host
        except ValueError:
            address = FAKE_DNS.get(host, PUBLIC_ADDRESS)
        guard.check_addresses(host, [address])

    return check_url


@dataclass
class Api:
    stores: LocalStores
    starter: RecordingStarter
    deps: ApiDeps

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        owner: str = "alice",
        query: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> ApiResponse:
        raw = (
            body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
        )
        request = ApiRequest(method, path, query or {}, headers or {}, raw, owner)
        return handle_request(request, self.deps)

    def count(self, table: str) -> int:
        return int(self.stores.db.query(f"SELECT count(*) AS n FROM {table}", ())[0]["n"])


def make_api(root: Path, limits: ServiceLimits | None = None) -> Api:
    stores = open_local_stores(root)
    starter = RecordingStarter()
    deps = ApiDeps(
        jobs=stores.jobs,
        frontier=stores.frontier,
        pages=stores.pages,
        events=stores.events,
        blobs=stores.blobs,
        clock=stores.clock,
        start_job=starter,
        check_url=url_checker(),
        limits=limits or ServiceLimits(),
    )
    return Api(stores, starter, deps)


def make_ws(stores: LocalStores, pusher: RecordingPusher) -> WsDeps:
    return WsDeps(
        jobs=stores.jobs,
        events=stores.events,
        connections=stores.connections,
        pusher=pusher,
        clock=stores.clock,
    )
