"""The WebSocket protocol over real local stores and a recording pusher."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mdcrawl.adapters.local import open_local_stores
from mdcrawl.adapters.local.stores import LocalStores
from mdcrawl.errors import StoreError
from mdcrawl.models import CrawlOptions, EventType, Job, JobStatus
from mdcrawl.service.deps import WsDeps
from mdcrawl.service.ws import (
    FRAME_BYTES,
    EventCursor,
    FanOut,
    Verdict,
    events_in,
    fan_out,
    frames,
    on_connect,
    on_disconnect,
    on_message,
    resume_after,
)

from tests.unit.test_service_support import RecordingPusher, make_ws


@dataclass
class Ws:
    stores: LocalStores
    pusher: RecordingPusher
    deps: WsDeps

    def job(self, job_id: str = "job-1", owner: str = "alice") -> str:
        job = Job(job_id=job_id, url="https://d.example.com/", options=CrawlOptions(), owner=owner)
        assert self.stores.jobs.create(job)
        return job_id

    def emit(self, job_id: str, type: EventType = EventType.JOB_PROGRESS, **data: object):
        event = self.stores.events.append(job_id, type, dict(data), ts=1.0)
        return event

    def connect(self, connection_id: str, owner: str = "alice") -> None:
        assert on_connect(connection_id, owner, self.deps)

    def send(self, connection_id: str, message: object) -> list[dict]:
        body = message if isinstance(message, str) else json.dumps(message)
        return on_message(connection_id, body, self.deps)

    def seqs(self, connection_id: str) -> list[int]:
        return [e["seq"] for e in self.events(connection_id)]

    def events(self, connection_id: str) -> list[dict]:
        return [e for m in self.pusher.sent.get(connection_id, []) for e in events_in(m)]


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Ws]:
    stores = open_local_stores(tmp_path)
    pusher = RecordingPusher()
    yield Ws(stores, pusher, make_ws(stores, pusher))
    stores.close()


def subscribe(job_id: str, after: int = 0) -> dict:
    return {"action": "subscribe", "job_id": job_id, "after": after}


def test_connect_records_the_owner_and_refuses_no_owner(ws: Ws) -> None:
    assert on_connect("c1", "alice", ws.deps) is True
    assert on_connect("c2", "", ws.deps) is False

    assert ws.stores.connections.owner("c1") == "alice"
    assert ws.stores.connections.owner("c2") is None


def test_subscribe_sends_the_backlog_then_live_events(ws: Ws) -> None:
    job_id = ws.job()
    ws.emit(job_id, EventType.JOB_STARTED)
    ws.emit(job_id, n=1)
    ws.connect("c1")

    replies = ws.send("c1", subscribe(job_id))
    live = ws.emit(job_id, EventType.PAGE_DONE, url="https://d.example.com/a")
    outcome = fan_out([live], ws.deps)

    assert replies[0] == {"type": "subscribed", "job_id": job_id, "after": 0}
    (backlog,) = replies[1:]  # one frame holds the whole (short) backlog
    assert backlog["type"] == "events" and backlog["job_id"] == job_id
    assert [m["type"] for m in backlog["events"]] == ["job.started", "job.progress"]
    assert replies == ws.pusher.sent["c1"][:2]  # everything went through the pusher
    assert ws.seqs("c1") == [1, 2, 3]
    assert ws.pusher.sent["c1"][-1] == {"type": "events", "job_id": job_id,
                                        "events": [live.to_dict()]}
    assert outcome == FanOut(delivered=1)


def test_reconnect_with_after_receives_exactly_what_was_missed(ws: Ws) -> None:
    job_id = ws.job()
    ws.connect("c1")
    ws.send("c1", subscribe(job_id))
    for n in range(3):
        fan_out([ws.emit(job_id, n=n)], ws.deps)
    on_disconnect("c1", ws.deps)
    missed = [ws.emit(job_id, n=n) for n in range(3, 6)]
    assert fan_out(missed, ws.deps) == FanOut()  # nobody listening

    ws.connect("c2")
    ws.send("c2", subscribe(job_id, after=ws.seqs("c1")[-1]))

    assert ws.seqs("c1") == [1, 2, 3]
    assert ws.seqs("c2") == [4, 5, 6]


def test_the_backlog_pages_through_a_long_log(ws: Ws, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("mdcrawl.service.ws.BACKLOG_PAGE", 3)
    job_id = ws.job()
    for n in range(7):
        ws.emit(job_id, n=n)
    ws.connect("c1")

    ws.send("c1", subscribe(job_id, after=1))

    assert ws.seqs("c1") == [2, 3, 4, 5, 6, 7]
    assert len(ws.pusher.sent["c1"]) == 1 + 2  # subscribed, then one frame per page


@pytest.mark.parametrize("job_owner", ["bob", None])
def test_a_foreign_or_unknown_job_is_not_found_and_not_subscribed(
    ws: Ws, job_owner: str | None
) -> None:
    job_id = ws.job(owner=job_owner) if job_owner else "no-such-job"
    if job_owner:
        ws.emit(job_id, secret="bob's progress")
    ws.connect("c1", owner="alice")

    replies = ws.send("c1", subscribe(job_id))

    assert [r["type"] for r in replies] == ["error"]
    assert replies[0]["error"]["code"] == "not_found"
    assert "bob" not in json.dumps(ws.pusher.sent)
    assert ws.stores.connections.for_job(job_id) == []


def test_an_unknown_connection_cannot_subscribe(ws: Ws) -> None:
    job_id = ws.job()

    replies = ws.send("ghost", subscribe(job_id))

    assert replies[0]["error"]["code"] == "not_found"
    assert ws.stores.connections.for_job(job_id) == []


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("{nope", "invalid_json"),
        ("[" * 10000, "invalid_json"),
        ("[1, 2]", "invalid_json"),
        (json.dumps({"action": "dance"}), "unknown_action"),
        (json.dumps({}), "unknown_action"),
        (json.dumps({"action": "subscribe"}), "invalid_input"),
        (json.dumps({"action": "subscribe", "job_id": "j", "after": -1}), "invalid_input"),
        (json.dumps({"action": "subscribe", "job_id": "j", "after": "3"}), "invalid_input"),
        (json.dumps({"action": "subscribe", "job_id": 7}), "invalid_input"),
        (json.dumps({"action": "subscribe", "job_id": "j", "extra": 1}), "invalid_input"),
        (json.dumps({"action": "ping", "pad": "x" * 40000}), "message_too_large"),
    ],
)
def test_bad_messages_get_an_error_and_change_nothing(ws: Ws, body: str, code: str) -> None:
    ws.job("j")
    ws.connect("c1")

    replies = ws.send("c1", body)

    assert [r["error"]["code"] for r in replies] == [code]
    assert ws.stores.connections.for_job("j") == []


def test_ping_gets_a_pong(ws: Ws) -> None:
    ws.connect("c1")

    assert ws.send("c1", {"action": "ping"}) == [{"type": "pong"}]


def test_fan_out_removes_a_gone_connection_and_serves_the_others(ws: Ws) -> None:
    job_id = ws.job()
    for connection_id in ("c1", "c2", "c3"):
        ws.connect(connection_id)
        ws.send(connection_id, subscribe(job_id))
    ws.pusher.gone.add("c2")

    outcome = fan_out([ws.emit(job_id, n=1)], ws.deps)
    again = fan_out([ws.emit(job_id, n=2)], ws.deps)

    assert outcome == FanOut(delivered=2, removed=1)
    assert again == FanOut(delivered=2)  # c2 was forgotten, not tried again
    assert ws.seqs("c1") == ws.seqs("c3") == [1, 2]
    assert ws.stores.connections.owner("c2") is None


def test_a_failing_push_does_not_stop_the_fan_out(ws: Ws, monkeypatch) -> None:
    job_id = ws.job()
    for connection_id in ("c1", "c2"):
        ws.connect(connection_id)
        ws.send(connection_id, subscribe(job_id))
    real_push = ws.pusher.push

    def flaky(connection_id: str, message: dict) -> bool:
        if connection_id == "c1":
            raise StoreError("throttled")
        return real_push(connection_id, message)

    monkeypatch.setattr(ws.pusher, "push", flaky)

    assert fan_out([ws.emit(job_id)], ws.deps) == FanOut(delivered=1, failed=1)
    assert ws.stores.connections.for_job(job_id) == ["c1", "c2"]  # c1 only missed one


def test_a_connection_gone_during_its_backlog_is_forgotten(ws: Ws) -> None:
    job_id = ws.job()
    ws.emit(job_id)
    ws.connect("c1")
    ws.pusher.gone.add("c1")

    assert ws.send("c1", subscribe(job_id)) == []
    assert ws.stores.connections.for_job(job_id) == []
    assert ws.stores.connections.owner("c1") is None


def test_a_terminal_event_comes_last_in_the_backlog(ws: Ws) -> None:
    job_id = ws.job()
    ws.emit(job_id, EventType.JOB_STARTED)
    ws.emit(job_id, EventType.PAGE_DONE)
    ws.stores.jobs.transition(job_id, [JobStatus.QUEUED], JobStatus.COMPLETED)
    ws.emit(job_id, EventType.JOB_COMPLETED, pages=1)
    ws.connect("c1")

    ws.send("c1", subscribe(job_id))

    types = [m["type"] for m in ws.events("c1")]
    assert types == ["job.started", "page.done", "job.completed"]


def test_the_subscribe_race_is_resolved_by_the_client_cursor(ws: Ws) -> None:
    """An event appended while a subscriber reads its backlog may reach it twice (live and
    in the backlog), or live ahead of the backlog's end; EventCursor delivers each once."""
    job_id = ws.job()
    first = ws.emit(job_id, n=1)
    ws.connect("c1")
    ws.send("c1", subscribe(job_id))
    second = ws.emit(job_id, n=2)
    fan_out([second], ws.deps)
    ws.send("c1", subscribe(job_id, after=first.seq))  # a resync that overlaps live delivery
    third = ws.emit(job_id, n=3)
    fan_out([third], ws.deps)

    cursor = EventCursor()
    delivered = [e["seq"] for e in ws.events("c1") if cursor.accept(e) is Verdict.DELIVER]
    assert ws.seqs("c1") == [1, 2, 2, 3]
    assert delivered == [1, 2, 3]


def test_the_cursor_asks_for_a_resync_on_a_gap() -> None:
    cursor = EventCursor(last=4)

    assert cursor.accept({"seq": 6}) is Verdict.RESYNC
    assert cursor.last == 4
    assert cursor.accept({"seq": 4}) is Verdict.DROP
    assert cursor.accept({"type": "pong"}) is Verdict.DROP
    assert cursor.accept({"seq": 5}) is Verdict.DELIVER and cursor.last == 5


def test_live_events_go_out_in_seq_order_in_frames_once_each(ws: Ws) -> None:
    """A stream batch may hold a job's events out of order or twice (a redelivery):
    subscribers get each once, in seq order, batched."""
    job_id, other = ws.job(), ws.job("job-2")
    ws.connect("c1")
    ws.send("c1", subscribe(job_id))
    events = [ws.emit(job_id, n=n) for n in range(5)] + [ws.emit(other, n=9)]
    outcome = fan_out([events[3], events[0], events[5], events[1], events[4], events[2],
                       events[0]], ws.deps)

    assert ws.seqs("c1") == [1, 2, 3, 4, 5]
    assert len(ws.pusher.sent["c1"]) == 2  # subscribed, one frame
    assert outcome == FanOut(delivered=1)


def test_frames_stay_under_the_message_limit_and_keep_every_event(ws: Ws) -> None:
    job_id = ws.job()
    events = [ws.emit(job_id, EventType.PAGE_DONE, url="https://d.example.com/" + "x" * 900,
                      n=n) for n in range(500)]

    out = frames(job_id, events)

    assert 4 <= len(out) <= 8  # ~500 KB of events: a handful of frames, not 500 messages
    assert all(len(json.dumps(f, separators=(",", ":")).encode()) <= FRAME_BYTES for f in out)
    assert all(len(json.dumps(f).encode()) <= 128 * 1024 for f in out)  # API Gateway's limit
    assert [e["seq"] for f in out for e in events_in(f)] == list(range(1, 501))


def test_a_client_drops_the_rest_of_a_frame_after_a_gap() -> None:
    cursor = EventCursor(last=1)
    frame = {"type": "events", "job_id": "j", "events": [{"seq": 3}, {"seq": 4}]}

    verdicts = [cursor.accept(e) for e in events_in(frame)]

    assert verdicts[0] is Verdict.RESYNC and cursor.last == 1
    assert events_in({"type": "pong"}) == [] and events_in({"seq": 2}) == [{"seq": 2}]


def test_a_replay_short_of_time_says_where_to_resume_and_unbounded_ones_never_do(
    ws: Ws, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mdcrawl.service.ws.BACKLOG_PAGE", 3)
    job_id = ws.job()
    for n in range(7):
        ws.emit(job_id, n=n)
    ws.connect("c1")
    # Asked before each page and each frame: time for two pages of one frame each, then
    # too little for a third.
    left = iter([30.0, 30.0, 30.0, 30.0, 1.0])

    replies = on_message("c1", json.dumps(subscribe(job_id)), ws.deps, lambda: next(left))

    assert ws.seqs("c1") == [1, 2, 3, 4, 5, 6]
    assert replies[-1] == {"type": "resume", "job_id": job_id, "after": 6}
    assert resume_after(replies[-1]) == 6 and resume_after(replies[0]) is None
    ws.send("c1", subscribe(job_id, after=6))  # the client goes on, in a new invocation
    assert ws.seqs("c1") == [1, 2, 3, 4, 5, 6, 7]
    assert not any(m["type"] == "resume" for m in ws.pusher.sent["c1"][-2:])
