"""WebSocket API: $connect/$disconnect/$default and ``subscribe`` to the websocket
function; progress is pushed by the functions through the management API.

Keys at $connect: the websocket function itself reads ``?api_key=`` (browsers cannot
set headers on a WebSocket handshake) and accepts the connection only if the key is
one of the REST usage plan's keys and enabled: the same keys as the REST API, one
store (API Gateway's). We chose this over a Lambda REQUEST authorizer because it needs
no sixth function or second entry point, the handler already runs on $connect to record
the connection's owner (the key id), and rejecting there (403) closes the handshake
just the same. It may read only that plan's key list and key records (apigateway:GET).
"""

from __future__ import annotations

import json

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk.aws_apigatewayv2_integrations import WebSocketLambdaIntegration
from constructs import Construct
from mdcrawl.names import EnvVar

from .access import nag_token
from .config import Settings
from .nag import acknowledge

ROUTES = ("$connect", "$disconnect", "$default", "subscribe")
API_KEY_QUERY = "api_key"


class WebSocketApi(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: Settings,
        handler: lambda_.Function,
        usage_plan: apigw.UsagePlan,
        pushers: list[lambda_.Function],
    ) -> None:
        super().__init__(scope, id)
        integration = WebSocketLambdaIntegration("Handler", handler)
        self.api = apigwv2.WebSocketApi(
            self,
            "Api",
            description="mdcrawl job progress",
            route_selection_expression="$request.body.action",
        )
        for route in ROUTES:
            self.api.add_route(route, integration=integration)
        self.stage = apigwv2.WebSocketStage(
            self,
            "Stage",
            web_socket_api=self.api,
            stage_name=settings.stage,
            auto_deploy=True,
            throttle=apigwv2.ThrottleSettings(rate_limit=50, burst_limit=100),
        )
        self._access_logs()
        handler.add_environment(EnvVar.USAGE_PLAN_ID, usage_plan.usage_plan_id)
        self._key_check(handler, usage_plan)
        for fn in (handler, *pushers):  # subscribe replays the backlog; fan-out pushes live
            self._manage(fn)
            fn.add_environment(EnvVar.WEBSOCKET_ENDPOINT, self.stage.callback_url)
        acknowledge(
            self.api,
            "AwsSolutions-APIG4",
            "WebSocket APIs authorize only at $connect; the websocket function checks the "
            "caller's API key there against the REST usage plan and refuses the handshake "
            "otherwise. $disconnect, $default and subscribe run on an accepted connection.",
        )

    def _access_logs(self) -> None:
        group = logs.LogGroup(
            self,
            "AccessLogs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        stage: apigwv2.CfnStage = self.stage.node.default_child  # type: ignore[assignment]
        stage.access_log_settings = apigwv2.CfnStage.AccessLogSettingsProperty(
            destination_arn=group.log_group_arn,
            format=json.dumps(
                {
                    "requestId": "$context.requestId",
                    "ip": "$context.identity.sourceIp",
                    "requestTime": "$context.requestTime",
                    "routeKey": "$context.routeKey",
                    "eventType": "$context.eventType",
                    "status": "$context.status",
                    "connectionId": "$context.connectionId",
                    "error": "$context.error.message",
                }
            ),
        )
        stage.default_route_settings = apigwv2.CfnStage.RouteSettingsProperty(
            logging_level="ERROR",
            data_trace_enabled=False,
            detailed_metrics_enabled=True,
            throttling_rate_limit=50,
            throttling_burst_limit=100,
        )

    def _key_check(self, handler: lambda_.Function, usage_plan: apigw.UsagePlan) -> None:
        stack = cdk.Stack.of(self)
        base = f"arn:{stack.partition}:apigateway:{stack.region}::"
        plan_keys = f"{base}/usageplans/{usage_plan.usage_plan_id}/keys"
        key_records = f"{base}/apikeys/*"
        handler.add_to_role_policy(
            iam.PolicyStatement(actions=["apigateway:GET"], resources=[plan_keys, key_records])
        )
        acknowledge(
            handler.role,
            f"AwsSolutions-IAM5[Resource::{nag_token(self, key_records)}]",
            "Read-only GET of an API key record (to check it is enabled) after the key was "
            "found in the usage plan's key list; key ids are only known at connect time.",
        )

    def _manage(self, fn: lambda_.Function) -> None:
        stack = cdk.Stack.of(self)
        resource = stack.format_arn(
            service="execute-api",
            resource=self.api.api_id,
            resource_name=f"{self.stage.stage_name}/POST/@connections/*",
        )
        fn.add_to_role_policy(
            iam.PolicyStatement(actions=["execute-api:ManageConnections"], resources=[resource])
        )
        acknowledge(
            fn.role,
            f"AwsSolutions-IAM5[Resource::{nag_token(self, resource)}]",
            "Posting to connections of this API's stage only (POST /@connections/{id}); "
            "connection ids are created by clients at run time.",
        )

    @property
    def url(self) -> str:
        return self.stage.url
