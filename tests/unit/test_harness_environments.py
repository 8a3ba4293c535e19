"""The scale harness's execution environments: a cold start only when none is idle."""

from __future__ import annotations

from bench.harness import Environments


def test_concurrent_invocations_start_environments_later_ones_reuse_them() -> None:
    envs = Environments()
    assert [envs.take("processor") for _ in range(3)] == [True, True, True]  # concurrent
    for _ in range(3):
        envs.give_back("processor")
    assert [envs.take("processor") for _ in range(3)] == [False, False, False]  # warm
    assert envs.take("processor") is True  # a fourth at once: one more environment
    assert envs.take("crawler") is True  # each function has its own
    assert envs.started == {"processor": 4, "crawler": 1}
