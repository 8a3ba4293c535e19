"""The pages of an assembly rendered in forked children give the bytes one process gives."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO, cast

from mdcrawl.adapters.local import parallel
from mdcrawl.adapters.local.parallel import MIN_PAGES, forked_page_map
from mdcrawl.agent_outputs import CHUNKS, LLMS_FULL, AgentOutputs, write_agent_outputs
from mdcrawl.assemble import write_outputs
from mdcrawl.models import CrawlOptions, Job, PageRecord, PageStatus

ROOT = "https://docs.example.org/api/"
PAGES = MIN_PAGES + 37  # enough to fork, and not a multiple of the task size


class Files:
    """An opener keeping each output's bytes."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    @contextmanager
    def open(self, name: str) -> Iterator[BinaryIO]:
        parts: list[bytes] = []

        class Stream:
            def write(self, data: bytes) -> int:
                parts.append(bytes(data))
                return len(data)

        yield cast(BinaryIO, Stream())
        self.data[name] = b"".join(parts)


def _markdown(i: int) -> str:
    after = (i + 1) % PAGES
    return (
        f"# Item {i}\n\n"
        "A line of navigation chrome that every page repeats.\n\n"
        f"## Methods\n\n### fn call_{i}(&self)\n\n"
        f"See [next](https://docs.example.org/api/item{after}.html#methods), "
        f"[a method](https://docs.example.org/api/item{after}.html#method.call_{after}), "
        f"[nowhere](https://docs.example.org/api/item{after}.html#no-such-id) and "
        f"[itself](https://docs.example.org/api/item{i}.html).\n\n"
        "```rust\n# [not a link](https://docs.example.org/api/item0.html)\n```\n"
        + ("<div>raw</div>\n" if i % 5 == 0 else "")
    )


def _pages() -> list[PageRecord]:
    return [
        PageRecord(
            job_id="j",
            url=f"{ROOT}item{i}.html",
            url_hash=f"h{i}",
            status=PageStatus.OK,
            order=i,
            markdown_key=f"k{i}",
            title=f"Item {i}",
            words=3 + i,
            content_hash=f"c{i}",
        )
        for i in range(PAGES)
    ]


def _assemble(
    page_map: object, page_files: object = None, readers: Path | None = None
) -> tuple[object, dict[str, bytes]]:
    job = Job(job_id="j", url=ROOT, options=CrawlOptions(), started_at=1_700_000_000.0)
    files = Files()
    markdown = {f"k{i}": _markdown(i) for i in range(PAGES)}
    anchors = {f"k{i}": {f"method.call_{i}": [f"fn call_{i}(&self)", 0]} for i in range(PAGES)}

    def read(key: str) -> str:
        if readers is not None:  # which processes read (rendered) pages, and slowly
            with readers.open("a") as log:
                log.write(f"{os.getpid()}\n")
            time.sleep(0.001)
        return markdown[key]

    result = write_outputs(
        job, _pages(), read, files.open, anchors.get, page_map, None, page_files  # type: ignore[arg-type]
    )
    return result, files.data


def _slow(index: int) -> tuple[int, int]:
    time.sleep(0.002)  # slow enough for a child to claim runs before this process has all
    return index, os.getpid()


def _in_a_fresh_interpreter(check: str) -> None:
    """Run this module's ``check`` in a new interpreter. The map forks only from a
    process running one thread, and a test process may hold threads other tests left
    running: there it would render everything here and these checks would prove nothing."""
    code = f"from tests.unit.test_parallel_assembly import {check}; {check}()"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True, timeout=300)


def test_forked_rendering_writes_the_same_bytes_and_report() -> None:
    _in_a_fresh_interpreter("check_forked_rendering")


def test_pages_render_in_children_in_page_order() -> None:
    _in_a_fresh_interpreter("check_children_render_in_page_order")


def test_forked_agent_outputs_are_the_same_bytes() -> None:
    _in_a_fresh_interpreter("check_forked_agent_outputs")


def check_forked_rendering() -> None:
    assert parallel._may_fork()  # else the forked run below would be the serial one
    serial_result, serial = _assemble(None)
    with tempfile.TemporaryDirectory() as tmp:
        readers = Path(tmp) / "readers"
        forked_result, forked = _assemble(forked_page_map(2), readers=readers)
        assert len(set(readers.read_text().split())) > 1  # this process and children
    assert forked == serial
    assert forked_result == serial_result
    # the fixture exercises what a child must carry back: warnings of every kind it has
    assert set(serial_result.warnings) >= {"repeated_lines", "raw_html_lines", "unresolved_links"}


def check_children_render_in_page_order() -> None:
    answers = list(forked_page_map(3)(_slow, PAGES))
    assert [i for i, _ in answers] == list(range(PAGES))
    pids = {pid for _, pid in answers}
    assert os.getpid() in pids and len(pids) > 1  # rendered here and elsewhere


def test_pages_files_written_where_rendered_are_the_same_bytes() -> None:
    _in_a_fresh_interpreter("check_page_files_written_where_rendered")


def check_page_files_written_where_rendered() -> None:
    """Each page's file written by the process rendering it (a child's files never come
    back): on disk, the same bytes as one process writes; the result names them all."""
    assert parallel._may_fork()
    serial_result, serial = _assemble(None)
    with tempfile.TemporaryDirectory() as tmp:
        readers, root = Path(tmp) / "readers", Path(tmp) / "out"

        @contextmanager
        def on_disk(name: str) -> Iterator[BinaryIO]:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            with (root / name).open("wb") as stream:
                yield stream

        result, others = _assemble(forked_page_map(2), on_disk, readers)
        assert len(set(readers.read_text().split())) > 1
        pages = {f"pages/{p.name}": p.read_bytes() for p in (root / "pages").iterdir()}
    assert result == serial_result
    assert {**others, **pages} == serial
    assert not set(others) & set(pages)  # page files never went through open_output
    assert set(pages) <= set(result.names)  # type: ignore[attr-defined]


def test_a_childs_failure_is_raised_here() -> None:
    _in_a_fresh_interpreter("check_a_childs_failure_is_raised_here")


def check_a_childs_failure_is_raised_here() -> None:
    here = os.getpid()

    def render(index: int) -> int:
        time.sleep(0.002)
        if os.getpid() != here:
            raise ValueError(f"page {index} cannot be rendered")
        return index

    try:
        list(forked_page_map(2)(render, PAGES))
    except ValueError as failure:
        assert "cannot be rendered" in str(failure)
    else:
        raise AssertionError("the child's failure was lost")
    assert not multiprocessing.active_children()


def test_a_child_that_dies_fails_the_map() -> None:
    _in_a_fresh_interpreter("check_a_child_that_dies_fails_the_map")


def check_a_child_that_dies_fails_the_map() -> None:
    """A child killed with a run claimed (out of memory): no page may go missing."""
    here = os.getpid()

    def render(index: int) -> int:
        time.sleep(0.002)
        if os.getpid() != here:
            os.kill(os.getpid(), signal.SIGKILL)
        return index

    try:
        list(forked_page_map(2)(render, PAGES))
    except RuntimeError as failure:
        assert "died" in str(failure)
    else:
        raise AssertionError("a run went missing without an error")
    assert not multiprocessing.active_children()


def test_a_map_left_early_leaves_no_child() -> None:
    _in_a_fresh_interpreter("check_a_map_left_early_leaves_no_child")


def check_a_map_left_early_leaves_no_child() -> None:
    answers = forked_page_map(2)(_slow, PAGES)
    assert next(answers)[0] == 0
    answers.close()  # type: ignore[attr-defined]
    assert not multiprocessing.active_children()


def test_few_pages_or_one_worker_render_here() -> None:
    here = os.getpid()
    assert {pid for _, pid in forked_page_map(2)(lambda i: (i, os.getpid()), 3)} == {here}
    one = forked_page_map(1)(lambda i: (i, os.getpid()), PAGES)
    assert {pid for _, pid in one} == {here}


def _agent_outputs(page_map: object) -> dict[str, bytes]:
    job = Job(job_id="j", url=ROOT, options=CrawlOptions(), started_at=1_700_000_000.0)
    files = Files()
    markdown = {f"k{i}": _markdown(i) for i in range(PAGES)}
    write_agent_outputs(
        job, _pages(), markdown.__getitem__, files.open, 2_000, None, page_map  # type: ignore[arg-type]
    )
    return files.data


def check_forked_agent_outputs() -> None:
    assert parallel._may_fork()
    serial = _agent_outputs(None)
    assert _agent_outputs(forked_page_map(2)) == serial
    assert {LLMS_FULL, CHUNKS} <= set(serial)
    assert len(serial[LLMS_FULL].split(b"\nSource: ")) == PAGES + 1


def test_a_process_running_other_threads_renders_here() -> None:
    """No fork while another thread runs (serve, a program calling the API from a
    thread): a lock it held would stay held in the child."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        pids = {pid for _, pid in forked_page_map(2)(lambda i: (i, os.getpid()), PAGES)}
    finally:
        stop.set()
        other.join()
    assert pids == {os.getpid()}


def test_agent_outputs_made_in_the_rendering_pass_are_the_same_bytes() -> None:
    _in_a_fresh_interpreter("check_agent_outputs_in_the_rendering_pass")


def _shared_title_pages() -> tuple[list[PageRecord], dict[str, str]]:
    """Pages that all say "API" in their h1 and title (the assembly retitles them from
    their h2; llms-full.txt and chunks.jsonl keep what was stored)."""
    pages = [replace(p, title="API") for p in _pages()]
    markdown = {f"k{i}": "# API\n\n" + _markdown(i).replace("# Item", "## Item", 1) for i in range(PAGES)}
    return pages, markdown


def _rendered_apart(page_map: object) -> dict[str, bytes]:
    job = Job(job_id="j", url=ROOT, options=CrawlOptions(), started_at=1_700_000_000.0)
    pages, markdown = _shared_title_pages()
    files = Files()
    write_outputs(job, pages, markdown.__getitem__, files.open, None, page_map)  # type: ignore[arg-type]
    write_agent_outputs(job, pages, markdown.__getitem__, files.open, 2_000, None, page_map)  # type: ignore[arg-type]
    return files.data


def _rendered_together(page_map: object) -> dict[str, bytes]:
    job = Job(job_id="j", url=ROOT, options=CrawlOptions(), started_at=1_700_000_000.0)
    pages, markdown = _shared_title_pages()
    files = Files()
    agent = AgentOutputs(job, pages)
    with agent.streams(files.open):
        write_outputs(job, pages, markdown.__getitem__, files.open, None, page_map, agent)  # type: ignore[arg-type]
    agent.finish(markdown.__getitem__, files.open, 2_000)
    return files.data


def check_agent_outputs_in_the_rendering_pass() -> None:
    assert parallel._may_fork()
    apart = _rendered_apart(None)
    assert b"title: \"Item 1\"" in apart["pages/0002-item1.md"]  # retitled in its file
    assert b"\n# API\n\nSource: " in apart[LLMS_FULL]  # as stored in llms-full.txt
    assert _rendered_together(None) == apart
    assert _rendered_together(forked_page_map(2)) == apart
