"""WebSocket API: $connect (API key check, owner), $disconnect, subscribe/ping/$default.

A browser cannot set headers on the handshake, so $connect reads ``?api_key=`` and
accepts it only if it is an enabled key of the REST usage plan (an authorizer's
``principalId``, when one is configured, is taken as already checked).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from mdcrawl.runtime.aws import AwsRuntime, WebSocketPorts
from mdcrawl.service import ws

logger = Logger()
tracer = Tracer()
metrics = Metrics()
RUNTIME = AwsRuntime()  # builds nothing until the first message
API_KEY_QUERY = "api_key"
ROUTE_METRICS = {"$connect": "Connects", "$disconnect": "Disconnects"}


def handle(
    event: dict[str, Any], ports: WebSocketPorts, time_left: Callable[[], float] | None = None
) -> dict[str, Any]:
    context = event.get("requestContext") or {}
    route, connection_id = context.get("routeKey"), str(context.get("connectionId") or "")
    if route == "$connect":
        owner = _owner(event, ports)
        accepted = bool(owner) and ws.on_connect(connection_id, owner or "", ports.ws)
        return {"statusCode": 200 if accepted else 403}
    if route == "$disconnect":
        ws.on_disconnect(connection_id, ports.ws)
        return {"statusCode": 200}
    ws.on_message(connection_id, str(event.get("body") or ""), ports.ws, time_left)
    return {"statusCode": 200}


def _owner(event: dict[str, Any], ports: WebSocketPorts) -> str | None:
    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    if authorizer.get("principalId"):
        return str(authorizer["principalId"])
    query = event.get("queryStringParameters") or {}
    return ports.keys.owner_of(query.get(API_KEY_QUERY))


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    route = str((event.get("requestContext") or {}).get("routeKey") or "unknown")
    metrics.add_metric(name=ROUTE_METRICS.get(route, "Messages"), unit=MetricUnit.Count, value=1)
    # A long replay stops before the function's timeout and tells the client where to
    # resume (ws.RESUME).
    return handle(event, RUNTIME.websocket, lambda: context.get_remaining_time_in_millis() / 1e3)
