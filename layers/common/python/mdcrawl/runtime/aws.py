"""The Lambda functions' composition root: settings from the environment, adapters over
boto3, and the ports each function's ``handle`` receives.

Environment variables are read here and nowhere else (names from ``names.EnvVar``),
once, into ``AwsSettings``. ``AwsRuntime`` builds clients and adapters lazily, on first
use, and keeps them for the container's life (a warm invocation reuses them); building
one does no I/O, so a handler module may create it at import time.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import boto3

from ..adapters.aws.stores import AwsStores, aws_stores
from ..names import Table
from .settings import AwsSettings

if TYPE_CHECKING:
    from ..adapters.aws.apikeys import ApiKeyChecker
    from ..adapters.aws.crawling import CrawlerPorts
    from ..netguard import AddressGuard
    from ..pipeline.finalize_task import FinalizerPorts
    from ..pipeline.notify import NotifyDeps
    from ..pipeline.process import ProcessDeps
    from ..pipeline.steps import OrchestratorPorts
    from ..ports import EventLog
    from ..service.deps import ApiDeps, WsDeps


@dataclass(frozen=True)
class WebSocketPorts:
    ws: WsDeps
    keys: ApiKeyChecker


class AwsRuntime:
    """Lazily built ports for every function; one per container.

    Each function's property imports that function's adapters and steps when it is
    first used, not at module import: a Lambda container runs one function, and its
    cold start then loads only what that function needs (``python -m bench.coldstart``),
    not the converter, httpx and the assembly for every handler."""

    def __init__(
        self,
        environ: Mapping[str, str] | None = None,
        session: Any | None = None,
    ) -> None:
        self._environ = environ
        self._session = session

    @cached_property
    def settings(self) -> AwsSettings:
        return AwsSettings.from_env(os.environ if self._environ is None else self._environ)

    @cached_property
    def session(self) -> Any:
        return self._session if self._session is not None else boto3.Session()

    @cached_property
    def stores(self) -> AwsStores:
        s = self.settings
        return aws_stores(
            self.session,
            s.tables,
            s.bucket,
            retention_s=s.retention_days * 86400,
            cache_keep_s=s.cache_retention_days * 86400,
        )

    @cached_property
    def packed_blobs(self) -> Any:
        """The bucket, with the content cache's bodies and converted pages written in
        packs, one object per block (``adapters/aws/packs.py``)."""
        from ..adapters.aws.packs import PackedBlobs
        from ..adapters.aws.stores import refresh_after

        keep_s = self.settings.cache_retention_days * 86400.0
        return PackedBlobs(
            self.stores.blobs,
            self.session.client("dynamodb"),
            self.settings.tables[Table.CACHE],
            keep_s=keep_s,
            refresh_s=refresh_after(keep_s),
        )

    @cached_property
    def guard(self) -> AddressGuard:
        from ..netguard import AddressGuard

        return AddressGuard(self.settings.allow_networks)

    @cached_property
    def ws(self) -> WsDeps:
        from ..adapters.aws.pusher import ApiGatewayPusher
        from ..service.deps import WsDeps

        st = self.stores
        client = self.session.client(
            "apigatewaymanagementapi", endpoint_url=self.settings.require("websocket_endpoint")
        )
        return WsDeps(st.jobs, st.events, st.connections, ApiGatewayPusher(client), st.clock)

    @cached_property
    def live_events(self) -> EventLog:
        """The event log, announcing terminal events when an EventBridge bus is
        configured. Appending only writes: the events table's stream feeds the fan-out
        function, which pushes new events to subscribers in order (``fanout``)."""
        from ..adapters.aws.announce import AnnouncingEventLog
        from ..adapters.aws.eventbuffer import BufferedEventLog

        # Appends inside ``collecting()`` are stored together (eventbuffer.py).
        events: EventLog = BufferedEventLog(self.stores.events)
        if self.settings.event_bus:
            events = AnnouncingEventLog(
                events, self.session.client("events"), self.settings.event_bus
            )
        return events

    @cached_property
    def api(self) -> ApiDeps:
        from ..adapters.aws.starter import StepFunctionsStarter
        from ..service.deps import ApiDeps

        st, s = self.stores, self.settings
        starter = StepFunctionsStarter(
            self.session.client("stepfunctions"), s.require("state_machine_arn")
        )
        return ApiDeps(
            jobs=st.jobs,
            frontier=st.frontier,
            pages=st.pages,
            events=self.live_events,  # a queued job's job.cancelled is announced
            blobs=st.blobs,
            clock=st.clock,
            start_job=lambda job_id: starter.start(job_id, {"job_id": job_id}),
            check_url=self.guard.check_url,
            limits=s.limits,
        )

    @cached_property
    def fanout(self) -> WsDeps:
        """The fan-out function: a job's subscribers and the pusher."""
        return self.ws

    @cached_property
    def websocket(self) -> WebSocketPorts:
        from ..adapters.aws.apikeys import ApiKeyChecker

        keys = ApiKeyChecker(self.session.client("apigateway"), self.settings.usage_plan_id)
        return WebSocketPorts(self.ws, keys)

    @cached_property
    def orchestrator(self) -> OrchestratorPorts:
        from botocore.config import Config

        from ..adapters.aws.counters import BufferedCounters
        from ..adapters.aws.eventbuffer import collecting
        from ..adapters.aws.invoker import LambdaInvoker
        from ..pipeline.jobs import JobDeps
        from ..pipeline.orchestrate import OrchestratorDeps
        from ..pipeline.steps import OrchestratorPorts

        st, s = self.stores, self.settings
        # The crawler may run up to its 60 s timeout: wait longer than that, and never let
        # botocore re-send an invoke on its own (a second crawl of the same batch).
        lambda_client = self.session.client(
            "lambda", config=Config(read_timeout=75, retries={"total_max_attempts": 1})
        )
        invoker = LambdaInvoker(
            lambda_client,
            s.require("crawler_function"),
            s.require("processor_function"),
            blobs=st.blobs,
            event_client=self._event_client,
        )
        events = self.live_events
        return OrchestratorPorts(
            # Counters summed in memory, written with the heartbeat (adapters/aws/counters.py).
            # The pages of the outcomes applied together go to the processor together.
            orchestrate=OrchestratorDeps(
                BufferedCounters(st.jobs),
                st.frontier,
                events,
                st.pages,
                invoker,
                st.clock,
                # A batch of outcomes settles in one frontier log entry (frontier.py),
                # written before its pages go to the processor in one invoke.
                # Their events are stored last, together (adapters/aws/eventbuffer.py).
                batch=nested(
                    lambda: collecting(events), invoker.collecting, st.frontier.batch
                ),
            ),
            job=JobDeps(st.jobs, st.frontier, events, st.clock),
        )

    @cached_property
    def notifier(self) -> NotifyDeps:
        """The notify step: the job's webhook, signed with the deployment's secret and
        sent behind the same SSRF guard as crawl requests."""
        from ..adapters.aws.secrets import SecretValue
        from ..pipeline.notify import NotifyDeps
        from ..webhook import Sender

        secret = SecretValue(
            self.session.client("secretsmanager"), self.settings.require("webhook_secret")
        )
        return NotifyDeps(self.stores.jobs, Sender(self.guard), secret, self.stores.clock)

    @cached_property
    def finalizer(self) -> FinalizerPorts:
        from ..adapters.aws.finalizing import s3_finalize_session
        from ..adapters.aws.invoker import LambdaInvoker
        from ..pipeline.finalize import FinalizeDeps
        from ..pipeline.finalize_task import FinalizerPorts
        from ..pipeline.recover import RecoverDeps

        st, s = self.stores, self.settings
        # The finalizer only hands pages to the processor again (no crawls): no crawler.
        invoker = LambdaInvoker(
            self._event_client, "", s.require("processor_function"), blobs=st.blobs
        )
        events = self.live_events
        return FinalizerPorts(
            finalize=FinalizeDeps(
                st.jobs, st.frontier, st.pages, self.packed_blobs, events, st.clock
            ),
            recover=RecoverDeps(st.frontier, st.pages, st.cache),
            frontier=st.frontier,
            invoker=invoker,
            session=s3_finalize_session,
        )

    @cached_property
    def _event_client(self) -> Any:
        """Lambda client for async (Event) invokes: queuing a processor event is safe to
        repeat (processing is idempotent), so the standard retry mode rides out Lambda's
        throttling of the Invoke API."""
        from botocore.config import Config

        return self.session.client(
            "lambda", config=Config(retries={"mode": "standard", "total_max_attempts": 5})
        )

    @cached_property
    def crawler(self) -> CrawlerPorts:
        from ..adapters.aws.crawling import CrawlerPorts
        from ..adapters.aws.hostlease import HostLeases
        from ..adapters.aws.robots import DynamoDbRobotsCache

        st, s = self.stores, self.settings
        dynamodb = self.session.client("dynamodb")
        leases = HostLeases(dynamodb, s.tables[Table.CACHE])
        # A fresh robots.txt cache per invocation (its memory), over the shared cache table.
        robots = functools.partial(DynamoDbRobotsCache, dynamodb, s.tables[Table.CACHE])
        return CrawlerPorts(
            st.cache, self.packed_blobs, st.clock, self.guard, leases, robots, self._cached_pages
        )

    @cached_property
    def _cached_pages(self) -> Any:
        """The crawler's records of cached pages (adapters/aws/cachedpages.py), with the
        jobs' settled templates kept for the container's life."""
        from ..adapters.aws.cachedpages import CachedPages
        from ..adapters.aws.memo import SettledTemplates
        from ..pipeline.templating import TEMPLATE_NAME

        return CachedPages(SettledTemplates(self.packed_blobs, TEMPLATE_NAME))

    @cached_property
    def processor(self) -> ProcessDeps:
        from ..adapters.aws.memo import JobOptionsOnce, SettledTemplates
        from ..adapters.aws.packs import flush_before
        from ..pipeline.process import ProcessDeps
        from ..pipeline.templating import TEMPLATE_NAME

        st = self.stores
        # The record points at the markdown cache's document: no copy per job (stored.py),
        # written (packed) before the record; a job's options and settled template are
        # read once per container (memo.py).
        blobs = SettledTemplates(self.packed_blobs, TEMPLATE_NAME)
        pages = flush_before(st.pages, self.packed_blobs)
        jobs = JobOptionsOnce(st.jobs)
        return ProcessDeps(blobs, pages, jobs, self.live_events, st.clock, job_copy=False)


def nested(
    *blocks: Callable[[], AbstractContextManager[object]],
) -> Callable[[], AbstractContextManager[object]]:
    """One block made of several, entered in order (the first outermost): what the
    orchestrator's ``batch`` hook takes."""

    @contextmanager
    def enter_all() -> Iterator[None]:
        with ExitStack() as stack:
            for block in blocks:
                stack.enter_context(block())
            yield

    return enter_all
