"""The job state machine: the contract the orchestrator and the e2e test rely on."""

from __future__ import annotations

import json

from infra.asl import definition_json, state_machine_definition
from infra.statemachine import CRASH_ERRORS, SERVICE_ERRORS, STORE_ERRORS

from .conftest import Synth

TASKS = ("Orchestrate", "Finalize", "MarkFailed")
# Finalize runs in the finalizer function (its own 15-minute timeout), the rest in the
# orchestrator.
FUNCTION_OF = {"Orchestrate": "orchestrator", "Finalize": "finalizer", "MarkFailed": "orchestrator"}


def test_only_plain_states_that_moto_interprets(synth: Synth) -> None:
    asl = state_machine_definition(synth.template)
    assert asl["StartAt"] == "Orchestrate"
    assert {s["Type"] for s in asl["States"].values()} <= {
        "Task",
        "Choice",
        "Wait",
        "Pass",
        "Fail",
        "Succeed",
    }
    for name in TASKS:  # payload-response-only invokes
        assert asl["States"][name]["Resource"] == f"${{function:{FUNCTION_OF[name]}}}"


def test_task_payloads(synth: Synth) -> None:
    states = state_machine_definition(synth.template)["States"]
    assert states["Orchestrate"]["Parameters"] == {"step": "orchestrate", "job_id.$": "$.job_id"}
    assert states["Finalize"]["Parameters"] == {"step": "finalize", "job_id.$": "$.job_id"}
    assert states["MarkFailed"]["Parameters"] == {
        "step": "fail",
        "job_id.$": "$.job_id",
        "error.$": "$.error",
    }


def test_loops_and_choices(synth: Synth) -> None:
    states = state_machine_definition(synth.template)["States"]
    after = {c["StringEquals"]: c["Next"] for c in states["AfterOrchestrate"]["Choices"]}
    assert after == {"continue": "Orchestrate", "finalize": "Finalize", "done": "Done"}
    assert states["AfterOrchestrate"]["Choices"][0]["Variable"] == "$.orchestrate.next"
    after = {c["StringEquals"]: c["Next"] for c in states["AfterFinalize"]["Choices"]}
    wait = after.pop("wait")
    assert after == {"done": "Done"}
    assert states[wait]["Type"] == "Wait" and states[wait]["Next"] == "Finalize"
    assert 1 <= states[wait]["Seconds"] <= 10
    assert states["Done"]["Type"] == "Succeed"
    assert states["MarkFailed"]["Next"] == "Failed" and states["Failed"]["Type"] == "Fail"


def test_retries_service_errors_and_orchestrator_crashes_with_backoff(synth: Synth) -> None:
    states = state_machine_definition(synth.template)["States"]
    for name in TASKS:
        service, crash, store = states[name]["Retry"]
        assert service["ErrorEquals"] == list(SERVICE_ERRORS)
        # A timed-out or crashed slice is run again: the frontier is the checkpoint.
        assert set(crash["ErrorEquals"]) >= {"Sandbox.Timedout", "Lambda.Unknown"}
        assert crash["ErrorEquals"] == list(CRASH_ERRORS)
        # A store error the slice could not absorb (throttling past botocore's retries).
        assert store["ErrorEquals"] == list(STORE_ERRORS) == ["StoreError", "InvocationFailed"]
        for retry in (service, crash, store):
            assert retry["BackoffRate"] > 1 and retry["MaxAttempts"] >= 3
            assert retry["IntervalSeconds"] >= 1


def test_failures_are_caught_and_marked(synth: Synth) -> None:
    states = state_machine_definition(synth.template)["States"]
    for name in ("Orchestrate", "Finalize"):
        (catch,) = states[name]["Catch"]
        assert catch == {
            "ErrorEquals": ["States.ALL"],
            "ResultPath": "$.error",
            "Next": "MarkFailed",
        }
    (catch,) = states["MarkFailed"]["Catch"]
    assert catch["ErrorEquals"] == ["States.ALL"] and catch["Next"] == "Failed"


def test_logging_all_and_tracing(synth: Synth) -> None:
    (machine,) = [
        v["Properties"] for v in synth.of_type("AWS::StepFunctions::StateMachine").values()
    ]
    assert machine["LoggingConfiguration"]["Level"] == "ALL"
    assert machine["TracingConfiguration"] == {"Enabled": True}
    assert machine["StateMachineType"] == "STANDARD"


def test_definition_json_substitutes_arns_and_shortens_waits(synth: Synth) -> None:
    arns = {
        fn: f"arn:aws:lambda:us-east-1:123456789012:function:{fn}"
        for fn in ("orchestrator", "finalizer")
    }
    asl = json.loads(
        definition_json(synth.template, arns, wait_seconds=0, retry_interval_seconds=1)
    )
    for name in TASKS:
        assert asl["States"][name]["Resource"] == arns[FUNCTION_OF[name]]
        assert asl["States"][name]["Retry"][0]["IntervalSeconds"] == 1
    assert all(s["Seconds"] == 0 for s in asl["States"].values() if s["Type"] == "Wait")
