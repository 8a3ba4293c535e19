"""The scale harness bills WebSocket messages as API Gateway meters them: in 32 KB
increments (a 33 KB message is two), not one per post."""

from __future__ import annotations

from typing import Any

import pytest

from bench.cost import PRICES, dollars
from bench.harness import Meter, ws_billed_messages
from tests.support.iam import running_as


@pytest.mark.parametrize(
    ("size", "billed"),
    [(1, 1), (32 * 1024, 1), (32 * 1024 + 1, 2), (96 * 1024, 3), (128 * 1024, 4)],
)
def test_a_message_is_billed_per_started_32_kb(size: int, billed: int) -> None:
    assert ws_billed_messages(size) == billed


class _Model:
    def __init__(self, service: str, name: str) -> None:
        self.name = name
        self.service_model = type("S", (), {"service_name": service})()


def _post(meter: Meter, data: bytes) -> None:
    params: dict[str, Any] = {"ConnectionId": "c1", "Data": data}
    with running_as("fanout"):  # a function's call (the harness's own are not billed)
        meter.before_call(_Model("apigatewaymanagementapi", "PostToConnection"), params, {})


def test_a_96_kib_frame_costs_three_messages_and_a_small_one_one() -> None:
    meter = Meter()
    _post(meter, b"x" * (96 * 1024))
    _post(meter, b"{}")
    assert (meter.ws_posts, meter.ws_messages) == (2, 4)
    run = {"transitions": 0}
    assert dollars(meter, run)["api_gateway"] == pytest.approx(4 * PRICES["apigw_ws_message"])


def test_requests_in_flight_are_the_most_overlapping_intervals_per_host() -> None:
    meter = Meter()
    # Three worker processes' requests at one host, one at another: two overlap at most
    # (a request ending exactly when another starts does not overlap it).
    meter.merge({**Meter().take(), "requests": [
        ("site:80", 0.0, 2.0), ("site:80", 1.0, 3.0), ("site:80", 2.0, 4.0),
        ("other:80", 0.5, 1.5)]})
    assert meter.host_peaks() == {"site:80": 2, "other:80": 1}


def test_less_memory_is_billed_the_longer_cpu_time_it_would_have() -> None:
    from bench.meter import FULL_VCPU_MB, MEMORY_MB, billed_seconds

    # The processor: its CPU time at its share of a vCPU, plus its AWS waits.
    slower = FULL_VCPU_MB / MEMORY_MB["processor"]
    assert billed_seconds("processor", 9.0, 0.5, 10, 0.01) == pytest.approx(0.5 * slower + 0.1)
    # The others: wall time here plus what the CPU work takes longer on their share.
    slower = FULL_VCPU_MB / MEMORY_MB["crawler"]
    assert billed_seconds("crawler", 2.0, 0.5, 10, 0.01) == pytest.approx(2.0 + 0.5 * (slower - 1))
    assert billed_seconds("crawler", 2.0, 0.0, 10, 0.01) == 2.0  # waits alone: as they were
