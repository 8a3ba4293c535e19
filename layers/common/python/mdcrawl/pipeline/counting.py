"""Counter bumps summed in memory and written once: a processor batch's pages
(``process_batch.py``) and an orchestrator batch's outcomes (``orchestrate.py``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..models import Counters


class SummedCounters:
    """A JobStore whose ``add_counters`` only sums, per job, until ``flush``."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._pending: dict[str, Counter[str]] = {}

    def add_counters(self, job_id: str, **deltas: int) -> Counters:
        self._pending.setdefault(job_id, Counter()).update(deltas)
        return Counters()  # read by neither step: no request for it

    def flush(self) -> None:
        pending, self._pending = self._pending, {}
        for job_id, deltas in pending.items():
            nonzero = {name: n for name, n in deltas.items() if n}
            if nonzero:
                self._inner.add_counters(job_id, **nonzero)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
