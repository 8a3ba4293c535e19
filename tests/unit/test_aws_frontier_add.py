"""Adding a page's new links: the conditional puts overlap, each in the caller's
context (the IAM check and the scale harness attribute calls by a context variable)."""

from __future__ import annotations

import contextvars
import threading
import time
from typing import Any

from mdcrawl.adapters.aws.frontier import DynamoDbFrontier
from mdcrawl.models import FrontierItem

CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="")


class SlowTable:
    """BatchGet finds nothing, the order counter counts, each put takes 50 ms."""

    def __init__(self) -> None:
        self.now = self.most = 0
        self.callers: set[str] = set()
        self._lock = threading.Lock()

    def batch_get_item(self, **_: Any) -> dict[str, Any]:
        return {"Responses": {}}

    def update_item(self, **kwargs: Any) -> dict[str, Any]:
        count = next(iter(kwargs["ExpressionAttributeValues"].values()))["N"]
        return {"Attributes": {"next_order": {"N": count}}}

    def put_item(self, **_: Any) -> dict[str, Any]:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.callers.add(CALLER.get())
        time.sleep(0.05)
        with self._lock:
            self.now -= 1
        return {}


class Clock:
    def now(self) -> float:
        return 0.0


def test_new_links_are_put_concurrently_in_order_and_in_the_callers_context() -> None:
    table = SlowTable()
    frontier = DynamoDbFrontier(table, "frontier", Clock())
    items = [FrontierItem(f"http://d.test/{i}", f"{i:04x}") for i in range(40)]
    CALLER.set("orchestrator")
    added = frontier.add("j1", items)
    assert [i.url for i in added] == [i.url for i in items]
    assert [i.order for i in added] == list(range(40))
    assert table.most > 4
    assert table.callers == {"orchestrator"}
