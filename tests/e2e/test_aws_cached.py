"""A re-crawl on the offline stack: a cached page whose conversion is cached too is
recorded from the crawler's answer, with no processor invocation
(adapters/aws/cachedpages.py), and the job's outputs equal the fresh job's."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mdcrawl.models import JobStatus

from tests.e2e.test_aws_pipeline import manifest_pages, result, start_job
from tests.support.server import RunningServer
from tests.support.sfn import OfflineStack
from tests.support.sites import Site

pytestmark = pytest.mark.slow
PAGES = 30


def outputs(stack: OfflineStack, job_id: str) -> tuple[Any, ...]:
    manifest = result(stack, job_id, "manifest").decode()
    docs, llms = (result(stack, job_id, fmt).decode() for fmt in ("markdown", "llms"))
    return manifest_pages(manifest), docs, llms


def processor_pages(stack: OfflineStack, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs the processor is invoked for from now on."""
    seen: list[str] = []
    module = stack.modules["processor"]
    original = module.lambda_handler

    def counted(event: dict[str, Any], context: Any) -> Any:
        seen.extend(page["url"] for page in event.get("pages", [event]))
        return original(event, context)

    monkeypatch.setattr(module, "lambda_handler", counted)
    return seen


def test_a_cached_job_records_its_pages_without_the_processor(
    stack: OfflineStack, server: RunningServer, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = server.url(site.start)
    fresh = start_job(stack, url, max_pages=PAGES)
    assert stack.wait(fresh)["status"] == "SUCCEEDED", stack.history(fresh)[-5:]

    processed = processor_pages(stack, monkeypatch)
    cached = start_job(stack, url, max_pages=PAGES)
    assert stack.wait(cached)["status"] == "SUCCEEDED", stack.history(cached)[-5:]

    job = stack.stores.jobs.get(cached)
    assert job.status is JobStatus.COMPLETED
    pages = job.counters.crawled
    assert job.counters.cached == job.counters.processed == pages > 20
    # Every page of the site is recognised by a generator rule and was converted in the
    # fresh job: none needs the processor now.
    assert processed == []
    records = stack.stores.pages.list(cached)
    assert len(records) == pages and all(r.from_cache for r in records)
    # Each page still announced, once, from the orchestrator.
    events = [e.to_dict() for e in stack.stores.events.after(cached, 0, 100_000)]
    done = [e["data"]["url"] for e in events if e["type"] == "page.done"]
    assert sorted(done) == sorted(r.url for r in records)
    assert events[-1]["type"] == "job.completed"
    assert json.dumps(outputs(stack, cached)) == json.dumps(outputs(stack, fresh))
