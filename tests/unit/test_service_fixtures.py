"""The API Gateway event samples in tests/fixtures/events (used by the handler tests)
carry what the service needs, and route where their names say."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mdcrawl.models import CrawlOptions, Job
from mdcrawl.service import ApiRequest
from mdcrawl.service.rest import handle_request
from mdcrawl.service.ws import on_connect, on_message

from tests.unit.test_service_support import Api, RecordingPusher, make_api, make_ws

EVENTS = Path(__file__).resolve().parents[1] / "fixtures" / "events"
JOB = "0f3c2a9e7b1d4c6a8e5f2b7c9d1a3e4f"
KEY_ID = "k9x2mq7abc"


def load_event(name: str) -> dict[str, Any]:
    return json.loads((EVENTS / f"{name}.json").read_text())


def as_request(event: dict[str, Any]) -> ApiRequest:
    """The least a REST proxy adapter does (the real one is functions/api)."""
    body = (event["body"] or "").encode()
    if event["isBase64Encoded"]:
        body = base64.b64decode(body)
    context = event["requestContext"]
    return ApiRequest(
        method=event["httpMethod"],
        path=event["path"],
        query=event["queryStringParameters"] or {},
        headers=event["headers"] or {},
        body=body,
        owner=context["identity"]["apiKeyId"] or "",
        base=f"/{context['stage']}",
    )


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    made = make_api(tmp_path)
    job = Job(JOB, "https://docs.example.com/", CrawlOptions(), owner=KEY_ID)
    assert made.stores.jobs.create(job)
    yield made
    made.stores.close()


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("rest_post_jobs", 202),
        ("rest_post_jobs_base64", 202),
        ("rest_post_jobs_malformed", 400),
        ("rest_post_jobs_private_url", 400),
        ("rest_post_jobs_no_api_key", 401),
        ("rest_list_jobs", 200),
        ("rest_get_job", 200),
        ("rest_get_result", 409),
        ("rest_post_cancel", 202),
        ("rest_get_events", 200),
    ],
)
def test_rest_samples_route_as_named(api: Api, name: str, status: int) -> None:
    event = load_event(name)
    response = handle_request(as_request(event), api.deps)

    assert response.status == status, response.json()
    if event["pathParameters"]:
        assert event["pathParameters"]["job_id"] == JOB
    if status == 202 and name.startswith("rest_post_jobs"):
        assert response.headers["Location"].startswith("/prod/jobs/")


def test_websocket_samples_drive_the_protocol(api: Api) -> None:
    pusher = RecordingPusher()
    deps = make_ws(api.stores, pusher)
    connect = load_event("ws_connect")
    connection_id = connect["requestContext"]["connectionId"]
    assert connect["queryStringParameters"]["api_key"]

    assert on_connect(connection_id, connect["requestContext"]["authorizer"]["principalId"], deps)
    for name, first_type in [
        ("ws_subscribe", "subscribed"),
        ("ws_ping", "pong"),
        ("ws_default_malformed", "error"),
    ]:
        event = load_event(name)
        assert event["requestContext"]["connectionId"] == connection_id
        assert on_message(connection_id, event["body"], deps)[0]["type"] == first_type
    assert load_event("ws_disconnect")["requestContext"]["eventType"] == "DISCONNECT"
