"""Finalize in its own function: a run interrupted midway (S3 failing while the outputs
are being written) leaves nothing half-written, the state machine runs it again, and
the job's outputs are the same as those of a run that was never interrupted."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pytest
from mdcrawl.adapters.aws import finalizing
from mdcrawl.errors import StoreError
from mdcrawl.models import JobStatus

from tests.e2e.test_aws_pipeline import manifest_pages, result, run_cli, start_job
from tests.support.server import RunningServer
from tests.support.sfn import OfflineStack
from tests.support.sites import Site

pytestmark = pytest.mark.slow


def test_a_finalize_interrupted_midway_resumes_with_the_same_outputs(
    stack: OfflineStack, server: RunningServer, site: Site, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_open = finalizing.open_output
    opened: list[str] = []

    def failing_once(blobs: Any, job_id: str, name: str) -> Any:
        opened.append(name)
        if opened.count("docs.md") == 1 and name == "llms.txt":
            # docs.md is written and pages.zip is being uploaded: S3 gives up now.
            raise StoreError("PutObject: ServiceUnavailable")
        return real_open(blobs, job_id, name)

    monkeypatch.setattr(finalizing, "open_output", failing_once)
    url = server.url(site.start)
    job_id = start_job(stack, url)
    execution = stack.wait(job_id)
    assert execution["status"] == "SUCCEEDED", stack.history(job_id)[-5:]

    # The first run failed midway and the state machine ran Finalize again.
    assert opened.count("docs.md") == 2
    finalizer_errors = [
        e for e in stack.history(job_id) if e["type"] == "LambdaFunctionFailed"
    ]
    assert len(finalizer_errors) == 1
    job = stack.stores.jobs.get(job_id)
    assert job.status is JobStatus.COMPLETED
    types = [e.type for e in stack.stores.events.after(job_id, 0, 100_000)]
    assert types.count("job.completed") == 1
    # The interrupted run's uploads were aborted, not left half-written.
    s3 = stack.aws.session.client("s3")
    assert not s3.list_multipart_uploads(Bucket=stack.aws.bucket).get("Uploads")

    out = tmp_path / "cli"
    run_cli(url, out, tmp_path / "cache")
    assert result(stack, job_id, "markdown").decode() == (out / "docs.md").read_text()
    assert result(stack, job_id, "llms").decode() == (out / "llms.txt").read_text()
    manifest = result(stack, job_id, "manifest").decode()
    assert manifest_pages(manifest) == manifest_pages((out / "manifest.jsonl").read_text())
    with zipfile.ZipFile(io.BytesIO(result(stack, job_id, "pages"))) as packed:
        files = {name: packed.read(name).decode() for name in packed.namelist()}
    assert files == {f"pages/{p.name}": p.read_text() for p in (out / "pages").iterdir()}
