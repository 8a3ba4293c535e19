"""``mdcrawl pull JOB_ID --api URL --api-key K``: a finished hosted job (the AWS stack or
another machine's ``mdcrawl serve``) into the local library, so a team's hosted crawls
serve a developer's agent.

Two downloads through the REST API (docs/api.md): ``manifest`` (which pages, in reading
order) and ``llms_full`` (their full markdown, each under its title and a ``Source:``
line). The API answers a result with a redirect to a short-lived URL; the redirect is
followed without the API key (it must not leave for the storage host).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx

from ..errors import InvalidInput, JobNotFound
from ..versions import version_label
from .record import Recorded, scope_folder, site_of
from .store import Library, LibraryPage, Snapshot

TIMEOUT_S = 60.0


def pull(
    job_id: str, api: str, api_key: str, library: Library, label: str | None = None
) -> Recorded:
    with httpx.Client(
        base_url=api.rstrip("/"), headers={"x-api-key": api_key}, timeout=TIMEOUT_S
    ) as client:
        job = _job(client, job_id)
        manifest = [json.loads(line) for line in _result(client, job_id, "manifest").splitlines()]
        full = _result(client, job_id, "llms_full")
    pages = split_full_text(full, manifest)
    crawled_at = float(job.get("finished_at") or job.get("created_at") or 0.0)
    snapshot = Snapshot(
        0,
        site_of(job["url"]),
        version_label(scope_folder(job["url"]), label, crawled_at),
        job["url"],
        job_id,
        crawled_at,
        0,
        0,
        f"{api.rstrip('/')}/jobs/{job_id}",
    )
    stored, changes = library.record(snapshot, pages)
    return Recorded(stored, changes)


def _job(client: httpx.Client, job_id: str) -> dict[str, Any]:
    response = client.get(f"/jobs/{job_id}")
    if response.status_code in (401, 403):
        raise InvalidInput("the API refused the key")
    if response.status_code == 404:
        raise JobNotFound(f"no job {job_id} at this API for this key")
    response.raise_for_status()
    job = dict(response.json())
    if job["status"] != "completed":
        raise InvalidInput(f"job {job_id} is {job['status']}: only a completed job has results")
    return job


def _result(client: httpx.Client, job_id: str, fmt: str) -> str:
    answer = client.get(f"/jobs/{job_id}/result", params={"format": fmt})
    if answer.status_code == 404:
        raise JobNotFound(f"job {job_id} has no {fmt} result (crawled by an older version?)")
    if answer.is_redirect:
        location = str(answer.next_request.url) if answer.next_request else ""
        with httpx.Client(timeout=TIMEOUT_S) as plain:  # no API key to the storage host
            answer = plain.get(location)
    answer.raise_for_status()
    return answer.text


def split_full_text(full: str, manifest: Sequence[dict[str, Any]]) -> list[LibraryPage]:
    """llms-full.txt cut back into pages: the manifest says which URLs it holds, in
    order; each page starts at the title line above its ``Source: URL`` line."""
    placed = sorted((m for m in manifest if m.get("order")), key=lambda m: m["order"])
    starts: list[tuple[int, int, dict[str, Any]]] = []  # (title start, body start, line)
    position = 0
    for line in placed:
        marker = f"\n\nSource: {line['url']}\n\n"
        found = full.find(marker, position)
        if found < 0:
            continue
        starts.append((full.rfind("\n", 0, found) + 1, found + len(marker), line))
        position = found + len(marker)
    pages = []
    for index, (title_at, body_at, line) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(full)
        title = full[title_at : full.index("\n", title_at)]
        body = full[body_at:end].strip("\n")
        markdown = f"{title}\n\n{body}\n" if body else f"{title}\n"
        pages.append(LibraryPage(line["url"], line.get("title") or line["url"], markdown))
    return pages
