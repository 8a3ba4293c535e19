"""Frontier contract: dedupe by url_hash, discovery order, leases, attempts, reclaim."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from mdcrawl.models import UrlState

from .builders import item

JOB = "job-1"


def hashes(items):
    return [i.url_hash for i in items]


def is_increasing(numbers):
    return all(a < b for a, b in zip(numbers, numbers[1:], strict=False))


def test_add_returns_the_new_items_as_stored_pending_and_ordered(frontier):
    added = frontier.add(JOB, [item("a", order=99), item("b", order=5)])
    assert hashes(added) == hashes([item("a"), item("b")])
    assert all(i.state == UrlState.PENDING and i.attempts == 0 for i in added)
    assert is_increasing([i.order for i in added])  # the caller's orders are ignored


def test_add_drops_known_hashes_within_a_call_and_across_calls(frontier):
    frontier.add(JOB, [item("a"), item("b"), item("a")])
    again = frontier.add(JOB, [item("b"), item("c"), item("a")])
    assert hashes(again) == hashes([item("c")])
    assert hashes(frontier.items(JOB)) == hashes([item("a"), item("b"), item("c")])


def test_order_keeps_increasing_across_calls(frontier):
    first = frontier.add(JOB, [item("a"), item("b")])
    frontier.add(JOB, [item("a")])
    second = frontier.add(JOB, [item("c"), item("d")])
    assert is_increasing([i.order for i in first + second])


def test_jobs_have_separate_queues(frontier):
    frontier.add(JOB, [item("a")])
    assert hashes(frontier.add("job-2", [item("a")])) == hashes([item("a")])
    assert len(frontier.items(JOB)) == 1


def test_items_keep_what_was_added(frontier):
    original = replace(item("a", depth=3), parent="https://docs.example.com/", sitemap_rank=4)
    frontier.add(JOB, [original])
    (stored,) = frontier.items(JOB)
    assert replace(stored, order=0) == replace(original, order=0)


def test_claim_leases_lowest_order_first_up_to_the_limit(frontier):
    frontier.add(JOB, [item("a"), item("b")])
    frontier.add(JOB, [item("c")])
    claimed = frontier.claim(JOB, limit=2, lease_s=30.0, now=100.0)
    assert hashes(claimed) == hashes([item("a"), item("b")])
    assert all(i.state == UrlState.LEASED and i.lease_expires == 130.0 for i in claimed)
    assert hashes(frontier.claim(JOB, limit=5, lease_s=30.0, now=100.0)) == hashes([item("c")])
    assert frontier.claim(JOB, limit=5, lease_s=30.0, now=100.0) == []


def test_counts_cover_every_state(frontier):
    frontier.add(JOB, [item("a"), item("b"), item("c")])
    frontier.claim(JOB, limit=2, lease_s=30.0, now=0.0)
    frontier.finish(JOB, item("a").url_hash, UrlState.DONE)
    assert frontier.counts(JOB) == {
        UrlState.PENDING: 1,
        UrlState.LEASED: 1,
        UrlState.DONE: 1,
        UrlState.FAILED: 0,
        UrlState.SKIPPED: 0,
    }


def test_finish_only_from_leased_and_only_once(frontier):
    frontier.add(JOB, [item("a"), item("b")])
    frontier.claim(JOB, limit=1, lease_s=30.0, now=0.0)
    assert frontier.finish(JOB, item("a").url_hash, UrlState.SKIPPED, "not_html") is True
    assert frontier.finish(JOB, item("a").url_hash, UrlState.DONE) is False
    assert frontier.finish(JOB, item("b").url_hash, UrlState.DONE) is False  # still pending
    stored = {i.url_hash: i for i in frontier.items(JOB)}
    assert (stored[item("a").url_hash].state, stored[item("a").url_hash].reason) == (
        UrlState.SKIPPED,
        "not_html",
    )
    assert stored[item("b").url_hash].state == UrlState.PENDING


def test_finish_refuses_a_state_that_is_not_final(frontier):
    frontier.add(JOB, [item("a")])
    frontier.claim(JOB, limit=1, lease_s=30.0, now=0.0)
    with pytest.raises(ValueError):
        frontier.finish(JOB, item("a").url_hash, UrlState.PENDING)


def test_release_returns_to_pending_until_attempts_reach_the_cap(frontier):
    frontier.add(JOB, [item("a")])
    states = []
    for _ in range(3):
        frontier.claim(JOB, limit=1, lease_s=30.0, now=0.0)
        states.append(frontier.release(JOB, item("a").url_hash, max_attempts=3, reason="timeout"))
    (stored,) = frontier.items(JOB)
    assert states == [UrlState.PENDING, UrlState.PENDING, UrlState.FAILED]
    assert (stored.state, stored.attempts, stored.reason) == (UrlState.FAILED, 3, "timeout")
    assert frontier.claim(JOB, limit=1, lease_s=30.0, now=0.0) == []


def test_a_released_item_is_claimed_again_in_its_discovery_place(frontier):
    frontier.add(JOB, [item("a"), item("b")])
    frontier.claim(JOB, limit=1, lease_s=30.0, now=0.0)
    frontier.release(JOB, item("a").url_hash, max_attempts=3, reason="503")
    again = frontier.claim(JOB, limit=2, lease_s=30.0, now=0.0)
    assert hashes(again) == hashes([item("a"), item("b")])
    assert again[0].attempts == 1


def test_release_of_an_item_that_is_not_leased_changes_nothing(frontier):
    frontier.add(JOB, [item("a")])
    frontier.claim(JOB, limit=1, lease_s=30.0, now=0.0)
    frontier.finish(JOB, item("a").url_hash, UrlState.DONE)
    assert frontier.release(JOB, item("a").url_hash, max_attempts=3, reason="x") == UrlState.DONE
    (stored,) = frontier.items(JOB)
    assert (stored.state, stored.attempts) == (UrlState.DONE, 0)


def test_reclaim_expired_returns_only_expired_leases(frontier):
    frontier.add(JOB, [item("a"), item("b"), item("c")])
    frontier.claim(JOB, limit=1, lease_s=10.0, now=0.0)  # a: expires at 10
    frontier.claim(JOB, limit=1, lease_s=100.0, now=0.0)  # b: expires at 100
    assert frontier.reclaim_expired(JOB, now=50.0, max_attempts=3) == 1
    stored = {i.url_hash: i for i in frontier.items(JOB)}
    assert (stored[item("a").url_hash].state, stored[item("a").url_hash].attempts) == (
        UrlState.PENDING,
        1,
    )
    assert stored[item("b").url_hash].state == UrlState.LEASED
    assert stored[item("c").url_hash].state == UrlState.PENDING


def test_reclaim_counts_an_attempt_and_fails_at_the_cap(frontier):
    frontier.add(JOB, [item("a")])
    for now in (0.0, 100.0):
        frontier.claim(JOB, limit=1, lease_s=10.0, now=now)
        frontier.reclaim_expired(JOB, now=now + 50.0, max_attempts=2)
    (stored,) = frontier.items(JOB)
    assert (stored.state, stored.attempts) == (UrlState.FAILED, 2)


def test_a_reclaimed_lease_can_no_longer_be_finished_by_its_late_worker(frontier):
    frontier.add(JOB, [item("a")])
    frontier.claim(JOB, limit=1, lease_s=10.0, now=0.0)
    frontier.reclaim_expired(JOB, now=20.0, max_attempts=3)
    assert frontier.finish(JOB, item("a").url_hash, UrlState.DONE) is False


@pytest.mark.concurrent
def test_concurrent_claims_never_hand_out_an_item_twice(frontier):
    frontier.add(JOB, [item(f"p{n}") for n in range(40)])
    with ThreadPoolExecutor(8) as pool:
        batches = list(
            pool.map(lambda _: frontier.claim(JOB, limit=3, lease_s=30.0, now=0.0), range(16))
        )
    claimed = [h for batch in batches for h in hashes(batch)]
    assert len(claimed) == len(set(claimed)) == 40


@pytest.mark.concurrent
def test_concurrent_adds_store_each_url_once_with_distinct_orders(frontier):
    batches = [[item(f"p{n}") for n in range(start, start + 10)] for start in range(0, 50, 5)]
    with ThreadPoolExecutor(8) as pool:
        added = [i for batch in pool.map(lambda b: frontier.add(JOB, b), batches) for i in batch]
    stored = frontier.items(JOB)
    assert sorted(hashes(added)) == sorted(hashes(stored))
    assert len(stored) == 55
    assert is_increasing([i.order for i in stored])


def test_a_lease_is_still_held_at_the_instant_it_expires(frontier):
    frontier.add(JOB, [item("a")])
    frontier.claim(JOB, limit=1, lease_s=10.0, now=0.0)
    assert frontier.reclaim_expired(JOB, now=10.0, max_attempts=3) == 0
    assert frontier.reclaim_expired(JOB, now=10.5, max_attempts=3) == 1


def test_overflow_counts_each_url_once_per_job_across_calls(frontier):
    frontier.note_overflow(JOB, ["h1", "h2", "h1"])
    frontier.note_overflow(JOB, ["h2", "h3"])
    frontier.note_overflow("job-2", ["h1"])
    frontier.note_overflow(JOB, [])
    assert frontier.overflow(JOB) == 3
    assert frontier.overflow("job-2") == 1
    assert frontier.overflow("job-3") == 0
