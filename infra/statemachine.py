"""The job's state machine: plain Task/Choice/Wait/Fail/Succeed states over one Lambda
(the orchestrator), so moto's interpreter can run the synthesized definition.

    Orchestrate --continue--> Orchestrate        (a slice per call; the frontier is the checkpoint)
                --finalize--> Finalize --wait--> WaitForProcessing --> Finalize
                                       --done--> Done
                --done------> Done
    any task error (after service-error retries) --> MarkFailed --> Failed
    execution FAILED / TIMED_OUT / ABORTED --EventBridge--> orchestrator "fail" step
"""

from __future__ import annotations

import math

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from .access import nag_token
from .config import Settings
from .nag import acknowledge

# Transient Lambda service errors (not function errors): retried with backoff.
SERVICE_ERRORS = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
)
# The orchestrator itself dying (a timeout, a crash, an out-of-memory exit): safe to run
# again, because the frontier is the checkpoint and leases of the dead slice expire.
CRASH_ERRORS = ("Sandbox.Timedout", "Lambda.Unknown", "Runtime.ExitError")
CRASH_MAX_ATTEMPTS = 3
# A store or invoke failure the orchestrator could not absorb (DynamoDB throttling past
# botocore's own retries, a processor event Lambda refused): the errorType Lambda
# reports is the exception's class name. Safe to retry for the same reason as a crash.
STORE_ERRORS = ("StoreError", "InvocationFailed")
STORE_MAX_ATTEMPTS = 4
RETRY_INTERVAL_S = 2
RETRY_MAX_ATTEMPTS = 6
RETRY_BACKOFF = 2.0
# Finalize must run after every fetched page is processed (the processor is async):
# it answers "wait" until then. 5 s keeps a 1-hour drain under 1,000 loop turns,
# far below the 25,000-event history limit of a standard workflow.
FINALIZE_WAIT_S = 5
# Past the longest budget, an hour to drain processing; then the execution times out
# (an alarm watches ExecutionsTimedOut).
DRAIN_ALLOWANCE_S = 3600
# Execution statuses that end a job without its own terminal transition.
EXECUTION_ENDED_BADLY = ("FAILED", "TIMED_OUT", "ABORTED")
EVENT_RETRY_ATTEMPTS = 8


class JobStateMachine(Construct):
    def __init__(
        self, scope: Construct, id: str, *, orchestrator: lambda_.IFunction, settings: Settings
    ) -> None:
        super().__init__(scope, id)
        self._orchestrator = orchestrator
        failed = sfn.Fail(self, "Failed", error="JobFailed", cause="The job failed; see MarkFailed")
        mark_failed = self._invoke(
            "MarkFailed",
            {"step": "fail", "job_id.$": "$.job_id", "error.$": "$.error"},
            result_path=sfn.JsonPath.DISCARD,
        )
        # Marking failed is best effort: the execution fails either way.
        mark_failed.add_catch(failed, errors=[sfn.Errors.ALL], result_path="$.mark_failed_error")
        mark_failed.next(failed)

        orchestrate = self._invoke(
            "Orchestrate",
            {"step": "orchestrate", "job_id.$": "$.job_id"},
            result_path="$.orchestrate",
        )
        finalize = self._invoke(
            "Finalize", {"step": "finalize", "job_id.$": "$.job_id"}, result_path="$.finalize"
        )
        for task in (orchestrate, finalize):
            task.add_catch(mark_failed, errors=[sfn.Errors.ALL], result_path="$.error")
        done = sfn.Succeed(self, "Done")
        unexpected = sfn.Fail(
            self,
            "UnexpectedStep",
            error="UnexpectedStep",
            cause="The orchestrator answered an unknown 'next'",
        )
        wait = sfn.Wait(
            self,
            "WaitForProcessing",
            time=sfn.WaitTime.duration(cdk.Duration.seconds(FINALIZE_WAIT_S)),
        )
        is_ = sfn.Condition.string_equals
        orchestrate.next(
            sfn.Choice(self, "AfterOrchestrate")
            .when(is_("$.orchestrate.next", "continue"), orchestrate)
            .when(is_("$.orchestrate.next", "finalize"), finalize)
            .when(is_("$.orchestrate.next", "done"), done)
            .otherwise(unexpected)
        )
        finalize.next(
            sfn.Choice(self, "AfterFinalize")
            .when(is_("$.finalize.next", "wait"), wait.next(finalize))
            .when(is_("$.finalize.next", "done"), done)
            .otherwise(unexpected)
        )
        log_group = logs.LogGroup(
            self,
            "Logs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        self.machine = sfn.StateMachine(
            self,
            "Machine",
            definition_body=sfn.DefinitionBody.from_chainable(orchestrate),
            state_machine_type=sfn.StateMachineType.STANDARD,
            timeout=cdk.Duration.seconds(math.ceil(settings.caps["budget_s"]) + DRAIN_ALLOWANCE_S),
            tracing_enabled=True,
            # Payloads are job ids and step names only: safe to log in full.
            logs=sfn.LogOptions(
                destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=True
            ),
        )
        self.ended_badly = self._catch_executions_that_end_badly()
        role = self.machine.role
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::{nag_token(role, orchestrator.function_arn)}:*]",
            "Added by the LambdaInvoke task for versions/aliases of the orchestrator; the "
            "machine invokes no other function.",
        )
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::*]",
            "X-Ray trace writes and CloudWatch Logs vended-delivery actions (CreateLogDelivery, "
            "PutResourcePolicy, DescribeLogGroups, ...) do not support resource-level "
            "permissions; Step Functions requires them for tracing and logging.",
        )

    def _catch_executions_that_end_badly(self) -> events.Rule:
        """An execution that times out, is stopped or fails outside the Catch (MarkFailed
        itself failing) never runs MarkFailed: the job would stay ``running`` or
        ``finalizing`` and no terminal event would ever be sent. Step Functions reports
        the status change to EventBridge; this rule hands it to the orchestrator's
        ``fail`` step (the execution's name is the job id), which marks the job failed
        and sends ``job.failed`` unless the job already ended (a conditional transition)."""
        rule = events.Rule(
            self,
            "EndedBadly",
            description="A job's execution timed out, was stopped or failed: mark the job failed",
            event_pattern=events.EventPattern(
                source=["aws.states"],
                detail_type=["Step Functions Execution Status Change"],
                detail={
                    "status": list(EXECUTION_ENDED_BADLY),
                    "stateMachineArn": [self.machine.state_machine_arn],
                },
            ),
        )
        rule.add_target(
            targets.LambdaFunction(
                self._orchestrator,
                event=events.RuleTargetInput.from_object(
                    {
                        "step": "fail",
                        "job_id": events.EventField.from_path("$.detail.name"),
                        "error": {
                            "Error": events.EventField.from_path("$.detail.status"),
                            "Cause": "the job's workflow ended without finishing the job",
                        },
                    }
                ),
                retry_attempts=EVENT_RETRY_ATTEMPTS,
                max_event_age=cdk.Duration.hours(2),
            )
        )
        return rule

    def _invoke(
        self, name: str, payload: dict[str, str], *, result_path: str
    ) -> tasks.LambdaInvoke:
        task = tasks.LambdaInvoke(
            self,
            name,
            lambda_function=self._orchestrator,
            payload=sfn.TaskInput.from_object(payload),
            # The Task's Resource is the function ARN: the result is the handler's return
            # value itself, no {"Payload": ...} envelope.
            payload_response_only=True,
            retry_on_service_exceptions=False,  # our own retry below, with the full list
            result_path=result_path,
        )
        task.add_retry(
            errors=list(SERVICE_ERRORS),
            interval=cdk.Duration.seconds(RETRY_INTERVAL_S),
            max_attempts=RETRY_MAX_ATTEMPTS,
            backoff_rate=RETRY_BACKOFF,
        )
        task.add_retry(
            errors=list(CRASH_ERRORS),
            interval=cdk.Duration.seconds(RETRY_INTERVAL_S),
            max_attempts=CRASH_MAX_ATTEMPTS,
            backoff_rate=RETRY_BACKOFF,
        )
        task.add_retry(
            errors=list(STORE_ERRORS),
            interval=cdk.Duration.seconds(RETRY_INTERVAL_S),
            max_attempts=STORE_MAX_ATTEMPTS,
            backoff_rate=RETRY_BACKOFF,
        )
        return task
