"""The scale harness's execution environments as processes (bench/harness.py
``ProcessPool``): a function's invocations run in warm worker processes of its own,
reused as Lambda reuses environments; what each process counts reaches the parent's
meter; a worker that overruns the function's timeout is ended, as Lambda ends it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from mdcrawl.names import TABLE_ENV, EnvVar

from bench.harness import Meter, ProcessPool, worker_env
from tests.support.aws import MotoAws, served_moto
from tests.support.sfn import POWERTOOLS_ENV


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[MotoAws, ProcessPool]]:
    for key, value in POWERTOOLS_ENV.items():
        monkeypatch.setenv(key, value)
    with served_moto({"lambda": {"use_docker": False}}) as aws:
        env = {var.value: aws.names[table] for table, var in TABLE_ENV.items()}
        env.update({EnvVar.BUCKET.value: aws.bucket,
                    EnvVar.WEBSOCKET_ENDPOINT.value: aws.endpoint or ""})
        pool = ProcessPool(lambda name: worker_env(aws, env, name))
        try:
            yield aws, pool
        finally:
            pool.close()


def stream_batch(job_id: str) -> dict[str, Any]:
    """One inserted event, as the events table's stream hands it to the fan-out."""
    image = {"job_id": {"S": job_id}, "seq": {"N": "1"}, "type": {"S": "page.done"},
             "ts": {"N": "1"}, "data": {"M": {}}}
    return {"Records": [{"eventName": "INSERT", "dynamodb": {"NewImage": image}}]}


def test_invocations_reuse_a_warm_process_and_concurrent_ones_start_more(served) -> None:
    _, pool = served
    meter = Meter()
    answers = [pool.invoke("fanout", stream_batch("job-1"), 60_000, meter) for _ in range(2)]
    assert answers[0]["events"] == 1 and answers[0]["frames"] == 0  # nobody subscribed
    assert pool.started["fanout"] == 1 and meter.cold_starts["fanout"] == 1  # then warm
    # Each invocation asked the connections index once, from the worker process: the
    # parent's meter has both calls, billed units included.
    assert meter.calls[("dynamodb", "Query")] == 2 and meter.read_units > 0
    assert meter.invocations["fanout"] == 2 and meter.billed_ms["fanout"] > 0

    meter.latency_s = 2.0  # each AWS call now waits 2 s: two invocations overlap
    threads = [
        threading.Thread(target=pool.invoke, args=("fanout", stream_batch(f"j{i}"), 60_000, meter))
        for i in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert pool.started["fanout"] == 2 and meter.cold_starts["fanout"] == 2
    assert meter.calls[("dynamodb", "Query")] == 4


def test_an_invocation_over_the_timeout_ends_its_process(served) -> None:
    _, pool = served
    meter = Meter(latency_s=5.0)  # the fan-out's one query outlasts a 1 s budget (+1 s grace)
    with pytest.raises(Exception) as raised:
        pool.invoke("fanout", stream_batch("job-1"), 1_000, meter)
    assert type(raised.value).__name__ == "Sandbox.Timedout"
    assert meter.violations == {"lambda timeout (fanout)": 1}
    meter.latency_s = 0.0
    assert pool.invoke("fanout", {"Records": []}, 60_000, meter)["events"] == 0
    assert pool.started["fanout"] == 2  # the timed-out environment was not reused
