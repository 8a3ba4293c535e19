"""Helpers for the `mdcrawl serve` tests (no tests here): the real server as a child
process on 127.0.0.1, an HTTP client for it, and waiting for a job to reach a state."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

from tests.support.children import die_with_parent

API_KEY = "test-key-0123456789"
START_TIMEOUT_S = 60.0
WAIT_TIMEOUT_S = 120.0  # a safety net for a hung crawl, never a performance claim
T = TypeVar("T")


@dataclass
class ServeProcess:
    proc: subprocess.Popen[str]
    base_url: str
    api_key: str
    log: Path

    def client(self, **headers: str) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, headers={"x-api-key": self.api_key, **headers})

    @property
    def ws_url(self) -> str:
        return self.base_url.replace("http://", "ws://") + f"/?api_key={self.api_key}"

    def kill(self) -> None:
        """kill -9 the server and its conversion workers: nothing gets to clean up."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> int:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
        return self.proc.wait(timeout=60)


@contextmanager
def run_serve(
    cache_dir: Path,
    api_key: str = API_KEY,
    allow_hosts: str | None = "127.0.0.0/8",
    extra: tuple[str, ...] = (),
) -> Iterator[ServeProcess]:
    """`mdcrawl serve --port 0` in its own process group; yields once it listens. It crawls
    nothing but ``allow_hosts`` (loopback): no test may send traffic anywhere else. With
    ``allow_hosts=None`` it runs with no flag: its default, public addresses only."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    log = cache_dir / f"serve-{time.time_ns()}.log"
    command = [
        sys.executable,
        "-m",
        "mdcrawl.cli",
        "serve",
        "--port",
        "0",
        "--cache-dir",
        str(cache_dir),
        "--api-key",
        api_key,
        "--verbose",
        *(("--allow-hosts", allow_hosts) if allow_hosts else ()),
        *extra,
    ]
    with log.open("w") as errors:
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
    server = ServeProcess(proc, _listening_url(proc, log), api_key, log)
    try:
        yield server
    finally:
        server.kill()


def _listening_url(proc: subprocess.Popen[str], log: Path) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "mdcrawl serve: http://127.0.0.1:PORT/#key=..."
    if not line.startswith("mdcrawl serve: "):
        proc.kill()
        raise AssertionError(f"serve did not start: {line!r}\n{log.read_text()}")
    return line.split()[2].split("/#")[0]


def wait_for(probe: Callable[[], T | None], what: str, timeout: float = WAIT_TIMEOUT_S) -> T:
    """Poll ``probe`` until it returns something; fail (saying what) past the safety net."""
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        value = probe()
        if value is not None and value is not False:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def job(client: httpx.Client, job_id: str) -> dict[str, Any]:
    response = client.get(f"/jobs/{job_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


def wait_status(client: httpx.Client, job_id: str, *statuses: str) -> dict[str, Any]:
    return wait_for(
        lambda: (view := job(client, job_id))["status"] in statuses and view,
        f"job {job_id} to be {' or '.join(statuses)}",
    )


def all_events(client: httpx.Client, job_id: str) -> list[dict[str, Any]]:
    """Every stored event, paging with next_after as a client would."""
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        page = client.get(f"/jobs/{job_id}/events", params={"after": after, "limit": 50}).json()
        events += page["events"]
        after = page["next_after"]
        if not page["more"]:
            return events


def create(client: httpx.Client, url: str, **options: Any) -> dict[str, Any]:
    response = client.post("/jobs", json={"url": url, **options})
    assert response.status_code == 202, response.text
    return dict(response.json())
