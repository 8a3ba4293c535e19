"""The REST API over real local stores: every route, every error, ownership, idempotency."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from mdcrawl.errors import StoreError
from mdcrawl.models import EventType, JobStatus, PageRecord, PageStatus
from mdcrawl.names import job_key
from mdcrawl.options import OptionLimits, Profile
from mdcrawl.service import ServiceLimits

from tests.unit.test_service_support import Api, make_api

START = "https://docs.example.com/guide/"


@pytest.fixture
def api(tmp_path: Path) -> Api:
    made = make_api(tmp_path)
    yield made
    made.stores.close()


def submit(api: Api, owner: str = "alice", **body: object) -> dict:
    response = api.call("POST", "/jobs", {"url": START, **body}, owner=owner)
    assert response.status == 202, response.json()
    return response.json()


def error_of(response) -> tuple[int, str]:
    return response.status, response.json()["error"]["code"]


def complete(api: Api, job_id: str) -> None:
    assert api.stores.jobs.transition(job_id, [JobStatus.QUEUED], JobStatus.COMPLETED)


# --- POST /jobs ---------------------------------------------------------------------


def test_post_creates_seeds_and_starts_the_job(api: Api) -> None:
    response = api.call("POST", "/jobs", {"url": START, "max_pages": 10, "include": ["/guide/*"]})

    assert response.status == 202
    view = response.json()
    job_id = view["job_id"]
    assert response.headers["Location"] == f"/jobs/{job_id}"
    assert view["status"] == "queued"
    assert view["options"]["max_pages"] == 10 and view["options"]["include"] == ["/guide/*"]
    assert view["links"] == {
        "self": f"/jobs/{job_id}",
        "events": f"/jobs/{job_id}/events",
        "cancel": f"/jobs/{job_id}/cancel",
        "result": None,
    }
    assert api.starter.calls == [job_id]
    stored = api.stores.jobs.get(job_id)
    assert stored is not None and stored.owner == "alice" and stored.url == START
    assert [item.url for item in api.stores.frontier.items(job_id)] == [START]


def test_options_map_onto_crawl_options_and_defaults_respect_the_caps(tmp_path: Path) -> None:
    api = make_api(tmp_path, ServiceLimits(OptionLimits.of(Profile.SERVE, max_pages=100, budget_s=60)))
    body = {"url": START, "no_cache": True, "ignore_robots": True, "max_age_s": 5, "budget_s": 30}
    job_id = api.call("POST", "/jobs", body).json()["job_id"]

    options = api.stores.jobs.get(job_id).options
    assert options.max_pages == 100  # the default lowered to this service's cap
    assert options.budget_s == 30.0 and options.max_age_s == 5.0
    assert options.use_cache is False and options.respect_robots is False
    api.stores.close()


def test_links_carry_the_stage_prefix(api: Api) -> None:
    from mdcrawl.service import ApiRequest
    from mdcrawl.service.rest import handle_request

    raw = json.dumps({"url": START}).encode()
    response = handle_request(
        ApiRequest("POST", "/jobs", body=raw, owner="a", base="/prod"), api.deps
    )
    assert response.headers["Location"].startswith("/prod/jobs/")


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{not json", 400, "invalid_json"),
        (b"\xff\xfe\x00", 400, "invalid_json"),
        (b"[" * 5000, 400, "invalid_json"),
        (b"", 400, "invalid_json"),
        (b"[]", 400, "invalid_input"),
        (b'"https://docs.example.com/"', 400, "invalid_input"),
        ({}, 400, "invalid_input"),
        ({"url": START, "colour": "red"}, 400, "invalid_input"),
        ({"url": START, "max_pages": "10"}, 400, "invalid_input"),
        ({"url": START, "max_pages": True}, 400, "invalid_input"),
        ({"url": START, "max_pages": 0}, 400, "invalid_input"),
        ({"url": START, "max_pages": 10**9}, 400, "invalid_input"),
        ({"url": START, "budget_s": -1}, 400, "invalid_input"),
        (b'{"url": "https://d.example.com/", "budget_s": 1e999}', 400, "invalid_input"),
        ({"url": START, "concurrency": 1000}, 400, "invalid_input"),
        ({"url": START, "include": "not-a-list"}, 400, "invalid_input"),
        ({"url": START, "include": [""]}, 400, "invalid_input"),
        ({"url": START, "ignore_robots": True}, 400, "invalid_input"),
        ({"url": START, "job_id": "../../etc"}, 400, "invalid_input"),
        ({"url": 42}, 400, "invalid_input"),
        ({"url": ""}, 400, "invalid_input"),
        ({"url": "ftp://docs.example.com/"}, 400, "invalid_input"),
        ({"url": "javascript:alert(1)"}, 400, "invalid_input"),
        ({"url": "docs.example.com/guide"}, 400, "invalid_input"),
        ({"url": "https://exa mple.com/"}, 400, "invalid_input"),
        ({"url": "https://" + "a" * 3000 + ".com/"}, 400, "invalid_input"),
        ({"url": "http://127.0.0.1:8000/"}, 400, "unsafe_url"),
        ({"url": "http://10.1.2.3/docs/"}, 400, "unsafe_url"),
        ({"url": "http://169.254.169.254/latest/meta-data/"}, 400, "unsafe_url"),
        ({"url": "http://[::1]/"}, 400, "unsafe_url"),
        ({"url": "https://internal.example.com/docs/"}, 400, "unsafe_url"),
        ({"url": "http://metadata.example.com/"}, 400, "unsafe_url"),
    ],
)
def test_bad_bodies_are_400_and_store_nothing(api: Api, body, status: int, code: str) -> None:
    response = api.call("POST", "/jobs", body)

    assert error_of(response) == (status, code)
    assert response.json()["error"]["message"]
    assert api.count("jobs") == 0 and api.count("frontier") == 0
    assert api.starter.calls == []


def test_validation_errors_name_every_bad_field(api: Api) -> None:
    response = api.call("POST", "/jobs", {"url": START, "max_pages": 0, "colour": "red"})

    fields = {d["field"] for d in response.json()["error"]["details"]}
    assert fields == {"max_pages", "colour"}
    assert "colour: unknown field" in response.json()["error"]["message"]


def test_a_body_over_the_cap_is_413_and_stores_nothing(tmp_path: Path) -> None:
    api = make_api(tmp_path, ServiceLimits(max_body_bytes=1024))
    response = api.call("POST", "/jobs", {"url": START, "include": ["/x"] * 40, "pad": "y" * 2000})

    assert error_of(response) == (413, "payload_too_large")
    assert api.count("jobs") == 0
    api.stores.close()


def test_a_body_that_is_not_json_by_content_type_is_415(api: Api) -> None:
    response = api.call("POST", "/jobs", {"url": START}, headers={"content-type": "text/plain"})

    assert error_of(response) == (415, "unsupported_media_type")
    ok = api.call(
        "POST", "/jobs", {"url": START}, headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert ok.status == 202


def test_an_idempotency_key_makes_a_retried_post_return_the_same_job(api: Api) -> None:
    headers = {"Idempotency-Key": "retry-me-1"}
    first = api.call("POST", "/jobs", {"url": START}, headers=headers)
    again = api.call("POST", "/jobs", {"url": START}, headers={"idempotency-key": "retry-me-1"})

    assert first.status == again.status == 202
    assert first.json()["job_id"] == again.json()["job_id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    assert api.count("jobs") == 1
    # The retry re-asks the starter (the first POST may have died before starting);
    # the starter itself refuses a second execution for one job id.
    assert api.starter.calls == [first.json()["job_id"]] * 2


def test_a_replay_of_a_running_job_does_not_start_it_again(api: Api) -> None:
    headers = {"Idempotency-Key": "k-running"}
    job_id = api.call("POST", "/jobs", {"url": START}, headers=headers).json()["job_id"]
    api.stores.jobs.transition(job_id, [JobStatus.QUEUED], JobStatus.RUNNING)

    again = api.call("POST", "/jobs", {"url": START}, headers=headers)

    assert again.status == 202 and again.json()["status"] == "running"
    assert api.starter.calls == [job_id]


def test_the_same_idempotency_key_of_two_owners_makes_two_jobs(api: Api) -> None:
    headers = {"Idempotency-Key": "shared-key"}
    alice = api.call("POST", "/jobs", {"url": START}, headers=headers, owner="alice").json()
    bob = api.call("POST", "/jobs", {"url": START}, headers=headers, owner="bob").json()

    assert alice["job_id"] != bob["job_id"]
    assert api.count("jobs") == 2


def test_an_idempotency_key_reused_for_another_request_is_409(api: Api) -> None:
    headers = {"Idempotency-Key": "once"}
    api.call("POST", "/jobs", {"url": START}, headers=headers)

    other_url = api.call("POST", "/jobs", {"url": "https://other.example.com/"}, headers=headers)
    other_opts = api.call("POST", "/jobs", {"url": START, "max_pages": 3}, headers=headers)

    assert error_of(other_url) == (409, "idempotency_mismatch")
    assert error_of(other_opts) == (409, "idempotency_mismatch")
    assert api.count("jobs") == 1


def test_a_bad_idempotency_key_is_400(api: Api) -> None:
    response = api.call("POST", "/jobs", {"url": START}, headers={"Idempotency-Key": "a b"})

    assert error_of(response) == (400, "invalid_input")
    assert api.count("jobs") == 0


def test_a_client_chosen_id_is_used_and_makes_the_post_idempotent(api: Api) -> None:
    first = submit(api, job_id="my-crawl-0001")
    again = submit(api, job_id="my-crawl-0001")

    assert first["job_id"] == again["job_id"] == "my-crawl-0001"
    assert api.count("jobs") == 1


def test_a_client_chosen_id_held_by_another_owner_is_409_and_reveals_nothing(api: Api) -> None:
    submit(api, owner="alice", job_id="my-crawl-0001")

    response = api.call("POST", "/jobs", {"url": START, "job_id": "my-crawl-0001"}, owner="bob")

    assert error_of(response) == (409, "conflict")
    assert "alice" not in response.body.decode()
    assert api.stores.jobs.get("my-crawl-0001").owner == "alice"


# --- auth, routing -------------------------------------------------------------------


def test_no_owner_is_401(api: Api) -> None:
    assert error_of(api.call("GET", "/jobs", owner="")) == (401, "unauthorized")
    assert error_of(api.call("POST", "/jobs", {"url": START}, owner="")) == (401, "unauthorized")
    assert api.count("jobs") == 0


@pytest.mark.parametrize("path", ["/", "/nope", "/jobs/x/y/z", "/jobs/abc/results", "//jobs"])
def test_unknown_routes_are_404(api: Api, path: str) -> None:
    assert error_of(api.call("GET", path)) == (404, "not_found")


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("DELETE", "/jobs", "POST, GET"),
        ("PUT", "/jobs/abc", "GET"),
        ("GET", "/jobs/abc/cancel", "POST"),
        ("POST", "/jobs/abc/events", "GET"),
    ],
)
def test_wrong_methods_are_405_with_allow(api: Api, method: str, path: str, allow: str) -> None:
    response = api.call(method, path)

    assert error_of(response) == (405, "method_not_allowed")
    assert response.headers["Allow"] == allow


def test_a_trailing_slash_is_the_same_route(api: Api) -> None:
    assert api.call("GET", "/jobs/").status == 200


# --- GET /jobs, GET /jobs/{id} ------------------------------------------------------


def test_list_shows_only_the_owners_jobs_newest_first(api: Api) -> None:
    first = submit(api, owner="alice")["job_id"]
    second = submit(api, owner="alice")["job_id"]
    submit(api, owner="bob")

    listed = api.call("GET", "/jobs").json()["jobs"]

    assert {j["job_id"] for j in listed} == {first, second}
    assert len(api.call("GET", "/jobs", query={"limit": "1"}).json()["jobs"]) == 1


@pytest.mark.parametrize("limit", ["0", "-1", "abc", "101", "1.5", ""])
def test_list_rejects_a_bad_limit(api: Api, limit: str) -> None:
    assert error_of(api.call("GET", "/jobs", query={"limit": limit})) == (400, "invalid_input")


def test_get_shows_status_counters_and_truncation(api: Api) -> None:
    job_id = submit(api)["job_id"]
    api.stores.jobs.add_counters(job_id, crawled=3, failed=1)
    api.stores.jobs.update(job_id, truncated=True, left=7)

    view = api.call("GET", f"/jobs/{job_id}").json()

    assert view["counters"]["crawled"] == 3 and view["counters"]["failed"] == 1
    assert view["counters"]["discovered"] == 1  # the seed
    assert view["truncated"] is True and view["left"] == 7
    assert view["links"]["result"] is None


def test_a_completed_job_links_every_result_format(api: Api) -> None:
    job_id = submit(api)["job_id"]
    complete(api, job_id)

    result = api.call("GET", f"/jobs/{job_id}").json()["links"]["result"]

    assert result == {
        f: f"/jobs/{job_id}/result?format={f}"
        for f in ("markdown", "llms", "manifest", "pages", "llms_full", "chunks", "parts")
    }


@pytest.mark.parametrize(
    ("method", "suffix"),
    [("GET", ""), ("GET", "/result"), ("POST", "/cancel"), ("GET", "/events")],
)
def test_a_foreign_job_is_404_like_an_unknown_one(api: Api, method: str, suffix: str) -> None:
    job_id = submit(api, owner="alice")["job_id"]
    complete(api, job_id)

    foreign = api.call(method, f"/jobs/{job_id}{suffix}", owner="bob")
    unknown = api.call(method, f"/jobs/does-not-exist{suffix}", owner="bob")
    weird = api.call(method, f"/jobs/{'x' * 500}{suffix}", owner="bob")

    assert error_of(foreign) == error_of(unknown) == error_of(weird) == (404, "not_found")
    assert api.stores.jobs.get(job_id).status == JobStatus.COMPLETED  # bob's cancel did nothing


# --- GET /jobs/{id}/result ----------------------------------------------------------


def test_result_redirects_to_the_blob_link(api: Api) -> None:
    job_id = submit(api)["job_id"]
    api.stores.blobs.put(job_key(job_id, "docs.md"), b"# Docs\n")
    api.stores.blobs.put(job_key(job_id, "llms.txt"), b"# llms\n")
    complete(api, job_id)

    markdown = api.call("GET", f"/jobs/{job_id}/result")
    llms = api.call("GET", f"/jobs/{job_id}/result", query={"format": "llms"})

    assert markdown.status == 302 and markdown.headers["Cache-Control"] == "no-store"
    assert markdown.headers["Location"] == api.stores.blobs.link(job_key(job_id, "docs.md"))
    assert llms.headers["Location"] == api.stores.blobs.link(job_key(job_id, "llms.txt"))


def test_result_follows_the_keys_the_finalizer_recorded(api: Api) -> None:
    job_id = submit(api)["job_id"]
    api.stores.blobs.put("elsewhere/manifest.jsonl", b"{}\n")
    api.stores.jobs.update(job_id, result_keys={"manifest": "elsewhere/manifest.jsonl"})
    complete(api, job_id)

    response = api.call("GET", f"/jobs/{job_id}/result", query={"format": "manifest"})

    assert response.headers["Location"] == api.stores.blobs.link("elsewhere/manifest.jsonl")


@pytest.mark.parametrize("status", [JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.FAILED])
def test_result_of_a_job_not_completed_is_409(api: Api, status: JobStatus) -> None:
    job_id = submit(api)["job_id"]
    api.stores.jobs.transition(job_id, [JobStatus.QUEUED], status)

    assert error_of(api.call("GET", f"/jobs/{job_id}/result")) == (409, "not_ready")


def test_result_of_a_missing_blob_is_404(api: Api) -> None:
    job_id = submit(api)["job_id"]
    complete(api, job_id)

    assert error_of(api.call("GET", f"/jobs/{job_id}/result")) == (404, "not_found")


def test_result_rejects_an_unknown_format(api: Api) -> None:
    job_id = submit(api)["job_id"]
    complete(api, job_id)
    response = api.call("GET", f"/jobs/{job_id}/result", query={"format": "pdf"})

    assert error_of(response) == (400, "invalid_input")


def test_pages_zip_is_built_once_from_the_ok_pages_in_order(api: Api) -> None:
    job_id = submit(api)["job_id"]
    for order, (name, status) in enumerate(
        [
            ("intro.md", PageStatus.OK),
            ("broken.md", PageStatus.FAILED),
            ("api/ref.md", PageStatus.OK),
        ]
    ):
        key = job_key(job_id, f"pages/{name}")
        api.stores.blobs.put(key, f"# {name}\n".encode())
        api.stores.pages.put(
            PageRecord(
                job_id, f"https://d/{name}", f"h{order}", status, order=order, markdown_key=key
            )
        )
    complete(api, job_id)

    response = api.call("GET", f"/jobs/{job_id}/result", query={"format": "pages"})

    zip_key = job_key(job_id, "pages.zip")
    assert response.status == 302
    assert response.headers["Location"] == api.stores.blobs.link(zip_key)
    archive = zipfile.ZipFile(io.BytesIO(api.stores.blobs.get(zip_key)))
    assert archive.namelist() == ["intro.md", "api/ref.md"]
    assert archive.read("api/ref.md") == b"# api/ref.md\n"
    # Built once: a second request reuses the blob (a page added now would not appear).
    api.stores.blobs.put(zip_key, b"sentinel")
    api.call("GET", f"/jobs/{job_id}/result", query={"format": "pages"})
    assert api.stores.blobs.get(zip_key) == b"sentinel"


def test_parts_zip_holds_the_index_then_the_parts_in_order(api: Api) -> None:
    job_id = submit(api, max_tokens=1000)["job_id"]
    assert api.call("GET", f"/jobs/{job_id}").json()["options"]["max_tokens"] == 1000
    complete(api, job_id)
    missing = api.call("GET", f"/jobs/{job_id}/result", query={"format": "parts"})
    assert missing.status == 404  # finalize wrote no parts (yet)
    for name in ("docs-parts.md", "docs-002.md", "docs-001.md"):
        api.stores.blobs.put(job_key(job_id, name), f"<{name}>".encode())

    response = api.call("GET", f"/jobs/{job_id}/result", query={"format": "parts"})

    assert response.status == 302
    archive = zipfile.ZipFile(io.BytesIO(api.stores.blobs.get(job_key(job_id, "parts.zip"))))
    assert archive.namelist() == ["docs-parts.md", "docs-001.md", "docs-002.md"]
    assert archive.read("docs-002.md") == b"<docs-002.md>"


# --- POST /jobs/{id}/cancel ---------------------------------------------------------


def test_cancel_of_a_queued_job_stops_it_now(api: Api) -> None:
    job_id = submit(api)["job_id"]

    response = api.call("POST", f"/jobs/{job_id}/cancel")

    assert response.status == 202
    assert response.json()["status"] == "cancelled"
    assert [e.type for e in api.stores.events.after(job_id)] == [EventType.JOB_CANCELLED]


def test_cancel_of_a_running_job_asks_the_orchestrator(api: Api) -> None:
    job_id = submit(api)["job_id"]
    api.stores.jobs.transition(job_id, [JobStatus.QUEUED], JobStatus.RUNNING)

    view = api.call("POST", f"/jobs/{job_id}/cancel").json()

    assert view["status"] == "running" and view["cancel_requested"] is True


@pytest.mark.parametrize("status", [JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED])
def test_cancel_of_a_terminal_job_is_409(api: Api, status: JobStatus) -> None:
    job_id = submit(api)["job_id"]
    api.stores.jobs.transition(job_id, [JobStatus.QUEUED], status)

    assert error_of(api.call("POST", f"/jobs/{job_id}/cancel")) == (409, "conflict")
    assert api.stores.jobs.get(job_id).cancel_requested is False


# --- GET /jobs/{id}/events ----------------------------------------------------------


def test_events_page_through_the_log(api: Api) -> None:
    job_id = submit(api)["job_id"]
    for n in range(5):
        api.stores.events.append(job_id, EventType.JOB_PROGRESS, {"n": n}, ts=float(n))

    first = api.call("GET", f"/jobs/{job_id}/events", query={"limit": "2"}).json()
    rest = api.call(
        "GET", f"/jobs/{job_id}/events", query={"after": str(first["next_after"])}
    ).json()

    assert [e["seq"] for e in first["events"]] == [1, 2] and first["more"] is True
    assert [e["seq"] for e in rest["events"]] == [3, 4, 5] and rest["more"] is False
    assert rest["events"][0] == {
        "type": "job.progress",
        "job_id": job_id,
        "seq": 3,
        "ts": 2.0,
        "data": {"n": 2},
    }
    empty = api.call("GET", f"/jobs/{job_id}/events", query={"after": "5"}).json()
    assert empty == {"events": [], "next_after": 5, "more": False}


@pytest.mark.parametrize(
    "query",
    [{"after": "-1"}, {"after": "x"}, {"limit": "0"}, {"limit": "100000"}, {"after": "9" * 30}],
)
def test_events_reject_bad_paging(api: Api, query: dict[str, str]) -> None:
    job_id = submit(api)["job_id"]

    assert error_of(api.call("GET", f"/jobs/{job_id}/events", query=query)) == (
        400,
        "invalid_input",
    )


# --- storage failures -----------------------------------------------------------------


def test_a_store_error_is_503_with_a_retry_hint(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise StoreError("table unavailable")

    monkeypatch.setattr(api.stores.jobs, "get", broken)

    response = api.call("GET", "/jobs/abcdefgh")

    assert error_of(response) == (503, "unavailable")
    assert response.headers["Retry-After"] == "2"
    assert "table" not in response.body.decode()  # internal detail not leaked
