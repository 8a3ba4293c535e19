"""ConnectionStore contract: connections, their owner, and who follows which job."""

from __future__ import annotations


def test_add_records_the_owner(connections):
    connections.add("c1", "alice", 10.0)
    assert connections.owner("c1") == "alice"
    assert connections.owner("c2") is None


def test_subscribers_of_a_job(connections):
    for cid in ("c2", "c1", "c3"):
        connections.add(cid, "alice", 10.0)
    connections.subscribe("c1", "job-1")
    connections.subscribe("c2", "job-1")
    connections.subscribe("c3", "job-2")
    assert sorted(connections.for_job("job-1")) == ["c1", "c2"]
    assert connections.for_job("job-2") == ["c3"]
    assert connections.for_job("job-3") == []


def test_subscribing_twice_lists_the_connection_once(connections):
    connections.add("c1", "alice", 10.0)
    connections.subscribe("c1", "job-1")
    connections.subscribe("c1", "job-1")
    assert connections.for_job("job-1") == ["c1"]


def test_one_connection_can_follow_several_jobs(connections):
    connections.add("c1", "alice", 10.0)
    connections.subscribe("c1", "job-1")
    connections.subscribe("c1", "job-2")
    assert (connections.for_job("job-1"), connections.for_job("job-2")) == (["c1"], ["c1"])


def test_remove_forgets_the_connection_and_its_subscriptions(connections):
    for cid in ("c1", "c2"):
        connections.add(cid, "alice", 10.0)
        connections.subscribe(cid, "job-1")
    connections.subscribe("c1", "job-2")
    connections.remove("c1")
    assert connections.owner("c1") is None
    assert connections.for_job("job-1") == ["c2"]
    assert connections.for_job("job-2") == []


def test_removing_an_unknown_connection_is_harmless(connections):
    connections.remove("ghost")
    assert connections.owner("ghost") is None
