"""The REST API of `mdcrawl serve` fuzzed from docs/openapi.yaml with schemathesis: whatever
a client sends, never a 5xx, and every answer (status, headers, body) matches the spec.

Bounded: a few examples per operation (``MAX_EXAMPLES``), no shrinking-heavy phases, so the
run takes well under a minute. The server crawls loopback addresses only
(``--allow-hosts 127.0.0.0/8``, checked without DNS): a generated URL elsewhere is a 400
``unsafe_url`` and sends no traffic."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.integration.test_serve_support import ServeProcess, run_serve

SPEC = Path(__file__).parents[2] / "docs" / "openapi.yaml"
MAX_EXAMPLES = 25
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]

schema = schemathesis.openapi.from_path(SPEC)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with run_serve(tmp_path_factory.mktemp("fuzz")) as running:
        yield running


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_api_answers_match_the_spec(case: schemathesis.Case, server: ServeProcess) -> None:
    case.call_and_validate(
        base_url=server.base_url,
        headers={"x-api-key": server.api_key},
        checks=CHECKS,
        allow_redirects=False,
    )
