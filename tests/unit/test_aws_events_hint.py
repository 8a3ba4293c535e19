"""DynamoDbEventLog's seq hint: trusted for a burst, read again once it is old (another
writer has most likely taken the next seq by then: a lost conditional put is billed)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from mdcrawl.adapters.aws.events import HINT_FRESH_S, DynamoDbEventLog
from mdcrawl.models import EventType
from mdcrawl.names import Table

from tests.support.aws import moto_clients


class Counted:
    def __init__(self, client: Any) -> None:
        self.client, self.calls = client, Counter()

    def __getattr__(self, name: str) -> Any:
        operation = getattr(self.client, name)

        def counted(**kwargs: Any) -> Any:
            self.calls[name] += 1
            return operation(**kwargs)

        counted.__name__ = name
        return counted


@pytest.fixture
def logs():
    with moto_clients() as aws:
        now = [0.0]
        table = aws.names[Table.EVENTS]
        mine = Counted(aws.dynamodb)
        log = DynamoDbEventLog(mine, table, monotonic=lambda: now[0])
        other = DynamoDbEventLog(aws.dynamodb, table)
        yield log, other, mine.calls, now


def test_a_burst_reads_the_last_seq_once(logs) -> None:
    log, _, calls, _ = logs
    seqs = [log.append("j", EventType.PAGE_DONE, {}, 1.0).seq for _ in range(4)]
    assert seqs == [1, 2, 3, 4]
    assert calls == Counter(query=1, put_item=4)


def test_an_old_hint_is_read_again_before_writing_not_after_losing(logs) -> None:
    log, other, calls, now = logs
    log.append("j", EventType.PAGE_DONE, {}, 1.0)
    other.append("j", EventType.JOB_PROGRESS, {}, 2.0)  # takes seq 2 meanwhile
    now[0] += HINT_FRESH_S + 0.1
    calls.clear()
    assert log.append("j", EventType.PAGE_DONE, {}, 3.0).seq == 3
    assert calls == Counter(query=1, put_item=1)  # no lost put


def test_a_fresh_hint_that_was_taken_still_ends_gap_free(logs) -> None:
    log, other, _, _ = logs
    log.append("j", EventType.PAGE_DONE, {}, 1.0)
    other.append("j", EventType.JOB_PROGRESS, {}, 2.0)
    assert log.append("j", EventType.PAGE_DONE, {}, 3.0).seq == 3
    assert [e.seq for e in other.after("j")] == [1, 2, 3]
