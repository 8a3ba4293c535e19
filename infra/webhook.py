"""Webhooks: the deployment's signing secret, and the EventBridge rule that hands each
job's end (``Job Completed`` / ``Job Failed``, put on the default bus by the functions
that end jobs) to the orchestrator's ``notify`` step, which POSTs it, signed, to the
job's webhook (mdcrawl/webhook.py, pipeline/notify.py). The api function reads no
secret: it only knows webhooks are on (the env var is set) to accept them."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct
from mdcrawl.adapters.aws.announce import EVENT_SOURCE, TERMINAL_EVENTS
from mdcrawl.models import EventType
from mdcrawl.names import EnvVar

from .nag import acknowledge

NOTIFIED = (TERMINAL_EVENTS[EventType.JOB_COMPLETED], TERMINAL_EVENTS[EventType.JOB_FAILED])
RETRY_ATTEMPTS = 8  # EventBridge's own retries of the notify step (it retries inside too)


class Webhooks(Construct):
    def __init__(
        self, scope: Construct, id: str, *, orchestrator: lambda_.Function, api: lambda_.Function
    ) -> None:
        super().__init__(scope, id)
        self.secret = secretsmanager.Secret(
            self,
            "SigningSecret",
            description="HMAC-SHA256 key that signs mdcrawl webhooks (X-Mdcrawl-Signature)",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=48, exclude_punctuation=True
            ),
        )
        acknowledge(
            self.secret,
            "AwsSolutions-SMG4",
            "Receivers hold a copy of this key: rotation is a planned change (docs/deploy.md, "
            "key rotation), not a scheduled Lambda that would break every receiver at once.",
        )
        orchestrator.role.add_to_principal_policy(  # type: ignore[union-attr]
            iam.PolicyStatement(
                actions=["secretsmanager:GetSecretValue"], resources=[self.secret.secret_arn]
            )
        )
        for function in (orchestrator, api):
            function.add_environment(EnvVar.WEBHOOK_SECRET, self.secret.secret_arn)
        self.rule = self._rule(orchestrator)

    def _rule(self, orchestrator: lambda_.Function) -> events.Rule:
        rule = events.Rule(
            self,
            "JobsEnded",
            description="A job completed or failed: send its webhook, if it has one",
            event_pattern=events.EventPattern(source=[EVENT_SOURCE], detail_type=list(NOTIFIED)),
        )
        rule.add_target(
            targets.LambdaFunction(
                orchestrator,
                event=events.RuleTargetInput.from_object(
                    {
                        "step": "notify",
                        "job_id": events.EventField.from_path("$.detail.job_id"),
                        "event": events.EventField.from_path("$.detail"),
                    }
                ),
                retry_attempts=RETRY_ATTEMPTS,
                max_event_age=cdk.Duration.hours(2),
            )
        )
        return rule
