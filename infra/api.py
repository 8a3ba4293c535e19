"""REST API: every route to the api function, an API key on every method, a usage plan
that throttles per key, request validation (JSON schema for POST /jobs), access logs."""

from __future__ import annotations

import re
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct
from mdcrawl.options import OptionLimits, Profile
from mdcrawl.service.schema import request_schema

from .config import Settings
from .nag import acknowledge

# (method, path) -> the api function; the paths and names of docs/openapi.yaml.
ROUTES = (
    ("POST", "/jobs"),
    ("GET", "/jobs"),  # the caller's jobs (service.rest lists them by owner)
    ("GET", "/jobs/{job_id}"),
    ("GET", "/jobs/{job_id}/result"),
    ("POST", "/jobs/{job_id}/cancel"),
    ("GET", "/jobs/{job_id}/events"),
)
# Per API key: steady requests per second, burst, and a daily quota of requests
# (POST /jobs is one of them; a job's own cost is capped by max_pages and the budget).
# Gateway-made errors in the service's Error shape: {"error": {"code", "message"}}.
BAD_BODY = '{"error": {"code": "invalid_input", "message": "$context.error.validationErrorString"}}'
GATEWAY_ERROR = (
    '{"error": {"code": "$context.error.responseType", "message": $context.error.messageString}}'
)
THROTTLE_RATE, THROTTLE_BURST, DAILY_QUOTA = 10, 20, 10_000


def job_request_schema(settings: Settings) -> apigw.JsonSchema:
    """POST /jobs body: the schema derived from the options model (docs/openapi.yaml's
    JobRequest), with the caps this stack's context sets (the functions enforce the same)."""
    limits = OptionLimits.of(Profile.HOSTED, **settings.caps)
    draft4 = {"schema": apigw.JsonSchemaVersion.DRAFT4, "title": "JobRequest"}
    return to_api_gateway({**draft4, **request_schema(limits)})


def to_api_gateway(node: dict[str, Any]) -> apigw.JsonSchema:
    """A JSON schema dict as CDK's ``JsonSchema`` (camelCase keys become snake_case)."""
    kwargs: dict[str, Any] = {}
    for key, value in node.items():
        name = re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()
        if key == "type":
            value = apigw.JsonSchemaType[value.upper()]
        elif key == "properties":
            value = {k: to_api_gateway(v) for k, v in value.items()}
        elif key == "items":
            value = to_api_gateway(value)
        kwargs[name] = value
    return apigw.JsonSchema(**kwargs)


class RestApi(Construct):
    def __init__(
        self, scope: Construct, id: str, *, settings: Settings, handler: lambda_.IFunction
    ) -> None:
        super().__init__(scope, id)
        access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        self.api = apigw.RestApi(
            self,
            "Api",
            description="mdcrawl jobs API",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            api_key_source_type=apigw.ApiKeySourceType.HEADER,
            # Execution logs need the account-level CloudWatch role (one per region).
            cloud_watch_role=True,
            cloud_watch_role_removal_policy=cdk.RemovalPolicy.RETAIN,
            deploy_options=apigw.StageOptions(
                stage_name=settings.stage,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=False,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,  # would log request bodies
                metrics_enabled=True,
                tracing_enabled=True,
                throttling_rate_limit=100,  # whole stage; per key below
                throttling_burst_limit=200,
            ),
            default_cors_preflight_options=apigw.CorsOptions(
                allow_origins=list(settings.cors_origins),
                allow_methods=["GET", "POST", "OPTIONS"],
                allow_headers=["Content-Type", "X-Api-Key"],
                max_age=cdk.Duration.hours(1),
            ),
            default_method_options=apigw.MethodOptions(api_key_required=True),
        )
        self._cors_on_errors(settings)
        self._routes(settings, handler)
        self.usage_plan = self.api.add_usage_plan(
            "UsagePlan",
            description="mdcrawl callers",
            throttle=apigw.ThrottleSettings(rate_limit=THROTTLE_RATE, burst_limit=THROTTLE_BURST),
            quota=apigw.QuotaSettings(limit=DAILY_QUOTA, period=apigw.Period.DAY),
            api_stages=[apigw.UsagePlanPerApiStage(api=self.api, stage=self.api.deployment_stage)],
        )
        # A first key (value generated by API Gateway; read it with
        # `aws apigateway get-api-key --api-key <id> --include-value`).
        self.api_key = self.api.add_api_key("DefaultKey", description="mdcrawl first key")
        self.usage_plan.add_api_key(self.api_key)
        self._acknowledge()

    def _routes(self, settings: Settings, handler: lambda_.IFunction) -> None:
        integration = apigw.LambdaIntegration(handler)
        body = apigw.RequestValidator(
            self,
            "BodyValidator",
            rest_api=self.api,
            validate_request_body=True,
            validate_request_parameters=True,
        )
        params = apigw.RequestValidator(
            self, "ParamsValidator", rest_api=self.api, validate_request_parameters=True
        )
        model = self.api.add_model(
            "CreateJobModel", content_type="application/json", schema=job_request_schema(settings)
        )
        for method, path in ROUTES:
            resource = self.api.root.resource_for_path(path)
            has_id = "{job_id}" in path
            resource.add_method(
                method,
                integration,
                api_key_required=True,
                request_validator=body if path == "/jobs" and method == "POST" else params,
                request_models={"application/json": model} if path == "/jobs" else None,
                request_parameters={"method.request.path.job_id": True} if has_id else None,
            )

    def _cors_on_errors(self, settings: Settings) -> None:
        # Gateway-generated errors (bad key, throttled, failed validation) carry CORS
        # headers too, and a validation failure says what was wrong.
        origin = "'*'" if "*" in settings.cors_origins else f"'{settings.cors_origins[0]}'"
        headers = {"Access-Control-Allow-Origin": origin}
        for kind in (apigw.ResponseType.DEFAULT_4_XX, apigw.ResponseType.DEFAULT_5_XX):
            self.api.add_gateway_response(
                f"Cors{kind.response_type}",
                type=kind,
                response_headers=headers,
                templates={"application/json": GATEWAY_ERROR},
            )
        self.api.add_gateway_response(
            "BadBody",
            type=apigw.ResponseType.BAD_REQUEST_BODY,
            response_headers=headers,
            templates={"application/json": BAD_BODY},
        )

    def _acknowledge(self) -> None:
        acknowledge(
            self.api,
            "AwsSolutions-APIG4",
            "Callers are identified by API keys (required on every method, usage plan "
            "throttling) and jobs are scoped to the key that created them; the only methods "
            "without a key are the CORS preflight OPTIONS mocks, which browsers send without "
            "credentials and which reach no backend.",
        )
        acknowledge(
            self.api,
            "AwsSolutions-COG4",
            "The service is deployed by a team into its own account and authenticates "
            "callers with API keys managed in API Gateway; there is no Cognito user pool "
            "in this design.",
        )
        acknowledge(
            self.api.deployment_stage,
            "AwsSolutions-APIG3",
            "No WAF web ACL by default: per-key throttling and quotas bound abuse, and a web "
            "ACL costs a fixed monthly fee; a team exposing the API publicly can attach one.",
        )
        acknowledge(
            self.api,
            "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]",
            "The account-level role API Gateway uses to write execution logs; this AWS "
            "managed policy is the documented way and covers only CloudWatch Logs.",
        )
