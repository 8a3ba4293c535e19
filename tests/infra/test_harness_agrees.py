"""The scale harness gives each function the memory and timeout the stack gives it: its
bill (GB-s) and its timeout enforcement follow them."""

from __future__ import annotations

from bench.harness import MEMORY_MB, TIMEOUT_S
from infra.pipeline import FUNCTIONS


def test_harness_memory_and_timeouts_are_the_stacks() -> None:
    assert {name: spec.memory_mb for name, spec in FUNCTIONS.items()} == MEMORY_MB
    assert {name: spec.timeout_s for name, spec in FUNCTIONS.items()} == TIMEOUT_S
