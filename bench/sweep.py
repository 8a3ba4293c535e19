"""Same input, same output, on every docs site we have: a crawl's outputs must not
depend on timing, on an interruption, or on how the crawl before it went.

    python -m bench.sweep [--site django aeson ...] [--max-pages 800] [--no-generator-rules]

For each site of ``tests/support/sites.py`` (its Debian package installed), served on
127.0.0.1 with 2 ms of latency, five crawls:

- **reference**: concurrency 8, a cache of its own;
- **re-crawl**: the same command again (same folder, same cache): its outputs must be
  the reference's, and the last assembly must stand (``docs.md`` not rewritten: the
  output memo found every input unchanged);
- **timing**: concurrency 1, a cache of its own (other arrival orders, other pages
  waiting for the site's template);
- **interrupted**: killed (SIGKILL, the whole process group) halfway through the
  reference's wall time, then the same command again, which resumes it.

Outputs are compared file by file (``changes.md`` aside: it says what changed since the
last crawl; the manifest's ``from_cache`` column aside: it says which pages this job
read from the cache, and a resumed job read those fetched before the kill). This sweep
found three such bugs (timing-dependent cache keys of pages a generator rule recognises,
deferred pages' own copies, and the URLs left past the page cap counted in one run's
memory). Prints a line per site; exits 1 when any output differed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.server import serve_directory
from tests.support.sites import SITES

MDCRAWL = str(Path(sys.executable).with_name("mdcrawl"))
LATENCY = 0.002
_FROM_CACHE = re.compile(rb'"from_cache": (?:true|false), ')


def crawl_command(
    url: str, out: Path, cache: Path, max_pages: int, concurrency: int, extra: list[str]
) -> list[str]:
    return [
        MDCRAWL, "crawl", url, "--out", str(out), "--cache-dir", str(cache), "--quiet",
        "--max-pages", str(max_pages), "--budget", "3000", "--concurrency", str(concurrency),
        *extra,
    ]  # fmt: skip


def run(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.decode()[-300:]}")
    return time.perf_counter() - started


def killed_then_resumed(command: list[str], after_s: float) -> None:
    """The crawl killed with its whole process group (workers, forkserver) after
    ``after_s``, then the same command again."""
    crawl = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)  # fmt: skip
    time.sleep(after_s)
    if crawl.poll() is None:
        os.killpg(crawl.pid, signal.SIGKILL)
    crawl.wait()
    run(command)


def outputs(folder: Path) -> dict[str, str]:
    """Each output file's digest, by its path in the folder (see the module docstring)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name == "changes.md":
            continue
        data = path.read_bytes()
        if path.name == "manifest.jsonl":
            data = _FROM_CACHE.sub(b"", data)
        found[str(path.relative_to(folder))] = hashlib.sha256(data).hexdigest()
    return found


def differences(reference: dict[str, str], other: dict[str, str]) -> list[str]:
    return sorted(name for name in reference.keys() | other.keys()
                  if reference.get(name) != other.get(name))  # fmt: skip


def sweep_site(name: str, max_pages: int, extra: list[str]) -> list[str]:
    """The site's line, and the names of the checks whose outputs differed."""
    site = SITES[name]
    with tempfile.TemporaryDirectory() as tmp, serve_directory(site.root, LATENCY) as server:
        work, url = Path(tmp), server.url(site.start)

        def command(case: str, concurrency: int = 8) -> list[str]:
            cache = work / f"{case}-cache"
            return crawl_command(url, work / case, cache, max_pages, concurrency, extra)

        wall = run(command("reference"))
        reference = outputs(work / "reference")
        written = (work / "reference" / "docs.md").stat().st_mtime_ns
        run(command("reference"))
        stood = (work / "reference" / "docs.md").stat().st_mtime_ns == written
        again = differences(reference, outputs(work / "reference"))
        run(command("timing", concurrency=1))
        timing = differences(reference, outputs(work / "timing"))
        killed_then_resumed(command("interrupted"), wall / 2)
        interrupted = differences(reference, outputs(work / "interrupted"))
    failed = [check for check, diff in (("re-crawl", again), ("timing", timing),
                                        ("interrupted", interrupted)) if diff]  # fmt: skip
    line = (
        f"{name:14s} {sum(n.startswith('pages/') for n in reference):5d} pages  "
        f"fresh {wall:5.1f} s  "
        f"re-crawl {_said(again)}{'' if stood else ' (assembled again)'}  "
        f"timing {_said(timing)}  interrupted at {wall / 2:.1f} s {_said(interrupted)}"
    )
    if not stood:
        failed.append("assembly memo")
    return [line, *failed]


def _said(diff: list[str]) -> str:
    return "same" if not diff else f"DIFFERS ({len(diff)} files: {', '.join(diff[:3])})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", nargs="+", choices=sorted(SITES))
    parser.add_argument("--max-pages", type=int, default=800)
    parser.add_argument(
        "--no-generator-rules",
        action="store_true",
        help="the generic engine alone: every page waits for the site's learned template",
    )
    args = parser.parse_args()
    extra = ["--no-generator-rules"] if args.no_generator_rules else []
    names = args.site or [n for n, s in SITES.items() if (s.root / s.start.lstrip("/")).is_file()]
    failures = 0
    for name in names:
        line, *failed = sweep_site(name, args.max_pages, extra)
        print(line, flush=True)
        failures += bool(failed)
    print(f"{len(names) - failures} of {len(names)} sites: outputs independent of timing, "
          "interruption and the crawl before")  # fmt: skip
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
