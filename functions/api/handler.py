"""REST API (API Gateway proxy integration): POST/GET /jobs..., answered by the service.

The caller is the API key API Gateway already checked (``requestContext.identity.apiKeyId``);
jobs belong to it. Everything else is ``mdcrawl.service.rest.handle_request``.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from mdcrawl.runtime.aws import AwsRuntime
from mdcrawl.service import ApiDeps, ApiRequest, ApiResponse, handle_request
from mdcrawl.service.http import ApiError

logger = Logger()
tracer = Tracer()
metrics = Metrics()
RUNTIME = AwsRuntime()  # builds nothing until the first request


def handle(event: dict[str, Any], deps: ApiDeps) -> dict[str, Any]:
    try:
        request = to_request(event)
    except ApiError as exc:
        return to_proxy(exc.response())
    return to_proxy(handle_request(request, deps))


def to_request(event: dict[str, Any]) -> ApiRequest:
    context = event.get("requestContext") or {}
    identity = context.get("identity") or {}
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        try:
            raw = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(400, "invalid_body", "the body is not valid base64") from None
    else:
        raw = body.encode("utf-8", "surrogatepass")
    stage = context.get("stage")
    return ApiRequest(
        method=str(event.get("httpMethod") or context.get("httpMethod") or "GET"),
        path=str(event.get("path") or "/"),
        query={k: str(v) for k, v in (event.get("queryStringParameters") or {}).items()},
        headers={k: str(v) for k, v in (event.get("headers") or {}).items()},
        body=raw,
        owner=str(identity.get("apiKeyId") or ""),
        base=f"/{stage}" if stage and stage != "$default" else "",
    )


def to_proxy(response: ApiResponse) -> dict[str, Any]:
    try:
        return {
            "statusCode": response.status,
            "headers": response.headers,
            "body": response.body.decode("utf-8"),
            "isBase64Encoded": False,
        }
    except UnicodeDecodeError:
        return {
            "statusCode": response.status,
            "headers": response.headers,
            "body": base64.b64encode(response.body).decode("ascii"),
            "isBase64Encoded": True,
        }


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    answer = handle(event, RUNTIME.api)
    metrics.add_metric(
        name=f"Status{answer['statusCode'] // 100}xx", unit=MetricUnit.Count, value=1
    )
    return answer
