"""ApiGatewayPusher under moto (patched to keep message boundaries and raise Gone)."""

from __future__ import annotations

import json

import pytest
from mdcrawl.adapters.aws.pusher import ApiGatewayPusher
from mdcrawl.errors import StoreError

from tests.support.aws import WsRecorder, management_client, moto_clients


@pytest.fixture
def ws(monkeypatch):
    with moto_clients() as aws:
        recorder = WsRecorder().install(monkeypatch)
        yield ApiGatewayPusher(management_client(aws.session)), recorder


def test_each_push_is_one_json_message(ws):
    pusher, recorder = ws
    recorder.open.add("c1")
    assert pusher.push("c1", {"type": "job.started", "seq": 1}) is True
    assert pusher.push("c1", {"type": "page.done", "seq": 2, "data": {"t": "é"}}) is True
    assert [json.loads(m) for m in recorder.messages["c1"]] == [
        {"type": "job.started", "seq": 1},
        {"type": "page.done", "seq": 2, "data": {"t": "é"}},
    ]


def test_a_gone_connection_is_false_not_an_error(ws):
    pusher, recorder = ws
    assert pusher.push("stale", {"type": "job.progress"}) is False
    assert recorder.messages["stale"] == []


def test_other_failures_are_store_errors(monkeypatch):
    class Throttled:
        def post_to_connection(self, **_):
            from botocore.exceptions import ClientError

            raise ClientError({"Error": {"Code": "LimitExceededException"}}, "PostToConnection")

    with pytest.raises(StoreError, match="LimitExceeded"):
        ApiGatewayPusher(Throttled()).push("c1", {})
