"""StepFunctionsStarter under moto: one execution per job id, however often asked."""

from __future__ import annotations

import json

import pytest
from mdcrawl.adapters.aws.starter import StepFunctionsStarter
from mdcrawl.errors import StoreError

from tests.support.aws import moto_clients

DEFINITION = json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}})


@pytest.fixture
def sfn():
    with moto_clients() as aws:
        client = aws.session.client("stepfunctions")
        role = aws.session.client("iam").create_role(RoleName="sfn", AssumeRolePolicyDocument="{}")[
            "Role"
        ]["Arn"]
        arn = client.create_state_machine(name="crawl", definition=DEFINITION, roleArn=role)[
            "stateMachineArn"
        ]
        yield client, arn


def test_start_names_the_execution_after_the_job_and_passes_the_input(sfn):
    client, arn = sfn
    assert StepFunctionsStarter(client, arn).start("job-1", {"job_id": "job-1"}) is True
    (execution,) = client.list_executions(stateMachineArn=arn)["executions"]
    assert execution["name"] == "job-1"
    described = client.describe_execution(executionArn=execution["executionArn"])
    assert json.loads(described["input"]) == {"job_id": "job-1"}


def test_a_second_start_for_the_same_job_starts_nothing(sfn):
    client, arn = sfn
    starter = StepFunctionsStarter(client, arn)
    starter.start("job-1", {"job_id": "job-1"})
    assert starter.start("job-1", {"job_id": "job-1", "retry": True}) is False
    assert len(client.list_executions(stateMachineArn=arn)["executions"]) == 1


def test_an_unknown_state_machine_is_a_store_error(sfn):
    client, arn = sfn
    with pytest.raises(StoreError):
        StepFunctionsStarter(client, arn + "-gone").start("job-1", {})
