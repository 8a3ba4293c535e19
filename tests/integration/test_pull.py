"""`mdcrawl pull`: a job finished by `mdcrawl serve` (the same REST API as the AWS stack)
brought into the local library, searchable as if crawled here."""

from __future__ import annotations

from pathlib import Path

import pytest
from mdcrawl.cli import main
from mdcrawl.library import Library

from tests.integration.test_serve_support import create, run_serve, wait_status
from tests.support.server import serve_directory
from tests.support.sites import require_site


def test_pull_a_served_job_into_the_library(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = require_site("requests")
    cache = tmp_path / "laptop"
    with serve_directory(site.root) as docs, run_serve(tmp_path / "state") as server:
        client = server.client()
        job_id = create(client, docs.url(site.start))["job_id"]
        done = wait_status(client, job_id, "completed", "failed")
        assert done["status"] == "completed", done["error"]
        pull = ["pull", job_id, "--api", server.base_url, "--cache-dir", str(cache)]
        assert main([*pull, "--api-key", "wrong"]) == 1
        assert "refused the key" in capsys.readouterr().err
        assert main([*pull, "--api-key", server.api_key, "--label", "team"]) == 0
        assert (
            main(
                [
                    "pull",
                    "nope",
                    "--api",
                    server.base_url,
                    "--api-key",
                    server.api_key,
                    "--cache-dir",
                    str(cache),
                ]
            )
            == 1
        )
    library = Library(cache)
    [snapshot] = library.snapshots()
    assert (snapshot.version, snapshot.job_id) == ("team", job_id)
    assert snapshot.pages == done["counters"]["processed"] - done["counters"]["failed"]
    hits = library.search("upload a multipart encoded file")
    assert hits and hits[0].url.startswith(docs.url("/"))
    page = library.read_page(docs.url("/user/quickstart.html"), section="Custom Headers")
    assert page is not None and page.markdown.startswith("## Custom Headers\n")
