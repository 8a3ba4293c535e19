"""What a warm processor container need not ask AWS again for every page.

The process step reads, per page, the job's options (``generator_rules``) and the job's
site template (``jobs/{id}/template.json``). Neither changes once it exists: options are
fixed at creation, and the template is written once, from a sample fixed by discovery
order (pipeline/templating.py; two workers settling at once write the same document).
Each read is a request and, on Lambda, 10-20 ms of a 1,769 MB function waiting.
These wrappers keep what they have found for the container's life; an absent template
is asked again (it appears when the sample is complete).
"""

from __future__ import annotations

from typing import Any

from ...models import Job
from ...names import BlobPrefix

_MAX_KEPT = 1000  # jobs a container remembers (it serves one job at a time, mostly)


class SettledTemplates:
    """A BlobStore whose reads of a job's template (``jobs/{id}/<name>``) are kept once
    found."""

    def __init__(self, inner: Any, name: str) -> None:
        self._inner, self._suffix = inner, "/" + name
        self._found: dict[str, bytes] = {}

    def get(self, key: str) -> bytes | None:
        if not (key.startswith(BlobPrefix.JOBS.value) and key.endswith(self._suffix)):
            data: bytes | None = self._inner.get(key)
            return data
        if key in self._found:
            return self._found[key]
        data = self._inner.get(key)
        if data is not None:
            _keep(self._found, key, data)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class JobOptionsOnce:
    """A JobStore for the process step, which reads a job only for its options: the
    first read is kept (its counters and status go stale; nothing here reads them)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._jobs: dict[str, Job] = {}

    def get(self, job_id: str) -> Job | None:
        if job_id in self._jobs:
            return self._jobs[job_id]
        job: Job | None = self._inner.get(job_id)
        if job is not None:
            _keep(self._jobs, job_id, job)
        return job

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _keep(kept: dict[str, Any], key: str, value: Any) -> None:
    if len(kept) >= _MAX_KEPT:
        kept.clear()
    kept[key] = value
