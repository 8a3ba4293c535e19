"""The Lambda functions' composition root: settings from the environment, adapters over
boto3, and the ports each function's ``handle`` receives.

Environment variables are read here and nowhere else (names from ``names.EnvVar``),
once, into ``AwsSettings``. ``AwsRuntime`` builds clients and adapters lazily, on first
use, and keeps them for the container's life (a warm invocation reuses them); building
one does no I/O, so a handler module may create it at import time.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, BinaryIO

import boto3
from botocore.config import Config

from ..adapters.aws.calls import call
from ..adapters.aws.hostlease import HostLeases, LeasedFetcher
from ..adapters.aws.invoker import SPILLED, LambdaInvoker
from ..adapters.aws.limits import CRAWL_RESPONSE_BUDGET, json_size
from ..adapters.aws.packing import PagePacker
from ..adapters.aws.payloads import to_data
from ..adapters.aws.prefetch import PrefetchedBlobs
from ..adapters.aws.pusher import ApiGatewayPusher
from ..adapters.aws.starter import StepFunctionsStarter
from ..adapters.aws.stores import AwsStores, aws_stores
from ..errors import StoreError
from ..fetch import HttpxFetcher
from ..models import CrawledPage, Event, EventType, FrontierItem, Scope, UrlState
from ..names import CRAWL_SPILL, Table, job_key
from ..netguard import AddressGuard
from ..pipeline.crawl import CrawlDeps, crawl_batch, crawl_item
from ..pipeline.finalize import WAIT, FinalizeDeps, fail, finalize
from ..pipeline.jobs import JobDeps, get_job
from ..pipeline.orchestrate import DONE, OrchestratorDeps, Tuning, orchestrate
from ..pipeline.process import ConversionFailed, ProcessDeps
from ..pipeline.process import _record_failure as record_failure
from ..pipeline.recover import RecoverDeps, recover_unrecorded
from ..ports import CrawlOutcome, CrawlRequest, CrawlResponse, EventLog, Frontier
from ..service.deps import ApiDeps, WsDeps
from ..service.results import content_type
from ..service.ws import fan_out
from ..urls import in_scope, normalize_url
from .settings import AwsSettings

log = logging.getLogger(__name__)

# The orchestrator stops claiming this long before its Lambda timeout: in-flight crawler
# calls (60 s timeout, infra/pipeline.py) must come back before the slice ends.
CRAWLER_TIMEOUT_S = 60.0
SLICE_SAFETY_MARGIN_S = CRAWLER_TIMEOUT_S + 10.0
# A crawler invocation answers this long before its own timeout, whatever is in flight.
CRAWL_STOP_MARGIN_S = 5.0
# Finalize re-hands unrecorded fetched pages to the processor when they are owed for
# this long (an async event lost after Lambda's own retries, or an orchestrator that
# died between marking a URL done and invoking the processor).
REPROCESS_AFTER_S = 180.0
MAX_REHANDS = 2


class FanOutEventLog:
    """An ``EventLog`` that pushes every appended event to the job's WebSocket subscribers
    right away. A failed push never fails the write: the client resyncs from the log."""

    def __init__(self, inner: EventLog, ws: Callable[[], WsDeps]) -> None:
        self._inner, self._ws = inner, ws

    def append(self, job_id: str, type: EventType, data: dict[str, Any], ts: float) -> Event:
        event = self._inner.append(job_id, type, data, ts)
        try:
            fan_out(event, self._ws())
        except StoreError as exc:  # connections table unavailable: subscribers resync
            log.warning("fan-out of %s #%d failed: %s", event.type, event.seq, exc)
        return event

    def after(self, job_id: str, seq: int = 0, limit: int = 1000) -> list[Event]:
        return self._inner.after(job_id, seq, limit)


TERMINAL_EVENTS = {
    EventType.JOB_COMPLETED: "Job Completed",
    EventType.JOB_FAILED: "Job Failed",
    EventType.JOB_CANCELLED: "Job Cancelled",
}
EVENT_SOURCE = "mdcrawl"


class AnnouncingEventLog:
    """An ``EventLog`` that also puts a job's terminal event on an EventBridge bus
    (source ``mdcrawl``, detail-type ``Job Completed``/``Job Failed``/``Job Cancelled``,
    detail = the event), for whoever wants to react: a rule to SNS, a Lambda, an API
    destination. The log stays the truth: a failed put is logged, not raised."""

    def __init__(self, inner: EventLog, client: Any, bus: str) -> None:
        self._inner, self._client, self._bus = inner, client, bus

    def append(self, job_id: str, type: EventType, data: dict[str, Any], ts: float) -> Event:
        event = self._inner.append(job_id, type, data, ts)
        if event.type in TERMINAL_EVENTS:
            self._announce(event)
        return event

    def after(self, job_id: str, seq: int = 0, limit: int = 1000) -> list[Event]:
        return self._inner.after(job_id, seq, limit)

    def _announce(self, event: Event) -> None:
        entry = {
            "Source": EVENT_SOURCE,
            "DetailType": TERMINAL_EVENTS[event.type],
            "Detail": json.dumps(event.to_dict(), separators=(",", ":")),
            "EventBusName": self._bus,
        }
        try:
            answer = call(self._client.put_events, Entries=[entry])
        except StoreError as exc:
            log.warning("EventBridge put of %s for %s failed: %s", event.type, event.job_id, exc)
            return
        if answer.get("FailedEntryCount"):
            log.warning("EventBridge refused %s for %s: %s", event.type, event.job_id,
                        answer.get("Entries"))


class ApiKeyChecker:
    """WebSocket $connect: the caller's ``?api_key=`` must be an enabled key of the REST
    usage plan; its key id becomes the connection's owner (as ``apiKeyId`` on REST).

    Answers are kept ``cache_s`` per warm function: the API Gateway control plane is
    rate-limited (a few requests per second per account) and a reconnect storm would
    hit it once per connection. A disabled key stops connecting within ``cache_s``."""

    def __init__(
        self,
        client: Any,
        usage_plan_id: str,
        cache_s: float = 60.0,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client, self._plan = client, usage_plan_id
        self._cache_s, self._now = cache_s, now
        self._known: dict[str, tuple[float, str | None]] = {}

    def owner_of(self, api_key: str | None) -> str | None:
        if not api_key or not self._plan:
            return None
        now = self._now()
        known = self._known.get(api_key)
        if known is not None and now - known[0] < self._cache_s:
            return known[1]
        owner = self._look_up(api_key)
        if len(self._known) > 10_000:  # keys of a plan are few; guessed ones are not
            self._known.clear()
        self._known[api_key] = (now, owner)
        return owner

    def _look_up(self, api_key: str) -> str | None:
        try:
            pages = self._client.get_paginator("get_usage_plan_keys")
            for page in pages.paginate(usagePlanId=self._plan):
                for key in page.get("items", []):
                    if key.get("value") == api_key:
                        return self._enabled(str(key["id"]))
        except self._client.exceptions.ClientError as exc:
            raise StoreError(f"get_usage_plan_keys: {exc}") from exc
        return None

    def _enabled(self, key_id: str) -> str | None:
        record = self._client.get_api_key(apiKey=key_id)
        return key_id if record.get("enabled", False) else None


@dataclass(frozen=True)
class CrawlerPorts:
    cache: Any
    blobs: Any
    clock: Any
    guard: AddressGuard
    leases: HostLeases | None = None

    @contextlib.asynccontextmanager
    async def deps_for(self, request: CrawlRequest) -> AsyncIterator[CrawlDeps]:
        """A fetcher for this batch's options and scope, behind the SSRF guard (the
        httpx client belongs to one event loop: one per invocation), holding a shared
        per-host slot for every request (``hostlease``: the job's concurrency holds
        across crawler invocations and jobs)."""
        async with HttpxFetcher(request.options, scope=request.scope, guard=self.guard) as f:
            fetcher: Any = f
            if self.leases is not None:
                fetcher = LeasedFetcher(f, self.leases, request.options.concurrency)
            yield CrawlDeps(fetcher, self.cache, self.blobs, self.clock)

    async def crawl(self, request: CrawlRequest, time_left_s: float | None = None) -> CrawlResponse:
        """The batch's outcomes. With ``time_left_s`` (the invocation's remaining time),
        URLs still being fetched ``CRAWL_STOP_MARGIN_S`` before the function's timeout
        come back PENDING (``timeout``: the orchestrator retries them) instead of the
        invocation being killed: per-request timeouts x retries x redirects can add up
        past any function timeout."""
        async with self.deps_for(request) as deps:
            if time_left_s is None:
                return scoped_response(await crawl_batch(request, deps), request.scope)
            tasks = [asyncio.ensure_future(crawl_item(request, i, deps)) for i in request.items]
            budget = max(time_left_s - CRAWL_STOP_MARGIN_S, 1.0)
            _, late = await asyncio.wait(tasks, timeout=budget)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)  # their leases given back
            outcomes = tuple(
                _out_of_time(item) if task in late else task.result()
                for task, item in zip(tasks, request.items, strict=True)
            )
            return scoped_response(CrawlResponse(request.job_id, outcomes), request.scope)

    def answer(self, response: CrawlResponse) -> dict[str, Any]:
        """The crawler's return value: the response, or (over Lambda's 6 MB synchronous
        response limit) a pointer to it in S3, which ``LambdaInvoker`` follows."""
        data: dict[str, Any] = to_data(response)
        size = json_size(data)
        if size <= CRAWL_RESPONSE_BUDGET:
            return data
        body = json.dumps(data, separators=(",", ":")).encode()
        name = f"{CRAWL_SPILL}{hashlib.sha256(body).hexdigest()}.json"
        key = job_key(response.job_id, name)
        self.blobs.put(key, body, "application/json")
        log.warning("crawl answer of %d bytes spilled to %s", size, key)
        return {SPILLED: key}


def _out_of_time(item: FrontierItem) -> CrawlOutcome:
    detail = "the crawler invocation ran out of time before this URL was fetched"
    return CrawlOutcome(item.url_hash, UrlState.PENDING, "timeout", detail=detail)


def scoped_response(response: CrawlResponse, scope: Scope) -> CrawlResponse:
    """Only links and sitemap URLs in the job's scope cross the Lambda boundary: the
    orchestrator drops the others anyway (``outcomes.add_urls``), and a sitemap index
    of 50,000 URLs or a 17,940-link page must not fill the 6 MB response."""
    outcomes = tuple(
        replace(o, links=_in_scope(o.links, scope), sitemap=_in_scope(o.sitemap, scope))
        if o.links or o.sitemap
        else o
        for o in response.outcomes
    )
    return replace(response, outcomes=outcomes)


def _in_scope(urls: tuple[str, ...], scope: Scope) -> tuple[str, ...]:
    kept: dict[str, None] = {}
    for raw in urls:
        url = normalize_url(raw)
        if url and in_scope(url, scope):
            kept[url] = None
    return tuple(kept)


@dataclass(frozen=True)
class OrchestratorPorts:
    orchestrate: OrchestratorDeps
    finalize: FinalizeDeps
    recover: RecoverDeps
    job: JobDeps


@dataclass(frozen=True)
class WebSocketPorts:
    ws: WsDeps
    keys: ApiKeyChecker


class AwsRuntime:
    """Lazily built ports for every function; one per container."""

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
    def guard(self) -> AddressGuard:
        return AddressGuard(self.settings.allow_networks)

    @cached_property
    def ws(self) -> WsDeps:
        st = self.stores
        client = self.session.client(
            "apigatewaymanagementapi", endpoint_url=self.settings.require("websocket_endpoint")
        )
        return WsDeps(st.jobs, st.events, st.connections, ApiGatewayPusher(client), st.clock)

    @cached_property
    def live_events(self) -> EventLog:
        """The event log, fanning each new event out when a WebSocket API is configured
        and announcing terminal events when an EventBridge bus is."""
        events: EventLog = self.stores.events
        if self.settings.websocket_endpoint:
            events = FanOutEventLog(events, lambda: self.ws)
        if self.settings.event_bus:
            events = AnnouncingEventLog(
                events, self.session.client("events"), self.settings.event_bus
            )
        return events

    @cached_property
    def api(self) -> ApiDeps:
        st, s = self.stores, self.settings
        starter = StepFunctionsStarter(
            self.session.client("stepfunctions"), s.require("state_machine_arn")
        )
        return ApiDeps(
            jobs=st.jobs,
            frontier=st.frontier,
            pages=st.pages,
            events=self.live_events,  # a queued job's job.cancelled is pushed from here
            blobs=st.blobs,
            clock=st.clock,
            start_job=lambda job_id: starter.start(job_id, {"job_id": job_id}),
            check_url=self.guard.check_url,
            limits=s.limits,
        )

    @cached_property
    def websocket(self) -> WebSocketPorts:
        keys = ApiKeyChecker(self.session.client("apigateway"), self.settings.usage_plan_id)
        return WebSocketPorts(self.ws, keys)

    @cached_property
    def orchestrator(self) -> OrchestratorPorts:
        st, s = self.stores, self.settings
        # The crawler may run up to its 60 s timeout: wait longer than that, and never let
        # botocore re-send an invoke on its own (a second crawl of the same batch).
        lambda_client = self.session.client(
            "lambda", config=Config(read_timeout=75, retries={"total_max_attempts": 1})
        )
        # Queuing a processor event is safe to repeat (processing is idempotent): the
        # standard retry mode rides out Lambda's throttling of the Invoke API.
        event_client = self.session.client(
            "lambda", config=Config(retries={"mode": "standard", "total_max_attempts": 5})
        )
        invoker = LambdaInvoker(
            lambda_client,
            s.require("crawler_function"),
            s.require("processor_function"),
            blobs=st.blobs,
            event_client=event_client,
        )
        events = self.live_events
        return OrchestratorPorts(
            orchestrate=OrchestratorDeps(st.jobs, st.frontier, events, st.pages, invoker, st.clock),
            finalize=FinalizeDeps(st.jobs, st.frontier, st.pages, st.blobs, events, st.clock),
            recover=RecoverDeps(st.frontier, st.pages, st.cache),
            job=JobDeps(st.jobs, st.frontier, events, st.clock),
        )

    @cached_property
    def crawler(self) -> CrawlerPorts:
        st, s = self.stores, self.settings
        leases = HostLeases(self.session.client("dynamodb"), s.tables[Table.CACHE])
        return CrawlerPorts(st.cache, st.blobs, st.clock, self.guard, leases)

    @cached_property
    def processor(self) -> ProcessDeps:
        st = self.stores
        return ProcessDeps(st.blobs, st.pages, st.jobs, self.live_events, st.clock)


def slice_end(now: float, remaining_ms: int, deadline: float | None) -> float:
    """When an orchestrator slice stops claiming: before its Lambda timeout (leaving room
    for in-flight crawls), never past the job's deadline."""
    end = now + max(remaining_ms / 1000.0 - SLICE_SAFETY_MARGIN_S, 0.0)
    return end if deadline is None else min(end, deadline)


# --- the orchestrator function's steps (state machine payload -> answer) ---------------
def run_step(
    event: Mapping[str, Any], ports: OrchestratorPorts, remaining_ms: int
) -> dict[str, Any]:
    """``{"step": "orchestrate"|"finalize"|"fail", "job_id", ...}`` -> ``{"job_id", "next"}``."""
    step, job_id = event.get("step"), event.get("job_id")
    if not isinstance(job_id, str) or not job_id:
        raise ValueError("the state machine input has no job_id")
    if step == "orchestrate":
        return {"job_id": job_id, "next": _orchestrate(job_id, ports, remaining_ms)}
    if step == "finalize":
        return {"job_id": job_id, "next": _finalize(job_id, ports)}
    if step == "fail":
        fail(job_id, ports.job, describe_error(event.get("error")))
        return {"job_id": job_id, "next": DONE}
    raise ValueError(f"unknown step {step!r}")


def _orchestrate(job_id: str, ports: OrchestratorPorts, remaining_ms: int) -> str:
    deps = ports.orchestrate
    reclaimed = reclaim_dead_leases(job_id, deps.frontier, deps.clock.now())
    if reclaimed:
        log.warning(
            "job %s: %d leases of a slice that died went back to the queue", job_id, reclaimed
        )
    job = get_job(job_id, deps.jobs)
    stop_at = slice_end(deps.clock.now(), remaining_ms, job.deadline)
    return asyncio.run(orchestrate(job_id, deps, stop_at))


def reclaim_dead_leases(
    job_id: str, frontier: Frontier, now: float, tuning: Tuning | None = None
) -> int:
    """A job has one execution, which runs one slice at a time, and a slice waits for its
    own crawls before it returns: a lease still held when a slice starts belongs to one
    that died. Its URLs go back to the queue now (counting the attempt), not in 5 min."""
    tuning = tuning or Tuning()
    if frontier.counts(job_id)[UrlState.LEASED] == 0:
        return 0
    # Every lease was taken at or before now, so it expires by now + lease_s.
    return frontier.reclaim_expired(job_id, now + tuning.lease_s + 1, tuning.max_attempts)


def _finalize(job_id: str, ports: OrchestratorPorts) -> str:
    blobs = PrefetchedBlobs(ports.finalize.blobs, lambda: markdown_keys(job_id, ports))
    deps = replace(ports.finalize, blobs=blobs)
    # Page files go into pages.zip (one upload), not one PUT each (adapters/aws/packing.py).
    packer = PagePacker(blobs, job_id, lambda name: _open_output(blobs, job_id, name))
    try:
        answer = finalize(job_id, deps, packer.open_output, packer.output_key)
        packer.finish()
    except BaseException as exc:
        packer.abort(exc)
        raise
    finally:
        blobs.close()
    if answer == WAIT:
        reprocess_if_stuck(job_id, ports)
    return answer


def markdown_keys(job_id: str, ports: OrchestratorPorts) -> list[str]:
    """The markdown the assembly will read, roughly in its reading order."""
    records = sorted(ports.finalize.pages.list(job_id), key=lambda r: r.order)
    return [r.markdown_key for r in records if r.markdown_key]


def reprocess_if_stuck(job_id: str, ports: OrchestratorPorts) -> int:
    """Hand fetched-but-unrecorded pages to the processor again once they have been owed
    for ``REPROCESS_AFTER_S`` (processing is idempotent: a late original changes nothing).

    A page handed over ``MAX_REHANDS`` times without a record (it times the processor
    out or exhausts its memory on every try: Lambda's own two async retries each time)
    is recorded as failed, ``processor_failed``, so the job can finish."""
    job, now = get_job(job_id, ports.finalize.jobs), ports.finalize.clock.now()
    if job.heartbeat is not None and now - job.heartbeat < REPROCESS_AFTER_S:
        return 0
    pages = recover_unrecorded(job_id, ports.recover)
    for page in pages:
        if count_rehand(ports.orchestrate.frontier, job_id, page.url_hash) > MAX_REHANDS:
            give_up_processing(page, ports)
        else:
            ports.orchestrate.invoker.process(page)
    ports.finalize.jobs.update(job_id, heartbeat=now)
    return len(pages)


def count_rehand(frontier: Any, job_id: str, url_hash: str) -> int:
    """How many times this page has now been handed to the processor again (kept on
    its frontier item, so the count survives orchestrator invocations)."""
    bump = getattr(frontier, "bump", None)
    return int(bump(job_id, url_hash, "rehands")) if bump is not None else 0


def give_up_processing(page: CrawledPage, ports: OrchestratorPorts) -> None:
    f = ports.finalize
    deps = ProcessDeps(f.blobs, f.pages, f.jobs, f.events, f.clock)
    failure = ConversionFailed(
        "processor_failed",
        f"the processor did not finish this page in {MAX_REHANDS + 1} deliveries "
        "(each retried by Lambda): it may exceed the function's time or memory",
    )
    record_failure(page, failure, deps)


def _open_output(blobs: Any, job_id: str, name: str) -> AbstractContextManager[BinaryIO]:
    return blobs.writer(job_key(job_id, name), content_type(name))  # type: ignore[no-any-return]


def describe_error(error: Any) -> str:
    """A person's sentence from a Step Functions Catch payload ``{"Error", "Cause"}``."""
    if not isinstance(error, Mapping):
        return "the job's workflow failed"
    name, cause = str(error.get("Error") or "Error"), error.get("Cause")
    if isinstance(cause, str):
        with contextlib.suppress(ValueError):
            detail = json.loads(cause)
            if isinstance(detail, dict) and detail.get("errorMessage"):
                cause = str(detail["errorMessage"])
    return f"{name}: {cause}"[:1000] if cause else name
