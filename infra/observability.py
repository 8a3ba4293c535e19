"""Alarms (to an SNS topic) and one dashboard: DLQ depth, failed/timed-out executions,
Lambda errors and throttles per function, API 5xx."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subs
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from .config import Settings

PERIOD = cdk.Duration.minutes(5)


class Observability(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: Settings,
        functions: dict[str, lambda_.Function],
        dlq: sqs.IQueue,
        state_machine: sfn.StateMachine,
        rest_api: apigw.RestApi,
    ) -> None:
        super().__init__(scope, id)
        # Not KMS-encrypted: CloudWatch alarms cannot publish to a topic under the
        # AWS-managed aws/sns key, and alarm names/states are not user data.
        self.topic = sns.Topic(self, "Alarms", display_name="mdcrawl alarms", enforce_ssl=True)
        if settings.alarm_email:
            self.topic.add_subscription(subs.EmailSubscription(settings.alarm_email))
        self.alarms: dict[str, cw.Alarm] = {}
        self._alarm(
            "ProcessorDlqDepth",
            dlq.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
            "Processor events failed after retries (DLQ)",
        )
        self._alarm(
            "ExecutionsFailed",
            state_machine.metric_failed(period=PERIOD),
            "A job's state machine execution failed",
        )
        self._alarm(
            "ExecutionsTimedOut",
            state_machine.metric_timed_out(period=PERIOD),
            "A job's state machine execution timed out",
        )
        for name, fn in functions.items():
            self._alarm(
                f"{name.capitalize()}Errors",
                fn.metric_errors(period=PERIOD),
                f"The {name} function raised",
            )
            self._alarm(
                f"{name.capitalize()}Throttles",
                fn.metric_throttles(period=PERIOD),
                f"The {name} function was throttled",
            )
        self._alarm("Api5xx", rest_api.metric_server_error(period=PERIOD), "REST API 5xx")
        self.dashboard = self._dashboard(functions, dlq, state_machine, rest_api)

    def _alarm(self, name: str, metric: cw.Metric, description: str) -> None:
        alarm = metric.create_alarm(
            self,
            name,
            alarm_description=description,
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(cw_actions.SnsAction(self.topic))
        self.alarms[name] = alarm

    def _dashboard(self, functions, dlq, state_machine, rest_api) -> cw.Dashboard:  # type: ignore[no-untyped-def]
        board = cw.Dashboard(self, "Dashboard", default_interval=cdk.Duration.hours(3))
        fns = list(functions.values())
        board.add_widgets(
            cw.GraphWidget(
                title="Jobs (executions)",
                width=8,
                left=[
                    state_machine.metric_started(),
                    state_machine.metric_succeeded(),
                    state_machine.metric_failed(),
                    state_machine.metric_timed_out(),
                ],
            ),
            cw.GraphWidget(
                title="REST API",
                width=8,
                left=[
                    rest_api.metric_count(),
                    rest_api.metric_client_error(),
                    rest_api.metric_server_error(),
                ],
            ),
            cw.GraphWidget(
                title="Processor DLQ depth",
                width=8,
                left=[dlq.metric_approximate_number_of_messages_visible()],
            ),
        )
        board.add_widgets(
            cw.GraphWidget(
                title="Invocations", width=8, left=[f.metric_invocations() for f in fns]
            ),
            cw.GraphWidget(title="Errors", width=8, left=[f.metric_errors() for f in fns]),
            cw.GraphWidget(title="Throttles", width=8, left=[f.metric_throttles() for f in fns]),
        )
        board.add_widgets(
            cw.GraphWidget(
                title="Duration p95",
                width=24,
                left=[f.metric_duration(statistic="p95") for f in fns],
            ),
            cw.AlarmStatusWidget(title="Alarms", width=24, alarms=list(self.alarms.values())),
        )
        return board
