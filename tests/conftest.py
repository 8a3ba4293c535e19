"""Shared fixtures: real servers on 127.0.0.1 and real docs sites."""

from __future__ import annotations

import socket

import pytest


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach an address outside loopback: refuse such connects outright."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        if isinstance(address, tuple) and self.family in (socket.AF_INET, socket.AF_INET6):
            host = str(address[0])
            if not (host.startswith("127.") or host in ("::1", "localhost")):
                raise OSError(f"test tried to reach {host}: only loopback is allowed")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)
