"""docs/openapi.yaml tells the truth about the router: same routes, same request fields,
and every answer the router gives (success or error) is documented and fits its schema."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from mdcrawl.models import EventType, JobStatus
from mdcrawl.names import job_key
from mdcrawl.service import ApiResponse, JobRequest
from mdcrawl.service.rest import ROUTES
from mdcrawl.service.schema import openapi_block, options_schema, request_schema
from openapi_schema_validator import OAS30Validator
from openapi_spec_validator import validate

from tests.unit.test_service_support import Api, make_api

SPEC_PATH = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"
METHODS = {"get", "post", "put", "patch", "delete", "head", "options"}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return yaml.safe_load(SPEC_PATH.read_text())


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    made = make_api(tmp_path)
    yield made
    made.stores.close()


def deref(node: Any, spec: dict[str, Any]) -> Any:
    """The node with every local $ref replaced by its target (the spec has no cycles)."""
    if isinstance(node, dict):
        if "$ref" in node:
            target: Any = spec
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            return deref(target, spec)
        return {key: deref(value, spec) for key, value in node.items()}
    if isinstance(node, list):
        return [deref(item, spec) for item in node]
    return node


def test_the_spec_is_valid_openapi_3(spec: dict[str, Any]) -> None:
    validate(spec)
    assert spec["openapi"].startswith("3.0")


def test_every_route_is_documented_and_nothing_else(spec: dict[str, Any]) -> None:
    documented = {
        (method.upper(), path)
        for path, item in spec["paths"].items()
        for method in item
        if method in METHODS
    }
    routed = {(route.method, route.template) for route in ROUTES}

    assert documented == routed


def test_the_request_and_options_schemas_are_derived_from_the_models(
    spec: dict[str, Any],
) -> None:
    schemas = spec["components"]["schemas"]
    assert schemas["JobRequest"] == request_schema()
    assert schemas["Options"] == options_schema()
    assert set(schemas["JobRequest"]["properties"]) == set(JobRequest.model_fields)
    # the file holds the generated text itself (`make openapi` writes it)
    assert openapi_block() in SPEC_PATH.read_text()


def check(spec: dict[str, Any], method: str, template: str, response: ApiResponse) -> None:
    operation = spec["paths"][template][method.lower()]
    documented = operation["responses"]
    assert str(response.status) in documented, f"{method} {template} -> {response.status}"
    answer = deref(documented[str(response.status)], spec)
    for header in answer.get("headers", {}):
        if header in ("Location", "Retry-After"):
            assert header in response.headers
    if "content" in answer:
        schema = answer["content"]["application/json"]["schema"]
        assert response.headers["Content-Type"] == "application/json"
        OAS30Validator(schema).validate(response.json())
    else:
        assert response.body == b""


def test_every_answer_fits_the_spec(api: Api, spec: dict[str, Any]) -> None:
    def call(method: str, template: str, path: str, **kwargs: Any) -> ApiResponse:
        response = api.call(method, path, **kwargs)
        check(spec, method, template, response)
        return response

    url = "https://docs.example.com/"
    job_id = call("POST", "/jobs", "/jobs", body={"url": url}).json()["job_id"]
    call("POST", "/jobs", "/jobs", body={"url": url}, headers={"Idempotency-Key": "k"})
    call(
        "POST",
        "/jobs",
        "/jobs",
        body={"url": url, "max_pages": 3},
        headers={"Idempotency-Key": "k"},
    )  # 409
    call("POST", "/jobs", "/jobs", body=b"{")  # 400
    call("POST", "/jobs", "/jobs", body={"url": "http://10.0.0.1/"})  # 400
    call("POST", "/jobs", "/jobs", body=b"x" * 100_000)  # 413
    call("POST", "/jobs", "/jobs", body={"url": url}, headers={"Content-Type": "text/xml"})
    call("POST", "/jobs", "/jobs", body={"url": url}, owner="")  # 401
    call("GET", "/jobs", "/jobs")
    call("GET", "/jobs", "/jobs", query={"limit": "0"})  # 400
    one = "/jobs/{job_id}"
    call("GET", one, f"/jobs/{job_id}")
    call("GET", one, "/jobs/nope")  # 404
    call("GET", one + "/result", f"/jobs/{job_id}/result")  # 409 not ready
    call("GET", one + "/result", f"/jobs/{job_id}/result", query={"format": "x"})  # 400
    api.stores.events.append(job_id, EventType.JOB_STARTED, {"at": 1}, ts=1.0)
    call("GET", one + "/events", f"/jobs/{job_id}/events")
    call("GET", one + "/events", f"/jobs/{job_id}/events", query={"after": "x"})  # 400
    api.stores.blobs.put(job_key(job_id, "docs.md"), b"# Docs\n")
    api.stores.jobs.transition(job_id, [JobStatus.QUEUED], JobStatus.COMPLETED)
    call("GET", one, f"/jobs/{job_id}")  # with result links
    call("GET", one + "/result", f"/jobs/{job_id}/result")  # 302
    call("GET", one + "/result", f"/jobs/{job_id}/result", query={"format": "llms"})  # 404
    call("POST", one + "/cancel", f"/jobs/{job_id}/cancel")  # 409
    other = call("POST", "/jobs", "/jobs", body={"url": url}).json()["job_id"]
    call("POST", one + "/cancel", f"/jobs/{other}/cancel")  # 202
