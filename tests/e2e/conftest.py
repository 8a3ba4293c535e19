"""Fixtures for the offline end-to-end runs: the requests docs on 127.0.0.1 and the stack
(moto + the synthesized state machine + the real handlers)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.iam import check_calls, role_statements
from tests.support.server import RunningServer, serve_directory
from tests.support.sfn import OfflineStack, offline_stack, synthesized_template
from tests.support.sites import Site, require_site
from tests.support.stream import Subscriber  # noqa: F401 - the e2e tests' WebSocket client


@pytest.fixture
def site() -> Site:
    return require_site("requests")


@pytest.fixture
def server(site: Site) -> Iterator[RunningServer]:
    with serve_directory(site.root) as running:
        yield running


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[OfflineStack]:
    with offline_stack(monkeypatch) as running:
        yield running
    # IAM sufficiency: whatever the test made the functions do, their roles allow it.
    assert running.recorder.unknown == []
    assert check_calls(running.recorder.calls, role_statements(synthesized_template())) == []
