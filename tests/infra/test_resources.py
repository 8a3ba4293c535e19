"""Tables, buckets, functions, APIs and alarms as the issue asks for them."""

from __future__ import annotations

import json
from typing import Any

import yaml
from mdcrawl.adapters.aws.schema import SCHEMAS, TTL_ATTRIBUTE
from mdcrawl.names import TABLE_ENV, BlobPrefix, EnvVar, cap_env
from mdcrawl.options import OptionLimits, Profile
from mdcrawl.service.schema import request_schema

from infra.api import ROUTES as REST_ROUTES
from infra.config import Settings
from infra.pipeline import FUNCTIONS
from infra.websocket import ROUTES as WS_ROUTES
from tests.support.cfn import label, render
from tests.support.stream import WINDOW_S

from .conftest import ROOT, Synth

CONTEXT = json.loads((ROOT / "cdk.json").read_text())["context"]
CAPS = Settings.from_mapping(CONTEXT).caps  # cdk.json, else the options' hosted caps


def keys(schema: list[dict[str, str]]) -> list[str]:
    return [k["AttributeName"] for k in schema]


def test_tables_follow_the_library_schemas(synth: Synth) -> None:
    tables = {
        label(k): v["Properties"] for k, v in synth.of_type("AWS::DynamoDB::GlobalTable").items()
    }
    assert len(tables) == len(SCHEMAS)
    for name, spec in SCHEMAS.items():
        props = tables[f"Storage{name.value.capitalize()}"]
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert keys(props["KeySchema"]) == [k.name for k in (spec.pk, spec.sk) if k]
        indexes = {
            i["IndexName"]: keys(i["KeySchema"]) for i in props.get("GlobalSecondaryIndexes", [])
        }
        assert indexes == {i.name: [k.name for k in (i.pk, i.sk) if k] for i in spec.indexes}
        ttl = props.get("TimeToLiveSpecification")
        assert (ttl == {"AttributeName": TTL_ATTRIBUTE, "Enabled": True}) == spec.ttl, name
        (replica,) = props["Replicas"]
        pitr = replica.get("PointInTimeRecoverySpecification", {}).get(
            "PointInTimeRecoveryEnabled", False
        )
        assert pitr == spec.point_in_time_recovery, name
        assert "TableName" not in props  # physical names travel through env vars


def _bucket_policy_denies_insecure_transport(synth: Synth, bucket_label: str) -> bool:
    for policy in synth.of_type("AWS::S3::BucketPolicy").values():
        if render(policy["Properties"]["Bucket"]) != f"<{bucket_label}>":
            continue
        for st in policy["Properties"]["PolicyDocument"]["Statement"]:
            if (
                st["Effect"] == "Deny"
                and st.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") == "false"
            ):
                return True
    return False


def test_buckets_are_private_encrypted_tls_only(synth: Synth) -> None:
    buckets = {label(k): v["Properties"] for k, v in synth.of_type("AWS::S3::Bucket").items()}
    assert set(buckets) == {"StorageData", "StorageAccessLogs"}
    for name, props in buckets.items():
        assert all(props["PublicAccessBlockConfiguration"].values()), name
        (rule,) = props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
        assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
        assert _bucket_policy_denies_insecure_transport(synth, name), name
    data = buckets["StorageData"]
    assert "VersioningConfiguration" not in data
    assert render(data["LoggingConfiguration"]["DestinationBucketName"]) == "<StorageAccessLogs>"


def test_lifecycle_rules_expire_job_outputs_and_cache_per_context(synth: Synth) -> None:
    (data,) = [
        v["Properties"]
        for k, v in synth.of_type("AWS::S3::Bucket").items()
        if label(k) == "StorageData"
    ]
    rules = {r.get("Prefix"): r for r in data["LifecycleConfiguration"]["Rules"]}
    assert rules[BlobPrefix.JOBS.value]["ExpirationInDays"] == CONTEXT["retention_days"]
    for prefix in (BlobPrefix.CACHE_BODIES, BlobPrefix.CACHE_MARKDOWN):
        assert rules[prefix.value]["ExpirationInDays"] == CONTEXT["cache_retention_days"]
    assert rules[None]["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 1}


def functions(synth: Synth) -> dict[str, dict[str, Any]]:
    return {
        label(k).removeprefix("Pipeline").lower(): v["Properties"]
        for k, v in synth.of_type("AWS::Lambda::Function").items()
        if label(k).startswith("Pipeline")
    }


def test_functions_runtime_arch_logs_tracing_memory_timeout(synth: Synth) -> None:
    fns = functions(synth)
    assert set(fns) == set(FUNCTIONS)
    for name, props in fns.items():
        assert props["Runtime"] == "python3.13"
        assert props["Architectures"] == ["arm64"]
        assert props["Handler"] == "handler.lambda_handler"
        assert props["TracingConfig"] == {"Mode": "Active"}
        assert props["LoggingConfig"]["LogFormat"] == "JSON"
        assert props["MemorySize"] == FUNCTIONS[name].memory_mb
        assert props["Timeout"] == FUNCTIONS[name].timeout_s
        assert len(props["Layers"]) == 2
        env = props["Environment"]["Variables"]
        assert {e.value for e in TABLE_ENV.values()} <= set(env), name
        for option, cap in CAPS.items():  # every capped option of mdcrawl.options
            assert env[cap_env(option)] == str(cap), (name, option)
        assert env["POWERTOOLS_SERVICE_NAME"] == f"mdcrawl-{name}"
        assert {"POWERTOOLS_LOG_LEVEL", "POWERTOOLS_METRICS_NAMESPACE"} <= set(env)


def test_timeouts_nest_budget_over_orchestrator_over_crawler(synth: Synth) -> None:
    fns = functions(synth)
    # The orchestrator runs slices shorter than the job budget (the machine loops)...
    assert fns["orchestrator"]["Timeout"] < CAPS["budget_s"]
    # ...and a slice can always wait out one crawler invocation.
    assert fns["crawler"]["Timeout"] < fns["orchestrator"]["Timeout"]
    assert fns["api"]["Timeout"] <= 29 and fns["websocket"]["Timeout"] <= 29
    # Assembly has its own function, with Lambda's longest timeout, not a slice's.
    assert fns["finalizer"]["Timeout"] == 900 > fns["orchestrator"]["Timeout"]


def test_runtime_slice_margin_agrees_with_the_function_timeouts() -> None:
    """pipeline/steps.py stops an orchestrator slice early enough to wait out one crawler
    call; that only holds with the timeouts this stack sets."""
    from mdcrawl.pipeline import steps as aws

    assert FUNCTIONS["crawler"].timeout_s == aws.CRAWLER_TIMEOUT_S
    assert FUNCTIONS["orchestrator"].timeout_s > aws.SLICE_SAFETY_MARGIN_S


def test_function_specific_environment(synth: Synth) -> None:
    env = {name: props["Environment"]["Variables"] for name, props in functions(synth).items()}
    assert render(env["api"][EnvVar.STATE_MACHINE_ARN]) == "<PipelineJobsMachine>"
    assert render(env["orchestrator"][EnvVar.CRAWLER_FUNCTION]) == "<PipelineCrawler>"
    assert render(env["orchestrator"][EnvVar.PROCESSOR_FUNCTION]) == "<PipelineProcessor>"
    assert render(env["finalizer"][EnvVar.PROCESSOR_FUNCTION]) == "<PipelineProcessor>"
    assert render(env["websocket"][EnvVar.USAGE_PLAN_ID]) == "<RestApiUsagePlan>"
    for name in ("websocket", "fanout"):  # replay on subscribe; live events
        assert render(env[name][EnvVar.WEBSOCKET_ENDPOINT]).startswith("https://<WebSocketApi>.")
    for name in ("api", "orchestrator", "finalizer", "processor"):  # they only write events
        assert EnvVar.WEBSOCKET_ENDPOINT.value not in env[name], name


def test_processor_failures_go_to_the_dlq_after_retries(synth: Synth) -> None:
    (config,) = [v["Properties"] for v in synth.of_type("AWS::Lambda::EventInvokeConfig").values()]
    assert render(config["FunctionName"]) == "<PipelineProcessor>"
    assert config["MaximumRetryAttempts"] == 2
    assert (
        render(config["DestinationConfig"]["OnFailure"]["Destination"])
        == "<PipelineProcessorDlq.Arn>"
    )
    (queue,) = synth.of_type("AWS::SQS::Queue").values()
    assert queue["Properties"]["SqsManagedSseEnabled"] is True


def rest_paths(synth: Synth) -> dict[str, str]:
    resources = synth.of_type("AWS::ApiGateway::Resource")

    def path(ref: Any) -> str:
        if isinstance(ref, dict) and "Ref" in ref:
            props = resources[ref["Ref"]]["Properties"]
            return f"{path(props['ParentId'])}/{props['PathPart']}"
        return ""  # the root resource (GetAtt RootResourceId)

    return {k: path({"Ref": k}) for k in resources}


def test_every_rest_route_exists_and_requires_an_api_key(synth: Synth) -> None:
    paths = rest_paths(synth)
    routes = set()
    for method in synth.of_type("AWS::ApiGateway::Method").values():
        props = method["Properties"]
        route = (props["HttpMethod"], paths.get(props["ResourceId"].get("Ref"), "/"))
        if props["HttpMethod"] == "OPTIONS":  # CORS preflight: a mock, sent without keys
            assert props["Integration"]["Type"] == "MOCK"
            continue
        assert props["ApiKeyRequired"] is True, route
        assert "<PipelineApi.Arn>" in render(props["Integration"]["Uri"]), route
        assert "RequestValidatorId" in props, route
        routes.add(route)
    assert routes == set(REST_ROUTES)


def test_post_jobs_validates_its_body_against_the_model(synth: Synth) -> None:
    paths = rest_paths(synth)
    (post,) = [
        m["Properties"]
        for m in synth.of_type("AWS::ApiGateway::Method").values()
        if m["Properties"]["HttpMethod"] == "POST"
        and paths.get(m["Properties"]["ResourceId"].get("Ref")) == "/jobs"
    ]
    validator = synth.props(post["RequestValidatorId"]["Ref"])
    assert validator["ValidateRequestBody"] is True
    model = synth.props(post["RequestModels"]["application/json"]["Ref"])
    schema = model["Schema"]
    assert schema["required"] == ["url"] and schema["additionalProperties"] is False
    for option, cap in CAPS.items():
        assert schema["properties"][option]["maximum"] == cap
    # the rest is the schema docs/openapi.yaml holds, under this stack's caps
    limits = OptionLimits.of(Profile.HOSTED, **CAPS)
    assert set(schema["properties"]) == set(request_schema(limits)["properties"])


def test_post_jobs_model_matches_the_openapi_job_request(synth: Synth) -> None:
    """Same fields, same required, no looser bound than docs/openapi.yaml (the stack's
    context may be tighter): the gateway never refuses what the API promises, or lets
    through what it forbids."""
    spec = yaml.safe_load((ROOT / "docs" / "openapi.yaml").read_text())["components"]["schemas"]
    theirs = spec["JobRequest"]
    (model,) = synth.of_type("AWS::ApiGateway::Model").values()
    ours = model["Properties"]["Schema"]
    assert ours["required"] == theirs["required"]
    assert ours["additionalProperties"] == theirs["additionalProperties"]
    assert set(ours["properties"]) == set(theirs["properties"])
    for name, mine in ours["properties"].items():
        doc = theirs["properties"][name]
        doc = spec[doc["$ref"].rsplit("/", 1)[1]] if "$ref" in doc else doc
        for a, b in ((mine, doc), (mine.get("items", {}), doc.get("items", {}))):
            assert a.get("type") == b.get("type"), name
            assert a.get("pattern") == b.get("pattern"), name
            assert a.get("exclusiveMinimum", False) == b.get("exclusiveMinimum", False), name
            for upper in ("maximum", "maxLength", "maxItems"):
                if upper in b:
                    assert a[upper] <= b[upper], (name, upper)
            for lower in ("minimum", "minLength"):
                if lower in b:
                    assert a[lower] >= b[lower], (name, lower)


def test_usage_plan_throttles_and_holds_the_key(synth: Synth) -> None:
    (plan,) = synth.of_type("AWS::ApiGateway::UsagePlan").values()
    props = plan["Properties"]
    assert props["Throttle"]["RateLimit"] > 0 and props["Throttle"]["BurstLimit"] > 0
    assert render(props["ApiStages"][0]["ApiId"]) == "<RestApi>"
    (link,) = synth.of_type("AWS::ApiGateway::UsagePlanKey").values()
    assert render(link["Properties"]["KeyId"]) == "<RestApiDefaultKey>"


def test_rest_stage_has_access_logs_tracing_and_execution_logs(synth: Synth) -> None:
    (stage,) = [v["Properties"] for v in synth.of_type("AWS::ApiGateway::Stage").values()]
    assert render(stage["AccessLogSetting"]["DestinationArn"]) == "<RestAccessLogs.Arn>"
    assert stage["TracingEnabled"] is True
    assert stage["MethodSettings"][0]["LoggingLevel"] in ("ERROR", "INFO")


def test_websocket_routes_go_to_the_websocket_function_and_log(synth: Synth) -> None:
    routes = {
        r["Properties"]["RouteKey"] for r in synth.of_type("AWS::ApiGatewayV2::Route").values()
    }
    assert routes == set(WS_ROUTES)
    for integration in synth.of_type("AWS::ApiGatewayV2::Integration").values():
        assert "<PipelineWebsocket.Arn>" in render(integration["Properties"]["IntegrationUri"])
    (stage,) = [v["Properties"] for v in synth.of_type("AWS::ApiGatewayV2::Stage").values()]
    assert render(stage["AccessLogSettings"]["DestinationArn"]) == "<WebSocketAccessLogs.Arn>"


def alarms(synth: Synth) -> dict[str, dict[str, Any]]:
    return {
        label(k).removeprefix("Observability"): v["Properties"]
        for k, v in synth.of_type("AWS::CloudWatch::Alarm").items()
    }


def dims(props: dict[str, Any]) -> dict[str, str]:
    return {d["Name"]: render(d["Value"]) for d in props["Dimensions"]}


def test_alarms_watch_the_right_metrics_and_notify_the_topic(synth: Synth) -> None:
    found = alarms(synth)
    for props in found.values():
        assert [render(a) for a in props["AlarmActions"]] == ["<ObservabilityAlarms>"]
        assert props["Threshold"] == 1
    dlq = found["ProcessorDlqDepth"]
    assert (dlq["Namespace"], dlq["MetricName"]) == (
        "AWS/SQS",
        "ApproximateNumberOfMessagesVisible",
    )
    assert dims(dlq) == {"QueueName": "<PipelineProcessorDlq.QueueName>"}
    for name, metric in (
        ("ExecutionsFailed", "ExecutionsFailed"),
        ("ExecutionsTimedOut", "ExecutionsTimedOut"),
    ):
        assert (found[name]["Namespace"], found[name]["MetricName"]) == ("AWS/States", metric)
        assert dims(found[name]) == {"StateMachineArn": "<PipelineJobsMachine>"}
    for fn in FUNCTIONS:
        for metric in ("Errors", "Throttles"):
            props = found[f"{fn.capitalize()}{metric}"]
            assert (props["Namespace"], props["MetricName"]) == ("AWS/Lambda", metric)
            assert dims(props) == {"FunctionName": f"<Pipeline{fn.capitalize()}>"}
    assert synth.of_type("AWS::CloudWatch::Dashboard")


def test_rest_routes_are_the_openapi_operations() -> None:
    paths = yaml.safe_load((ROOT / "docs" / "openapi.yaml").read_text())["paths"]
    documented = {
        (method.upper(), path)
        for path, ops in paths.items()
        for method in ops
        if method in ("get", "post", "put", "patch", "delete")
    }
    assert documented == set(REST_ROUTES)


def test_live_events_flow_from_the_events_stream_to_the_fanout_function(synth: Synth) -> None:
    """One ordered path: the events table's stream, one batch per shard at a time, into
    the fan-out function; inserts only (a TTL removal is no event)."""
    tables = {label(k): v["Properties"] for k, v in synth.of_type("AWS::DynamoDB::GlobalTable").items()}
    streamed = {name for name, props in tables.items() if "StreamSpecification" in props}
    assert streamed == {"StorageEvents"}
    assert tables["StorageEvents"]["StreamSpecification"] == {"StreamViewType": "NEW_IMAGE"}
    (mapping,) = [m["Properties"] for m in synth.of_type("AWS::Lambda::EventSourceMapping").values()]
    assert render(mapping["FunctionName"]) == "<PipelineFanout>"
    assert render(mapping["EventSourceArn"]) == "<StorageEvents.StreamArn>"
    assert mapping["ParallelizationFactor"] == 1 and mapping["StartingPosition"] == "LATEST"
    assert mapping["BisectBatchOnFunctionError"] is False and mapping["MaximumRetryAttempts"] >= 1
    # Records gathered for a second: one invocation (and subscribers' Query) per second
    # of a busy job, not per poll; tests/support/stream.py's pump does the same.
    assert mapping["MaximumBatchingWindowInSeconds"] == WINDOW_S
    (pattern,) = [json.loads(f["Pattern"]) for f in mapping["FilterCriteria"]["Filters"]]
    assert pattern == {"eventName": ["INSERT"]}
