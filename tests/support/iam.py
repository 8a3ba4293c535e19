"""IAM sufficiency, offline: every AWS call a function makes during a run, checked
against that function's role as CDK synthesized it.

moto evaluates no IAM, so a role that lacks a permission passes every offline test and
fails on AWS. ``CallRecorder`` hooks botocore's ``provide-client-params`` event (fired
for real calls and for pre-signed URLs alike) and notes, for the function whose handler
is running (a context variable the offline stack sets), the IAM action, the resource ARN
and whether the call may touch a missing key. ``check_calls`` then evaluates each call
against the role's statements the way IAM does for what this stack uses (action and
resource wildcards, ``StringLike``/``StringEquals`` conditions whose key must be in the
request's context), plus S3's rule: a GetObject/HeadObject on a missing key is answered
404 only if the caller may ``s3:ListBucket`` the bucket *in that request's context*
(where ``s3:prefix`` does not exist), 403 otherwise.

ARNs are written with the template's tokens as labels (``<StorageJobs.Arn>``), the way
tests/infra renders them, so the offline names map onto the synthesized resources.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import fnmatch
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mdcrawl.names import Table

from tests.support.cfn import label, render

CURRENT_FUNCTION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "mdcrawl_current_function", default=None
)
ROLE_LABELS = {
    "api": "PipelineApiRole",
    "websocket": "PipelineWebsocketRole",
    "orchestrator": "PipelineOrchestratorRole",
    "finalizer": "PipelineFinalizerRole",
    "fanout": "PipelineFanoutRole",
    "crawler": "PipelineCrawlerRole",
    "processor": "PipelineProcessorRole",
}
BUCKET_ARN = "<StorageData.Arn>"
# botocore operation -> IAM action, where the names differ.
S3_ACTIONS = {
    "HeadObject": "GetObject",
    "GetObject": "GetObject",
    "PutObject": "PutObject",
    "CreateMultipartUpload": "PutObject",
    "UploadPart": "PutObject",
    "CompleteMultipartUpload": "PutObject",
    "AbortMultipartUpload": "AbortMultipartUpload",
    "ListObjectsV2": "ListBucket",
    "DeleteObject": "DeleteObject",
    "CopyObject": "PutObject",  # and GetObject on the source (same key: a refresh)
}
# The one secret the functions read (infra/webhook.py), by its template label.
SECRET_LABEL = "<WebhooksSigningSecret>"
TRANSACT_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}
WS_METHODS = {"PostToConnection": "POST", "DeleteConnection": "DELETE", "GetConnection": "GET"}


@dataclass(frozen=True)
class Call:
    """One permission a call needs: who, which action on which resource, in which
    request context, and whether it may touch a missing key (S3 reads)."""

    function: str
    action: str
    resource: str
    context: tuple[tuple[str, str], ...] = ()
    may_miss: bool = False
    operation: str = ""


@dataclass
class Names:
    """Offline resource names -> the template's labels."""

    tables: dict[str, Table]
    bucket: str
    functions: tuple[str, ...] = (
        "api", "websocket", "orchestrator", "finalizer", "crawler", "processor", "fanout"
    )

    def table_arn(self, name: str) -> str:
        table = self.tables[name]
        return f"<Storage{table.value.capitalize()}.Arn>"


@dataclass
class CallRecorder:
    names: Names
    calls: set[Call] = field(default_factory=set)
    unknown: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def install(self, events: Any) -> CallRecorder:
        events.register("provide-client-params", self._record)
        return self

    def _record(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        function = CURRENT_FUNCTION.get()
        if function is None:  # the test itself, or moto's own clients
            return
        service = model.service_model.service_name
        try:
            needed = list(needs(service, model.name, params, self.names))
        except KeyError as exc:
            needed, problem = [], f"{function}: {service}.{model.name}: unmapped {exc}"
            with self._lock:
                self.unknown.append(problem)
        with self._lock:
            for action, resource, ctx, may_miss in needed:
                self.calls.add(
                    Call(function, action, resource, ctx, may_miss, f"{service}.{model.name}")
                )


@contextlib.contextmanager
def running_as(function: str) -> Iterator[None]:
    token = CURRENT_FUNCTION.set(function)
    try:
        yield
    finally:
        CURRENT_FUNCTION.reset(token)


Need = tuple[str, str, tuple[tuple[str, str], ...], bool]


def needs(service: str, operation: str, params: dict[str, Any], names: Names) -> Iterator[Need]:
    """The (action, resource, context, may_miss) permissions one call needs."""
    if service == "dynamodb":
        yield from _dynamodb(operation, params, names)
    elif service == "s3":
        action = S3_ACTIONS[operation]
        if action == "ListBucket":
            yield "s3:ListBucket", BUCKET_ARN, (("s3:prefix", params.get("Prefix", "")),), False
            return
        _bucket(params, names)
        resource = f"{BUCKET_ARN}/{params['Key']}"
        # Every object read here is an existence check (blobs.get/exists answer None).
        yield f"s3:{action}", resource, (), operation in ("HeadObject", "GetObject")
        if operation == "CopyObject":
            yield "s3:GetObject", resource, (), False
    elif service == "secretsmanager" and operation == "GetSecretValue":
        yield "secretsmanager:GetSecretValue", SECRET_LABEL, (), False
    elif service == "lambda":
        name = params["FunctionName"].split(":")[-1]
        if name not in names.functions:
            raise KeyError(name)
        yield "lambda:InvokeFunction", f"<Pipeline{name.capitalize()}.Arn>", (), False
    elif service == "stepfunctions":
        yield f"states:{operation}", "<PipelineJobsMachine>", (), False
    elif service == "apigatewaymanagementapi":
        method = WS_METHODS[operation]
        resource = (
            "arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<WebSocketApi>"
            f"/prod/{method}/@connections/{params['ConnectionId']}"
        )
        yield "execute-api:ManageConnections", resource, (), False
    elif service == "apigateway":
        yield from _apigateway(operation, params)
    elif service == "events" and operation == "PutEvents":
        for entry in params["Entries"]:
            bus = entry.get("EventBusName", "default")
            yield (
                "events:PutEvents",
                (f"arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:event-bus/{bus}"),
                (),
                False,
            )
    else:
        raise KeyError(service)


def _dynamodb(operation: str, params: dict[str, Any], names: Names) -> Iterator[Need]:
    if operation in ("BatchGetItem", "BatchWriteItem"):
        for table in params["RequestItems"]:
            yield f"dynamodb:{operation}", names.table_arn(table), (), False
        return
    if operation == "TransactWriteItems":
        for item in params["TransactItems"]:
            ((kind, body),) = item.items()
            yield (
                f"dynamodb:{TRANSACT_ACTIONS[kind]}",
                names.table_arn(body["TableName"]),
                (),
                False,
            )
        return
    arn = names.table_arn(params["TableName"])
    if params.get("IndexName"):
        arn = f"{arn}/index/{params['IndexName']}"
    yield f"dynamodb:{operation}", arn, (), False


def _bucket(params: dict[str, Any], names: Names) -> None:
    if params["Bucket"] != names.bucket:
        raise KeyError(params["Bucket"])


def _apigateway(operation: str, params: dict[str, Any]) -> Iterator[Need]:
    base = "arn:<AWS::Partition>:apigateway:<AWS::Region>::"
    if operation == "GetUsagePlanKeys":
        yield "apigateway:GET", f"{base}/usageplans/<RestApiUsagePlan>/keys", (), False
    elif operation == "GetApiKey":
        yield "apigateway:GET", f"{base}/apikeys/{params['apiKey']}", (), False
    else:
        raise KeyError(operation)


# --- the synthesized roles ------------------------------------------------------------
def role_statements(template: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Role label -> its policies' statements, resources rendered as labels."""
    out: dict[str, list[dict[str, Any]]] = {}
    for res in template["Resources"].values():
        if res["Type"] != "AWS::IAM::Policy":
            continue
        for role in res["Properties"]["Roles"]:
            for st in res["Properties"]["PolicyDocument"]["Statement"]:
                out.setdefault(label(role["Ref"]), []).append(_rendered(st))
    return out


def _rendered(statement: dict[str, Any]) -> dict[str, Any]:
    resources = statement["Resource"]
    resources = resources if isinstance(resources, list) else [resources]
    actions = statement["Action"]
    return {
        "Effect": statement["Effect"],
        "Action": actions if isinstance(actions, list) else [actions],
        "Resource": [render(r) for r in resources],
        "Condition": copy.deepcopy(statement.get("Condition", {})),
    }


def with_prefix_condition(
    roles: dict[str, list[dict[str, Any]]], prefixes: tuple[str, ...] = ("cache/", "jobs/")
) -> dict[str, list[dict[str, Any]]]:
    """The roles as they were before issue 10: List only ``StringLike s3:prefix``."""
    changed = copy.deepcopy(roles)
    for statements in changed.values():
        for st in statements:
            if st["Action"] == ["s3:ListBucket"]:
                st["Condition"] = {"StringLike": {"s3:prefix": [f"{p}*" for p in prefixes]}}
    return changed


# --- evaluation -------------------------------------------------------------------------
def allowed(
    statements: list[dict[str, Any]], action: str, resource: str, context: dict[str, str]
) -> bool:
    return any(
        st["Effect"] == "Allow"
        and any(fnmatch.fnmatchcase(action, a) for a in st["Action"])
        and any(fnmatch.fnmatchcase(resource, r) for r in st["Resource"])
        and _conditions_hold(st["Condition"], context)
        for st in statements
    )


def _conditions_hold(conditions: dict[str, Any], context: dict[str, str]) -> bool:
    for operator, tests in conditions.items():
        for key, wanted in tests.items():
            values = wanted if isinstance(wanted, list) else [wanted]
            if key not in context:  # IAM: a key absent from the request fails the test
                return False
            if operator == "StringLike":
                ok = any(fnmatch.fnmatchcase(context[key], v) for v in values)
            elif operator == "StringEquals":
                ok = context[key] in values
            else:
                raise ValueError(f"condition operator {operator} is not modelled")
            if not ok:
                return False
    return True


def check_calls(calls: set[Call], roles: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Every call a role does not allow, as readable lines (empty: sufficient)."""
    problems = []
    for call in sorted(calls, key=lambda c: (c.function, c.action, c.resource)):
        statements = roles.get(ROLE_LABELS[call.function], [])
        context = dict(call.context)
        if not allowed(statements, call.action, call.resource, context):
            problems.append(f"{call.function}: {call.action} on {call.resource} ({call.operation})")
        elif call.may_miss and not allowed(statements, "s3:ListBucket", BUCKET_ARN, context):
            problems.append(
                f"{call.function}: {call.operation} of {call.resource} may miss: S3 answers "
                "403, not 404, without s3:ListBucket on the bucket"
            )
    return problems
