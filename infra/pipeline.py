"""The code: two layers, five functions, their least-privilege roles and the job's
state machine (Orchestrate loop -> Finalize loop -> done; any failure -> MarkFailed)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct
from mdcrawl.names import (
    CONNECTIONS_JOB_INDEX,
    CRAWL_SPILL,
    JOBS_OWNER_INDEX,
    TABLE_ENV,
    BlobPrefix,
    EnvVar,
    Table,
    cap_env,
)
from mdcrawl.pipeline.templating import TEMPLATE_NAME

from .access import READ, WRITE, bucket_access, table_access
from .asl import FUNCTION_TAG
from .bundling import code_layer_code, dependency_layer_code
from .config import ConfigError, Settings
from .nag import acknowledge
from .statemachine import JobStateMachine
from .storage import Storage

ROOT = Path(__file__).resolve().parent.parent
# python3.13: the newest runtime whose dependency layer was verified by importing it
# with a real CPython of that version (research/aws-offline-testing.md); arm64: ~20%
# cheaper per GB-second and every dependency ships aarch64 manylinux wheels.
RUNTIME = lambda_.Runtime.PYTHON_3_13
ARCHITECTURE = lambda_.Architecture.ARM_64


@dataclass(frozen=True)
class FunctionSpec:
    memory_mb: int
    timeout_s: int


# Memory buys CPU linearly up to 1,769 MB (one vCPU); duration x memory is the bill.
FUNCTIONS: dict[str, FunctionSpec] = {
    # REST handler: DynamoDB calls, seeding (robots + sitemap fetch) on POST /jobs.
    # 29 s = API Gateway's REST integration timeout; longer would be cut anyway.
    "api": FunctionSpec(memory_mb=512, timeout_s=29),
    # $connect key check, subscribe (backlog replay). 29 s = the WebSocket integration
    # timeout; a 2,000-event backlog replay stays well inside it.
    "websocket": FunctionSpec(memory_mb=256, timeout_s=29),
    # One slice of a job: claims batches, waits on parallel crawler invokes. Its
    # timeout (120 s) is below the 5-minute job budget it enforces: the handler stops
    # claiming when its remaining time gets near a crawler timeout and answers
    # "continue"; the state machine calls it again, and the frontier in DynamoDB is the
    # checkpoint, so a slice that crashes loses at most one lease period of work.
    # I/O bound (threads waiting on invokes): 512 MB is enough.
    "orchestrator": FunctionSpec(memory_mb=512, timeout_s=120),
    # One URL: cache lookup, then a fetch with a 20 s deadline per request (robots.txt
    # is another request), S3 put. 60 s is above that deadline with room for robots and
    # storage, and below the orchestrator's slice so a slice can always wait for it.
    # Mostly waiting (the site, DynamoDB, S3), billed by duration x memory: 384 MB holds
    # a batch's bodies and the link parse of a page at the 10 MB cap (~180 MB at its
    # peak); a batch that runs out is retried URL by URL, each alone.
    "crawler": FunctionSpec(memory_mb=384, timeout_s=60),
    # Finalize (assembly of the outputs), its own task: reads every page's markdown
    # (prefetched concurrently), may convert pages again with the settled template
    # and streams docs.md and pages.zip to S3. Mostly waiting on DynamoDB and S3, billed
    # by duration x memory: 1,024 MB (0.58 vCPU) holds 10,000 pages' markdown compressed
    # (~50 MB) and assembles them (~10 ms of CPU a page on a full core) well inside 15
    # minutes, Lambda's maximum; each "wait" turn returns in well under a second.
    "finalizer": FunctionSpec(memory_mb=1024, timeout_s=900),
    # New events (the events table's stream) -> WebSocket subscribers: waits on
    # DynamoDB and API Gateway only. A batch of 100 events is a few pushes per subscriber.
    # ~80 MB resident (boto3 and the handler): 128 MB, Lambda's least.
    "fanout": FunctionSpec(memory_mb=128, timeout_s=60),
    # HTML -> markdown: single-threaded CPU (lxml, readability, markdownify). 1,769 MB is
    # one full vCPU: latency is best and cost is flat (shorter runs at higher price).
    # 60 s covers a 10 MB page, the fetch size cap.
    "processor": FunctionSpec(memory_mb=1769, timeout_s=60),
}
DEFAULT_EVENT_BUS = "default"
FAN_OUT_BATCH = 100  # stream records per fan-out invocation
FAN_OUT_RETRIES = 3
# Lambda gathers a shard's records this long before invoking the fan-out (unless a full
# batch is there first): about one invocation a second per busy job instead of one per
# poll, each billed its subscribers' Query; live events are up to this much later.
FAN_OUT_WINDOW_S = 1
SERVICE_ERRORS_RETRIES = 2  # async processor: Lambda retries twice, then the DLQ


class Pipeline(Construct):
    def __init__(self, scope: Construct, id: str, *, settings: Settings, storage: Storage) -> None:
        super().__init__(scope, id)
        self.settings = settings
        code = lambda_.LayerVersion(
            self,
            "CodeLayer",
            code=code_layer_code(ROOT / "layers" / "common"),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="mdcrawl library (layers/common/python/mdcrawl)",
        )
        deps = lambda_.LayerVersion(
            self,
            "DepsLayer",
            code=dependency_layer_code(ROOT / "layers" / "deps", RUNTIME, ARCHITECTURE),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="mdcrawl runtime dependencies (layers/deps/requirements.txt)",
        )
        self.layers = [deps, code]
        # Failed async processor events (after Lambda's own retries) land here with the
        # error and the original payload: no page event is silently dropped.
        self.dlq = sqs.Queue(
            self,
            "ProcessorDlq",
            retention_period=cdk.Duration.days(14),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
        )
        acknowledge(
            self.dlq,
            "AwsSolutions-SQS3",
            "This queue is itself the dead-letter destination of the processor's failed "
            "async events; nothing consumes it automatically, so it needs no DLQ of its own.",
        )
        unknown = sorted(set(settings.reserved_concurrency) - set(FUNCTIONS))
        if unknown:
            raise ConfigError(
                f"context 'reserved_concurrency' names unknown functions {unknown}; "
                f"functions are {sorted(FUNCTIONS)}"
            )
        self.functions = {
            name: self._function(name, spec, storage) for name, spec in FUNCTIONS.items()
        }
        self._grant(storage)
        self._fan_out_events(storage)
        self.state_machine = JobStateMachine(
            self,
            "Jobs",
            orchestrator=self.functions["orchestrator"],
            finalizer=self.functions["finalizer"],
            settings=settings,
        ).machine
        api = self.functions["api"]
        api.add_environment(EnvVar.STATE_MACHINE_ARN, self.state_machine.state_machine_arn)
        self.state_machine.grant_start_execution(api)

    def _function(self, name: str, spec: FunctionSpec, storage: Storage) -> lambda_.Function:
        log_group = logs.LogGroup(
            self,
            f"{name.capitalize()}Logs",
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        cfn_group: logs.CfnLogGroup = log_group.node.default_child  # type: ignore[assignment]
        cfn_group.retention_in_days = _retention(self.settings.log_retention_days)
        # Our own role: only this function's log group, not AWSLambdaBasicExecutionRole's
        # logs:* on every log group of the account.
        role = iam.Role(
            self,
            f"{name.capitalize()}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"mdcrawl {name} function",
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[log_group.log_group_arn],
            )
        )
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::*]",
            "Only xray:PutTraceSegments and xray:PutTelemetryRecords, added by active tracing; "
            "X-Ray does not support resource-level permissions for these actions.",
        )
        fn = lambda_.Function(
            self,
            name.capitalize(),
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler="handler.lambda_handler",
            code=lambda_.Code.from_asset(
                str(ROOT / "functions" / name), exclude=["**/__pycache__", "**/*.pyc"]
            ),
            layers=self.layers,
            role=role,
            memory_size=spec.memory_mb,
            timeout=cdk.Duration.seconds(spec.timeout_s),
            tracing=lambda_.Tracing.ACTIVE,
            log_group=log_group,
            logging_format=lambda_.LoggingFormat.JSON,
            application_log_level_v2=lambda_.ApplicationLogLevel(
                "WARN" if self.settings.log_level == "WARNING" else self.settings.log_level
            ),
            system_log_level_v2=lambda_.SystemLogLevel.WARN,
            environment=self._environment(name, storage),
            description=f"mdcrawl {name}",
            reserved_concurrent_executions=self.settings.reserved_concurrency.get(name),
            **self._async_options(name),
        )
        cdk.Tags.of(fn).add(FUNCTION_TAG, name)
        acknowledge(
            fn,
            "AwsSolutions-L1",
            "python3.13 is the newest runtime whose dependency layer (lxml and pydantic-core "
            "aarch64 wheels) we verified by importing it with a real CPython 3.13; moving to "
            "python3.14 is the one RUNTIME constant above, once verified the same way.",
        )
        return fn

    def _environment(self, name: str, storage: Storage) -> dict[str, str]:
        # Every function gets every table name and the limits (names are not secrets and
        # one settings model can read them); IAM, not the env, decides what it may touch.
        s = self.settings
        return {
            **{env.value: storage.tables[table].table_name for table, env in TABLE_ENV.items()},
            EnvVar.BUCKET.value: storage.bucket.bucket_name,
            **{cap_env(option): str(cap) for option, cap in s.caps.items()},
            EnvVar.RETENTION_DAYS.value: str(s.retention_days),
            EnvVar.CACHE_RETENTION_DAYS.value: str(s.cache_retention_days),
            "POWERTOOLS_SERVICE_NAME": f"mdcrawl-{name}",
            "POWERTOOLS_METRICS_NAMESPACE": "mdcrawl",
            "POWERTOOLS_LOG_LEVEL": s.log_level,
            # Responses carry page lists and S3 keys: keep them out of trace metadata.
            "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",
        }

    def _async_options(self, name: str) -> dict[str, object]:
        if name != "processor":
            return {}
        return {
            "retry_attempts": SERVICE_ERRORS_RETRIES,
            "max_event_age": cdk.Duration.hours(1),
            # An on-failure destination rather than a Lambda DLQ: its record carries the
            # error and the request context besides the payload. Using both would put
            # every failure on the queue twice.
            "on_failure": destinations.SqsDestination(self.dlq),
        }

    def _grant(self, storage: Storage) -> None:
        t, b, f = storage.tables, storage.bucket, self.functions
        jobs_prefix = BlobPrefix.JOBS.value
        role = {name: fn.role for name, fn in f.items()}
        # api: create/list/read/cancel jobs; seed the frontier (read its log, put the
        # first entry); the job.cancelled event; pages and events read; job outputs: presigned
        # GETs (a presigned URL carries the signer's permissions) and pages.zip, built
        # on the first request and written next to the other outputs.
        table_access(
            role["api"],
            t[Table.JOBS],
            (*READ, *WRITE, "BatchGetItem"),  # listing: the owner index holds keys only
            indexes=[JOBS_OWNER_INDEX],
        )
        table_access(role["api"], t[Table.FRONTIER], ("Query", "PutItem"))
        table_access(role["api"], t[Table.EVENTS], (*READ, "PutItem"))
        table_access(role["api"], t[Table.PAGES], READ)
        bucket_access(
            role["api"],
            b,
            read=[jobs_prefix],
            write=[jobs_prefix],
            why="The api presigns GET URLs for a job's outputs and writes its pages.zip.",
        )
        # websocket: connections and subscriptions, backlog of events, job ownership.
        table_access(role["websocket"], t[Table.CONNECTIONS], (*READ, "PutItem", "BatchWriteItem"))
        table_access(role["websocket"], t[Table.EVENTS], ("Query",))
        table_access(role["websocket"], t[Table.JOBS], ("GetItem",))
        # orchestrator: the job, its queue, its events, failure records of URLs, fan-out.
        table_access(role["orchestrator"], t[Table.JOBS], (*READ, *WRITE))
        # The frontier is a log (adapters/aws/frontier.py): read after the last entry
        # known, conditional puts; nothing is updated in place.
        table_access(role["orchestrator"], t[Table.FRONTIER], ("Query", "PutItem"))
        table_access(role["orchestrator"], t[Table.EVENTS], ("Query", "PutItem"))
        table_access(role["orchestrator"], t[Table.PAGES], (*READ, "PutItem"))
        self._grant_finalizer(storage)
        bucket_access(
            role["orchestrator"],
            b,
            read=[jobs_prefix],
            why="The orchestrator reads a crawler answer spilled to S3 (over 6 MB).",
        )
        role["orchestrator"].add_to_principal_policy(
            iam.PolicyStatement(
                actions=["lambda:InvokeFunction"],
                resources=[f["crawler"].function_arn, f["processor"].function_arn],
            )
        )
        f["orchestrator"].add_environment(EnvVar.CRAWLER_FUNCTION, f["crawler"].function_name)
        f["orchestrator"].add_environment(EnvVar.PROCESSOR_FUNCTION, f["processor"].function_name)
        # api (cancel), orchestrator (fail) and finalizer (complete, cancel) end jobs:
        # they announce it on the account's default EventBridge bus.
        bus = cdk.Stack.of(self).format_arn(
            service="events", resource="event-bus", resource_name=DEFAULT_EVENT_BUS
        )
        for name in ("api", "orchestrator", "finalizer"):
            role[name].add_to_principal_policy(
                iam.PolicyStatement(actions=["events:PutEvents"], resources=[bus])
            )
            f[name].add_environment(EnvVar.EVENT_BUS, DEFAULT_EVENT_BUS)
        # crawler: the shared URL cache (index in DynamoDB, bodies in S3).
        # DeleteItem: a per-host request slot given back (adapters/aws/hostlease.py).
        # BatchWriteItem: where each body sits in its batch's pack (adapters/aws/packs.py);
        # BatchGetItem: a batch's cache entries and their bodies' locators, together.
        table_access(
            role["crawler"],
            t[Table.CACHE],
            ("GetItem", *WRITE, "DeleteItem", "BatchGetItem", "BatchWriteItem"),
        )
        cache_prefixes = [BlobPrefix.CACHE_BODIES.value, BlobPrefix.CACHE_LINKS.value]
        bucket_access(
            role["crawler"],
            b,
            # A cached page's conversion and its job's template: the crawler builds the
            # record of a page converted before (adapters/aws/cachedpages.py).
            read=[
                *cache_prefixes,
                BlobPrefix.CACHE_MARKDOWN.value,
                f"{jobs_prefix}*/{TEMPLATE_NAME}",
            ],
            write=[*cache_prefixes, f"{jobs_prefix}*/{CRAWL_SPILL}"],
            why="The crawler stores fetched bodies and long link lists content-addressed, "
            "and an answer over Lambda's 6 MB response limit under its job; it reads a "
            "cached page's conversion and the job's template.",
        )
        # processor: page records, job counters, events; bodies in, markdown out.
        # Query on pages and the job's template.json: the processor settles the job's
        # site template from the first pages' records (pipeline/templating.py).
        # BatchGetItem: a batch's existing records in one read (pipeline/process_batch.py).
        table_access(
            role["processor"],
            t[Table.PAGES],
            ("GetItem", "BatchGetItem", "PutItem", "UpdateItem", "Query"),
        )
        table_access(role["processor"], t[Table.JOBS], ("GetItem", "UpdateItem"))
        table_access(role["processor"], t[Table.EVENTS], ("Query", "PutItem"))
        # The packs' locators (adapters/aws/packs.py): where a body or a converted page
        # sits in its pack, read, and written for the invocation's own pack.
        table_access(
            role["processor"], t[Table.CACHE], ("GetItem", "BatchGetItem", "BatchWriteItem")
        )
        bucket_access(
            role["processor"],
            b,
            read=[
                BlobPrefix.CACHE_BODIES.value,
                BlobPrefix.CACHE_MARKDOWN.value,
                f"{jobs_prefix}*/{TEMPLATE_NAME}",
            ],
            write=[BlobPrefix.CACHE_MARKDOWN.value, jobs_prefix],
            why="The processor reads a cached body or markdown and the job's template, and "
            "writes the page's markdown.",
        )


    def _fan_out_events(self, storage: Storage) -> None:
        """The one path of live events: the events table's stream -> the fan-out
        function, one batch per shard at a time (a job's events are one partition, so
        they reach it in seq order) -> the job's subscribers. The functions that append
        events only write them."""
        fn = self.functions["fanout"]
        fn.add_event_source(
            sources.DynamoEventSource(
                storage.tables[Table.EVENTS],
                starting_position=lambda_.StartingPosition.LATEST,
                batch_size=FAN_OUT_BATCH,
                max_batching_window=cdk.Duration.seconds(FAN_OUT_WINDOW_S),
                # One batch of a shard at a time, retried before any later record: order.
                parallelization_factor=1,
                bisect_batch_on_error=False,
                retry_attempts=FAN_OUT_RETRIES,
                # A subscriber that misses events sees a gap and re-subscribes; stale
                # progress is not worth delivering late.
                max_record_age=cdk.Duration.hours(1),
                # Inserts only: the TTL's removals are no events.
                filters=[
                    lambda_.FilterCriteria.filter(
                        {"eventName": lambda_.FilterRule.is_equal("INSERT")}
                    )
                ],
            )
        )
        # Read a job's subscribers, forget connections that went away (a connection's
        # items are found by Query and deleted by BatchWriteItem).
        table_access(
            fn.role,  # type: ignore[arg-type]
            storage.tables[Table.CONNECTIONS],
            ("Query", "BatchWriteItem"),
            indexes=[CONNECTIONS_JOB_INDEX],
        )

    def _grant_finalizer(self, storage: Storage) -> None:
        """finalizer: the job (complete it, heartbeat), its queue (owed records, rehand
        counts), pages and events; recovery of fetched-but-unrecorded pages reads the
        cache entry that names a page's body and hands the page to the processor."""
        t, b, f = storage.tables, storage.bucket, self.functions
        role = f["finalizer"].role
        assert role is not None
        table_access(role, t[Table.JOBS], ("GetItem", "UpdateItem"))
        table_access(role, t[Table.FRONTIER], ("Query", "PutItem"))
        table_access(role, t[Table.EVENTS], ("Query", "PutItem"))
        table_access(role, t[Table.PAGES], ("Query", "PutItem"))
        # BatchWriteItem: a page converted again goes to the markdown cache (packs.py);
        # BatchGetItem: where every page's markdown sits, located together (prefetch.py).
        table_access(role, t[Table.CACHE], ("GetItem", "BatchGetItem", "BatchWriteItem"))
        bucket_access(
            role,
            b,
            read=[
                BlobPrefix.JOBS.value,
                BlobPrefix.CACHE_LINKS.value,
                BlobPrefix.CACHE_BODIES.value,
                BlobPrefix.CACHE_MARKDOWN.value,
            ],
            write=[BlobPrefix.JOBS.value, BlobPrefix.CACHE_MARKDOWN.value],
            why="Finalize reads the pages' markdown (and converts a page again with the "
            "settled template from its cached body, through the markdown cache) and writes "
            "docs.md, pages.zip, llms.txt and the manifest; recovery reads cache entries' "
            "link lists.",
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["lambda:InvokeFunction"], resources=[f["processor"].function_arn]
            )
        )
        f["finalizer"].add_environment(EnvVar.PROCESSOR_FUNCTION, f["processor"].function_name)


def _retention(days: int) -> int:
    """The nearest CloudWatch Logs retention at or above ``days`` (it takes fixed values)."""
    return next(d for d in _RETENTIONS if d >= days)


_RETENTIONS = (
    1,
    3,
    5,
    7,
    14,
    30,
    60,
    90,
    120,
    150,
    180,
    365,
    400,
    545,
    731,
    1096,
    1827,
    2192,
    2557,
    2922,
    3288,
    3653,
)
