"""ContentCache contract: a miss is None, a put round-trips, the latest put wins."""

from __future__ import annotations

from dataclasses import replace

from .builders import cache_entry


def test_a_miss_is_none(cache):
    assert cache.get(cache_entry().url_hash) is None


def test_put_then_get_round_trips_every_field(cache):
    entry = cache_entry()
    cache.put(entry)
    assert cache.get(entry.url_hash) == entry


def test_optional_fields_round_trip_empty(cache):
    entry = replace(cache_entry(etag=None), last_modified=None, links=(), title=None)
    cache.put(entry)
    assert cache.get(entry.url_hash) == entry


def test_a_later_put_replaces_the_entry(cache):
    cache.put(cache_entry())
    newer = replace(cache_entry(), fetched_at=2000.0, etag='"v2"', links=("https://x.org/",))
    cache.put(newer)
    assert cache.get(newer.url_hash) == newer


def test_entries_are_kept_per_url(cache):
    guide, api = cache_entry("guide"), cache_entry("api")
    cache.put(guide)
    cache.put(api)
    assert (cache.get(guide.url_hash), cache.get(api.url_hash)) == (guide, api)
