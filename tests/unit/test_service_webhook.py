"""POST /jobs with a webhook: refused where no webhooks are sent, SSRF-checked where
they are, stored on the job, and its delivery shown by GET /jobs/{id}."""

from __future__ import annotations

from pathlib import Path

from mdcrawl.service import ServiceLimits

from tests.unit.test_service_support import make_api

START = "https://docs.example.com/guide/"
HOOK = "https://hooks.example.com/mdcrawl"


def test_a_service_that_sends_no_webhooks_refuses_one(tmp_path: Path) -> None:
    api = make_api(tmp_path)
    response = api.call("POST", "/jobs", {"url": START, "webhook": HOOK}, owner="alice")
    assert response.status == 400 and "webhook" in response.json()["error"]["message"]
    api.stores.close()


def test_a_webhook_is_checked_stored_and_its_delivery_shown(tmp_path: Path) -> None:
    api = make_api(tmp_path, ServiceLimits(webhooks=True))
    for bad in ("http://169.254.169.254/latest/", "ftp://hooks.example.com/x", "http://10.0.0.1/"):
        response = api.call("POST", "/jobs", {"url": START, "webhook": bad}, owner="alice")
        assert response.status == 400, bad
    response = api.call("POST", "/jobs", {"url": START, "webhook": HOOK}, owner="alice")
    assert response.status == 202
    job_id = response.json()["job_id"]
    assert api.stores.jobs.get(job_id).webhook == HOOK
    assert response.json()["webhook_delivery"] is None
    api.stores.jobs.update(job_id, webhook_delivery={"ok": True, "attempts": 1})
    view = api.call("GET", f"/jobs/{job_id}", owner="alice").json()
    assert view["webhook_delivery"] == {"ok": True, "attempts": 1}
    assert "webhook" not in view  # the URL (it may hold a token) is not echoed
    api.stores.close()
