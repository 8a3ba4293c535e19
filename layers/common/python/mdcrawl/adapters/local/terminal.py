"""Progress on the terminal: a rich bar on a TTY, plain periodic lines otherwise, or nothing.

Every reporter takes the job as stored (its counters are the truth, whichever process
updated them) and draws it; the runtime calls ``update`` a few times a second.
"""

from __future__ import annotations

import time
from typing import TextIO

from ...models import Job

PLAIN_EVERY_S = 5.0


def make_reporter(
    stream: TextIO, quiet: bool = False
) -> QuietReporter | PlainReporter | RichReporter:
    if quiet:
        return QuietReporter()
    if stream.isatty():
        return RichReporter(stream)
    return PlainReporter(stream)


def status_line(job: Job, now: float) -> str:
    c = job.counters
    elapsed = max(now - (job.started_at or now), 0.0)
    rate = c.crawled / elapsed if elapsed > 0 else 0.0
    cached = f" ({c.cached} cached)" if c.cached else ""
    trouble = f", {c.failed} failed" if c.failed else ""
    trouble += f", {c.skipped} skipped" if c.skipped else ""
    return (
        f"{c.discovered} found, {c.crawled} fetched{cached}, {c.processed} converted{trouble}"
        f" · {rate:.1f} pages/s · {_clock(elapsed)} of {_clock(job.options.budget_s)}"
    )


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


class QuietReporter:
    def update(self, job: Job) -> None:
        pass

    def close(self) -> None:
        pass


class PlainReporter:
    """One line every few seconds, for logs and pipes (no cursor tricks)."""

    def __init__(self, stream: TextIO, every_s: float = PLAIN_EVERY_S) -> None:
        self._stream, self._every_s = stream, every_s
        self._last = 0.0
        self._job: Job | None = None

    def update(self, job: Job) -> None:
        self._job = job
        now = time.time()
        if job.started_at and now - self._last >= self._every_s:
            self._last = now
            print(f"mdcrawl: {status_line(job, now)}", file=self._stream, flush=True)

    def close(self) -> None:
        pass


class RichReporter:
    """A live bar: converted pages out of those found, with the counts beside it."""

    def __init__(self, stream: TextIO) -> None:
        # rich is imported here, for a terminal only: a quiet or piped run (scripts, CI,
        # a cached re-crawl's start-up) does without its ~20 ms of imports.
        try:  # the `cli` extra: the Lambda layer leaves rich (and pygments, markdown-it) out
            from rich.console import Console
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn
        except ModuleNotFoundError as missing:  # pragma: no cover - only on a bare install
            hint = "mdcrawl's command line needs its cli extra: pip install 'mdcrawl[cli]'"
            raise SystemExit(hint) from missing
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]crawling"),
            BarColumn(),
            TextColumn("{task.fields[line]}"),
            console=Console(file=stream),
            transient=True,
        )
        self._task = self._progress.add_task("crawl", total=None, line="starting…")
        self._progress.start()

    def update(self, job: Job) -> None:
        c = job.counters
        total = max(c.discovered, 1)
        self._progress.update(
            self._task,
            total=total,
            completed=min(c.processed + c.skipped + c.failed, total),
            line=status_line(job, time.time()),
        )

    def close(self) -> None:
        self._progress.stop()
