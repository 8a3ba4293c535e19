"""Least privilege: each function's role lists exactly its own resources and actions."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from mdcrawl.names import (
    CONNECTIONS_JOB_INDEX,
    CRAWL_SPILL,
    JOBS_OWNER_INDEX,
    BlobPrefix,
    Table,
)

from tests.support.cfn import label, render

from .conftest import Synth

BUCKET = "<StorageData.Arn>"
JOBS, BODIES, MARKDOWN, LINKS = (
    f"{BUCKET}/{p.value}*"
    for p in (
        BlobPrefix.JOBS, BlobPrefix.CACHE_BODIES, BlobPrefix.CACHE_MARKDOWN, BlobPrefix.CACHE_LINKS
    )
)
SPILL = f"{BUCKET}/{BlobPrefix.JOBS.value}*/{CRAWL_SPILL}*"
WS = (
    "arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>"
    ":<WebSocketApi>/prod/POST/@connections/*"
)


def table(t: Table, index: str | None = None) -> str:
    arn = f"<Storage{t.value.capitalize()}.Arn>"
    return f"{arn}/index/{index}" if index else arn


def ddb(*actions: str) -> set[str]:
    return {f"dynamodb:{a}" for a in actions}


PUT = {"s3:PutObject", "s3:AbortMultipartUpload"}
BUS = "arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:event-bus/default"
# Only the fan-out function pushes live events: the writers of events do not.
CONNECTIONS_PUSH = {
    table(Table.CONNECTIONS): ddb("Query", "BatchWriteItem"),
    table(Table.CONNECTIONS, CONNECTIONS_JOB_INDEX): ddb("Query"),
    WS: {"execute-api:ManageConnections"},
}
EVENTS_STREAM = "<StorageEvents.StreamArn>"

EXPECTED: dict[str, dict[str, set[str]]] = {
    "Api": {
        table(Table.JOBS): ddb("BatchGetItem", "GetItem", "Query", "PutItem", "UpdateItem"),
        table(Table.JOBS, JOBS_OWNER_INDEX): ddb("Query"),
        table(Table.FRONTIER): ddb("Query", "PutItem"),
        table(Table.EVENTS): ddb("GetItem", "Query", "PutItem"),
        table(Table.PAGES): ddb("GetItem", "Query"),
        JOBS: {"s3:GetObject", *PUT},
        BUCKET: {"s3:ListBucket"},
        "<PipelineJobsMachine>": {"states:StartExecution"},
        BUS: {"events:PutEvents"},
    },
    "Websocket": {
        table(Table.CONNECTIONS): ddb("GetItem", "Query", "PutItem", "BatchWriteItem"),
        table(Table.EVENTS): ddb("Query"),
        table(Table.JOBS): ddb("GetItem"),
        WS: {"execute-api:ManageConnections"},
        "arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/<RestApiUsagePlan>/keys": {
            "apigateway:GET"
        },
        "arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys/*": {"apigateway:GET"},
    },
    "Orchestrator": {
        table(Table.JOBS): ddb("GetItem", "Query", "PutItem", "UpdateItem"),
        table(Table.FRONTIER): ddb("Query", "PutItem"),
        table(Table.EVENTS): ddb("Query", "PutItem"),
        table(Table.PAGES): ddb("GetItem", "Query", "PutItem"),
        JOBS: {"s3:GetObject"},  # a crawler answer spilled to S3
        BUCKET: {"s3:ListBucket"},
        "<WebhooksSigningSecret>": {"secretsmanager:GetSecretValue"},  # the notify step
        "<PipelineCrawler.Arn>": {"lambda:InvokeFunction"},
        "<PipelineProcessor.Arn>": {"lambda:InvokeFunction"},
        BUS: {"events:PutEvents"},
    },
    "Finalizer": {
        table(Table.JOBS): ddb("GetItem", "UpdateItem"),
        table(Table.FRONTIER): ddb("Query", "PutItem"),
        table(Table.EVENTS): ddb("Query", "PutItem"),
        table(Table.PAGES): ddb("Query", "PutItem"),
        table(Table.CACHE): ddb("GetItem", "BatchGetItem", "BatchWriteItem"),
        JOBS: {"s3:GetObject", *PUT},
        BODIES: {"s3:GetObject"},
        MARKDOWN: {"s3:GetObject", *PUT},
        LINKS: {"s3:GetObject"},
        BUCKET: {"s3:ListBucket"},
        "<PipelineProcessor.Arn>": {"lambda:InvokeFunction"},
        BUS: {"events:PutEvents"},
    },
    "Crawler": {
        table(Table.CACHE): ddb(
            "GetItem", "PutItem", "UpdateItem", "DeleteItem", "BatchGetItem", "BatchWriteItem"
        ),
        BODIES: {"s3:GetObject", *PUT},
        LINKS: {"s3:GetObject", *PUT},
        SPILL: PUT,
        # A cached page's conversion and the job's template (adapters/aws/cachedpages.py).
        MARKDOWN: {"s3:GetObject"},
        f"{BUCKET}/{BlobPrefix.JOBS.value}*/template.json*": {"s3:GetObject"},
        BUCKET: {"s3:ListBucket"},
    },
    "Processor": {
        table(Table.PAGES): ddb("GetItem", "BatchGetItem", "PutItem", "UpdateItem", "Query"),
        f"{BUCKET}/{BlobPrefix.JOBS.value}*/template.json*": {"s3:GetObject"},
        table(Table.JOBS): ddb("GetItem", "UpdateItem"),
        table(Table.EVENTS): ddb("Query", "PutItem"),
        table(Table.CACHE): ddb("GetItem", "BatchGetItem", "BatchWriteItem"),
        BODIES: {"s3:GetObject"},
        MARKDOWN: {"s3:GetObject", *PUT},
        JOBS: PUT,
        BUCKET: {"s3:ListBucket"},
        "<PipelineProcessorDlq.Arn>": {
            "sqs:SendMessage",
            "sqs:GetQueueAttributes",
            "sqs:GetQueueUrl",
        },
    },
}
EXPECTED["Fanout"] = {
    **CONNECTIONS_PUSH,
    # The event source mapping reads the stream with the function's role.
    EVENTS_STREAM: ddb("DescribeStream", "GetRecords", "GetShardIterator", "ListStreams"),
}
# Roles that read objects: each read is an existence check, so S3 must answer 404.
LISTS_BUCKET = {"Api": True, "Websocket": False, "Orchestrator": True, "Finalizer": True,
                "Crawler": True, "Processor": True, "Fanout": False}


def statements_of(synth: Synth, role_label: str) -> list[dict[str, Any]]:
    out = []
    for policy in synth.of_type("AWS::IAM::Policy").values():
        roles = {label(r["Ref"]) for r in policy["Properties"]["Roles"]}
        if role_label in roles:
            out.extend(policy["Properties"]["PolicyDocument"]["Statement"])
    return out


def grants(statements: list[dict[str, Any]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for st in statements:
        assert st["Effect"] == "Allow"
        actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
        resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
        for resource in resources:
            found[render(resource)].update(actions)
    return dict(found)


def test_each_function_role_grants_exactly_its_own_resources_and_actions(synth: Synth) -> None:
    for fn, expected in EXPECTED.items():
        found = grants(statements_of(synth, f"Pipeline{fn}Role"))
        # Every function: its own log group, and X-Ray (no resource-level permissions).
        assert found.pop(f"<Pipeline{fn}Logs.Arn>") == {"logs:CreateLogStream", "logs:PutLogEvents"}
        assert found.pop("*") == {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}, fn
        assert found == expected, fn


def test_readers_may_list_the_bucket_unconditionally(synth: Synth) -> None:
    """A ListBucket conditioned on ``s3:prefix`` never applies to a GetObject/HeadObject
    (the key is absent from its request context): S3 would answer a missing key 403."""
    for fn, lists in LISTS_BUCKET.items():
        found = [
            s for s in statements_of(synth, f"Pipeline{fn}Role") if s["Action"] == "s3:ListBucket"
        ]
        assert len(found) == int(lists), fn
        for st in found:
            assert "Condition" not in st, fn
            assert render(st["Resource"]) == BUCKET


def test_roles_use_no_managed_policies_and_no_admin_wildcards(synth: Synth) -> None:
    for logical_id, role in synth.of_type("AWS::IAM::Role").items():
        if label(logical_id).startswith("Pipeline") and "Machine" not in logical_id:
            assert "ManagedPolicyArns" not in role["Properties"], logical_id
    for policy in synth.of_type("AWS::IAM::Policy").values():
        for st in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            assert not any(a == "*" or a.endswith(":*") for a in actions), st


def test_state_machine_role_invokes_only_the_orchestrator_and_finalizer(synth: Synth) -> None:
    found = grants(statements_of(synth, "PipelineJobsMachineRole"))
    invokes = {r for r, actions in found.items() if "lambda:InvokeFunction" in actions}
    assert invokes == {
        f"<Pipeline{fn}.Arn>{suffix}" for fn in ("Orchestrator", "Finalizer") for suffix in ("", ":*")
    }
