"""Fixtures for the offline end-to-end runs: the requests docs on 127.0.0.1 and the stack
(moto + the synthesized state machine + the real handlers)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from mdcrawl.service.ws import EventCursor, Verdict, events_in, resume_after

from tests.support.iam import check_calls, role_statements
from tests.support.server import RunningServer, serve_directory
from tests.support.sfn import OfflineStack, offline_stack, synthesized_template
from tests.support.sites import Site, require_site


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


@dataclass
class Subscriber:
    """A WebSocket client: connects through the websocket handler, reads what the
    management API delivered to its connection, and follows the delivery contract
    (drop duplicates, re-subscribe with ``after`` on a gap)."""

    stack: OfflineStack
    connection_id: str
    cursor: EventCursor = field(default_factory=EventCursor)
    events: list[dict[str, Any]] = field(default_factory=list)
    other: list[dict[str, Any]] = field(default_factory=list)
    read: int = 0
    resyncs: int = 0
    resumes: int = 0
    job_id: str = ""

    def connect(self, api_key: str | None = None) -> int:
        key = self.stack.api_key if api_key is None else api_key
        answer = self.stack.ws_event(
            "$connect", self.connection_id, queryStringParameters={"api_key": key}
        )
        if answer["statusCode"] == 200:
            self.stack.ws.open.add(self.connection_id)
        return int(answer["statusCode"])

    def subscribe(self, job_id: str, after: int | None = None) -> None:
        self.job_id = job_id
        body = {"action": "subscribe", "job_id": job_id,
                "after": self.cursor.last if after is None else after}
        self.stack.ws_event("subscribe", self.connection_id, body=json.dumps(body))

    def drop(self) -> None:
        """The client goes away without a $disconnect (a stale connection)."""
        self.stack.ws.open.discard(self.connection_id)

    def pump(self) -> list[dict[str, Any]]:
        if self.stack.stream is not None:
            self.stack.stream.drain()  # what the stream holds reaches the fan-out first
        messages = self.stack.ws.messages[self.connection_id]
        while self.read < len(messages):
            message = json.loads(messages[self.read])
            self.read += 1
            if resume_after(message) is not None:  # the replay stopped short: go on
                self.resumes += 1
                self.subscribe(self.job_id)
                continue
            if message.get("type") != "events":
                self.other.append(message)
                continue
            for event in events_in(message):
                verdict = self.cursor.accept(event)
                if verdict is Verdict.DELIVER:
                    self.events.append(event)
                elif verdict is Verdict.RESYNC:
                    self.resyncs += 1
                    self.subscribe(self.job_id)
                    break
        return self.events
