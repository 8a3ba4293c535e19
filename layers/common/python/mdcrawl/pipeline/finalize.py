"""The last step: once every settled URL has its record, assemble the outputs, once.

``finalize`` answers ``"wait"`` while the process step still owes records (pages are
converted asynchronously), and ``"done"`` after writing (or, for a job whose cancel was
requested, after announcing ``job.cancelled``: no event may follow a terminal one).
The completed transition is conditional, so a retried finalize writes the same files
again but announces once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from .. import stored
from ..agent_outputs import AgentOutputs, ChunkLines, agent_output_names
from ..assemble import (
    DOCS,
    LLMS,
    MANIFEST,
    PAGES_DIR,
    AssembledResult,
    OutputOpener,
    PageMap,
    write_outputs,
)
from ..models import EventType, Job, JobStatus, PageRecord, PageStatus, UrlState
from ..names import job_key
from ..native import site_file_records, with_native_twins
from ..order import reading_order
from ..ports import BlobStore, Clock, EventLog, Frontier, JobStore, PageStore
from . import templating
from .jobs import fail, get_job
from .process import reprocess

WAIT, DONE = "wait", "done"
__all__ = ["DONE", "WAIT", "FinalizeDeps", "fail", "finalize", "records_owed"]  # fail: jobs.py
OUTPUT_NAMES = {"docs": DOCS, "llms": LLMS, "manifest": MANIFEST, "pages": PAGES_DIR}
SETTLED = (UrlState.DONE, UrlState.FAILED, UrlState.SKIPPED)


@dataclass(frozen=True)
class FinalizeDeps:
    jobs: JobStore
    frontier: Frontier
    pages: PageStore
    blobs: BlobStore
    events: EventLog
    clock: Clock


class OutputMemo(Protocol):
    """What the last assembly of the same outputs was (local runs: ``FileOutputMemo``):
    ``reuse`` answers its result when the inputs and files are unchanged (then nothing
    is assembled), ``remember`` keeps an assembly just written."""

    def reuse(self, job: Job, records: Sequence[PageRecord]) -> AssembledResult | None: ...

    def remember(
        self, job: Job, records: Sequence[PageRecord], result: AssembledResult
    ) -> None: ...


def finalize(
    job_id: str,
    deps: FinalizeDeps,
    open_output: OutputOpener,
    output_key: Callable[[str], str] | None = None,
    memo: OutputMemo | None = None,
    page_chunks: ChunkLines | None = None,
    page_map: PageMap | None = None,
    page_files: OutputOpener | None = None,
    records_ready: Callable[[Job, list[PageRecord]], None] | None = None,
) -> str:
    """Assemble the job's outputs through ``open_output``; ``output_key(name)`` says where
    each ended up (blob keys by default) for ``result_keys``; ``memo`` skips an assembly
    whose inputs have not changed since the last one; ``page_chunks`` gives each page's
    chunks.jsonl lines (default: chunked as they are written); ``page_map`` renders the
    pages (``assemble.PageMap``; default: one after another); ``page_files`` writes
    each page's own file where it is rendered (``assemble.write_outputs``);
    ``records_ready`` is given the job (not finished yet) and its pages as the outputs
    will hold them (native twins in, the site's own llms files not) before they are
    assembled."""
    job = get_job(job_id, deps.jobs)
    if job.status.terminal:
        return DONE
    if job.status is JobStatus.QUEUED or records_owed(job_id, deps.frontier, deps.pages) > 0:
        return WAIT
    if job.cancel_requested:
        _cancelled(job_id, deps)
        return DONE
    records = final_records(job_id, deps)
    if job.options.prefer_native:
        records = with_native_twins(records, deps.blobs)
    if records_ready is not None:
        records_ready(job, list(records))
    records += site_file_records(job_id, deps.blobs)  # llms.txt / llms-full.txt found
    result = memo.reuse(job, records) if memo is not None else None
    if result is None:
        result = _assemble(
            job, records, deps.blobs, open_output, page_chunks, page_map, page_files
        )
        if memo is not None:
            memo.remember(job, records, result)
    locate = output_key or (lambda name: job_key(job_id, name))
    names = {**OUTPUT_NAMES, **agent_output_names(job.options.max_tokens)}
    keys = {kind: locate(name) for kind, name in names.items()}
    now = deps.clock.now()
    if deps.jobs.transition(
        job_id,
        [JobStatus.RUNNING, JobStatus.FINALIZING],
        JobStatus.COMPLETED,
        finished_at=now,
        result_keys=keys,
    ):
        data = {
            "pages": result.pages,
            "words": result.words,
            "tokens": result.tokens,
            "truncated": job.truncated,
            "left": job.left,
            "result": keys,
            **quality_summary(result),
        }
        deps.events.append(job_id, EventType.JOB_COMPLETED, data, now)
    return DONE


def _assemble(
    job: Job,
    records: list[PageRecord],
    blobs: BlobStore,
    open_output: OutputOpener,
    page_chunks: ChunkLines | None = None,
    page_map: PageMap | None = None,
    page_files: OutputOpener | None = None,
) -> AssembledResult:
    read = lambda key: _read_markdown(blobs, key)  # noqa: E731
    anchors = lambda key: _read_anchors(blobs, key)  # noqa: E731
    # llms-full.txt and chunks.jsonl are made beside each page's rendering, from the same
    # read of its markdown (one pass over the pages, not two)
    ordered = reading_order(records, job.url)  # both read the pages in that order
    agent = AgentOutputs(job, records, page_chunks, ordered)
    with agent.streams(open_output):
        result = write_outputs(
            job, records, read, open_output, anchors, page_map, agent, page_files, ordered
        )
    agent.finish(read, open_output, job.options.max_tokens)
    return result


def final_records(job_id: str, deps: FinalizeDeps) -> list[PageRecord]:
    """The job's records as its outputs hold them: duplicates listed as skipped, pages
    converted before the site's template settled converted again with it. What reads a
    finished job's pages (the assembly, the local docs library) reads these; the
    PageStore keeps each page's first record."""
    return with_settled_template(job_id, without_duplicates(deps.pages.list(job_id)), deps)


def with_settled_template(
    job_id: str, records: list[PageRecord], deps: FinalizeDeps
) -> list[PageRecord]:
    """Settle the job's template if the crawl did not, and convert again the pages that
    were converted with another one (before it settled): same pages, same output."""
    job = get_job(job_id, deps.jobs)
    rules = job.options.generator_rules
    state = templating.load(job_id, deps.blobs)
    if not state.settled:
        state = templating.settle(job_id, records, deps.blobs, rules, complete=True)
    return [reprocess(record, state, rules, deps.blobs) for record in records]


def _cancelled(job_id: str, deps: FinalizeDeps) -> None:
    """The cancel's terminal event, once every page in flight has been recorded."""
    now = deps.clock.now()
    if deps.jobs.transition(
        job_id, [JobStatus.RUNNING, JobStatus.FINALIZING], JobStatus.CANCELLED, finished_at=now
    ):
        deps.events.append(job_id, EventType.JOB_CANCELLED, {}, now)


def records_owed(job_id: str, frontier: Frontier, pages: PageStore) -> int:
    """Settled URLs (fetched, failed, skipped) that have no PageRecord yet."""
    counts = frontier.counts(job_id)
    return sum(counts[state] for state in SETTLED) - len(pages.list(job_id))


def without_duplicates(records: list[PageRecord]) -> list[PageRecord]:
    """Two URLs serving the same bytes (a redirect, an alias) make one page: the first
    in discovery order stays, the others are listed as skipped duplicates."""
    seen: set[str] = set()
    kept: list[PageRecord] = []
    for record in records:
        if record.status is PageStatus.OK and record.content_hash:
            if record.content_hash in seen:
                record = replace(
                    record,
                    status=PageStatus.SKIPPED,
                    reason="duplicate",
                    markdown_key=None,
                    words=0,
                )
            seen.add(record.content_hash)
        kept.append(record)
    return kept


def quality_summary(result: AssembledResult) -> dict[str, object]:
    """The crawl's quality report, summed (per page in the manifest): how many pages
    have each kind of warning (quality.py)."""
    return {"pages_with_warnings": result.pages_with_warnings, "warnings": result.warnings}


def _read_anchors(blobs: BlobStore, key: str) -> dict[str, list[object]]:
    return stored.read_anchors(blobs, key)


def _read_markdown(blobs: BlobStore, key: str) -> str:
    return stored.read_markdown(blobs, key)
