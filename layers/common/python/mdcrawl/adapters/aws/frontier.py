"""DynamoDbFrontier: a job's URL queue in one partition (PK job_id, SK url_hash).

- Dedupe: an item is written with ``attribute_not_exists`` (a known url_hash is skipped).
- Discovery order: one counter item per job (SK ``#order``); a batch reserves a block of
  numbers with a single ``ADD``, so concurrent adders never share a number. A duplicate
  that loses the race wastes its number: orders increase, they may have gaps.
- Claim: the sparse ``pending`` index (``pending_pk`` is set only while pending) lists
  the next items in order; each is leased by a conditional update pending -> leased,
  and an item another worker took first is skipped.
"""

from __future__ import annotations

import contextvars
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from ...errors import Conflict
from ...models import FrontierItem, UrlState
from ...names import FRONTIER_PENDING_INDEX, TTL_ATTRIBUTE
from ...ports import Clock, iter_chunks
from .calls import call, call_if
from .dynamo import Expr, expires_at, from_item, put_if_new, query_all
from .records import frontier_from_attrs, frontier_to_attrs

ORDER_COUNTER_SK = "#order"  # url_hashes are hex, so no item can collide with it
_FINISHED = (UrlState.DONE, UrlState.FAILED, UrlState.SKIPPED)
_BATCH_GET = 100  # BatchGetItem's limit
_PUT_THREADS = 16  # conditional puts in flight while adding a page's new links


class DynamoDbFrontier:
    def __init__(
        self, client: Any, table: str, clock: Clock, retention_s: float | None = None
    ) -> None:
        self._client = client
        self._table = table
        self._clock = clock  # stamps the TTL of new items
        self._retention_s = retention_s

    # --- adding ------------------------------------------------------------------
    def add(self, job_id: str, items: Sequence[FrontierItem]) -> list[FrontierItem]:
        fresh = self._unknown(job_id, _first_of_each(items))
        if not fresh:
            return []
        first = self._reserve_orders(job_id, len(fresh))
        ttl = expires_at(self._clock.now(), self._retention_s)
        stored = [
            replace(item, order=first + i, state=UrlState.PENDING, attempts=0, lease_expires=None)
            for i, item in enumerate(fresh)
        ]
        written = self._put_all(job_id, stored, ttl)
        return [item for item, new in zip(stored, written, strict=True) if new]

    def _put_all(self, job_id: str, items: list[FrontierItem], ttl: int | None) -> list[bool]:
        """The conditional puts, ``_PUT_THREADS`` at a time: a docs page brings a few
        hundred new links at the start of a crawl, and one round trip each, in a row,
        held the orchestrator's loop for seconds per page (10,000 URLs: minutes). The
        condition still decides each one; only the waiting overlaps."""
        if len(items) <= 2:
            return [self._put_new(job_id, item, ttl) for item in items]
        with ThreadPoolExecutor(min(_PUT_THREADS, len(items))) as pool:
            # Each put in a copy of the caller's context (tracing, logging keys).
            futures = [
                pool.submit(contextvars.copy_context().run, self._put_new, job_id, item, ttl)
                for item in items
            ]
            return [future.result() for future in futures]

    def _unknown(self, job_id: str, items: list[FrontierItem]) -> list[FrontierItem]:
        """Drop the items already stored (a cheap batch read before reserving orders,
        so that re-adding known links does not burn order numbers)."""
        known: set[str] = set()
        for chunk in iter_chunks(items, _BATCH_GET):
            keys = [_key(job_id, item.url_hash) for item in chunk]
            known.update(self._existing_hashes(keys))
        return [item for item in items if item.url_hash not in known]

    def _existing_hashes(self, keys: list[dict[str, Any]]) -> set[str]:
        found: set[str] = set()
        request: dict[str, Any] = {
            self._table: {"Keys": keys, "ProjectionExpression": "url_hash", "ConsistentRead": True}
        }
        while request:
            answer = call(self._client.batch_get_item, RequestItems=request)
            rows = answer.get("Responses", {}).get(self._table, [])
            found.update(row["url_hash"]["S"] for row in rows)
            request = answer.get("UnprocessedKeys") or {}
        return found

    def _reserve_orders(self, job_id: str, count: int) -> int:
        """Reserve ``count`` consecutive order numbers; returns the first one (0-based)."""
        expr = Expr()
        answer = call(
            self._client.update_item,
            TableName=self._table,
            Key=_key(job_id, ORDER_COUNTER_SK),
            UpdateExpression=expr.update(add={"next_order": count}),
            ReturnValues="UPDATED_NEW",
            **expr.kwargs(),
        )
        return int(answer["Attributes"]["next_order"]["N"]) - count

    def _put_new(self, job_id: str, item: FrontierItem, ttl: int | None) -> bool:
        attrs = frontier_to_attrs(job_id, item)
        attrs.update(pending_pk=job_id, **{TTL_ATTRIBUTE: ttl})
        return put_if_new(self._client, self._table, attrs, "url_hash")

    # --- leasing -----------------------------------------------------------------
    def claim(self, job_id: str, limit: int, lease_s: float, now: float) -> list[FrontierItem]:
        claimed: list[FrontierItem] = []
        start: dict[str, Any] | None = None
        while len(claimed) < limit:
            hashes, start = self._pending_page(job_id, limit - len(claimed), start)
            for url_hash in hashes:
                item = self._lease(job_id, url_hash, now + lease_s)
                if item is not None:
                    claimed.append(item)
            if start is None:
                break
        return claimed

    def _pending_page(
        self, job_id: str, limit: int, start: dict[str, Any] | None
    ) -> tuple[list[str], dict[str, Any] | None]:
        """The next pending url_hashes in discovery order (the index needs only keys)."""
        expr = Expr()
        extra = {"ExclusiveStartKey": start} if start else {}
        page = call(
            self._client.query,
            TableName=self._table,
            IndexName=FRONTIER_PENDING_INDEX,
            KeyConditionExpression=f"{expr.name('pending_pk')} = {expr.value(job_id)}",
            ScanIndexForward=True,
            Limit=limit,
            **expr.kwargs(),
            **extra,
        )
        hashes = [row["url_hash"]["S"] for row in page.get("Items", [])]
        return hashes, page.get("LastEvaluatedKey")

    def _lease(self, job_id: str, url_hash: str, lease_expires: float) -> FrontierItem | None:
        """pending -> leased, unless someone else got there first (then None)."""
        expr = Expr()
        update = expr.update(
            set_={"state": str(UrlState.LEASED), "lease_expires": lease_expires},
            remove=["pending_pk"],
        )
        condition = f"{expr.name('state')} = {expr.value(str(UrlState.PENDING))}"
        written = self._update_if(job_id, url_hash, expr, update, condition, "ALL_NEW")
        return None if written is None else frontier_from_attrs(written)

    def finish(
        self, job_id: str, url_hash: str, state: UrlState, reason: str | None = None
    ) -> bool:
        if state not in _FINISHED:
            raise ValueError(f"finish() ends a lease as done/failed/skipped, not {state}")
        expr = Expr()
        update = expr.update(set_={"state": str(state), "reason": reason}, remove=["lease_expires"])
        condition = f"{expr.name('state')} = {expr.value(str(UrlState.LEASED))}"
        return self._update_if(job_id, url_hash, expr, update, condition) is not None

    def bump(self, job_id: str, url_hash: str, counter: str) -> int:
        """Add one to a per-URL counter kept on the item (e.g. how often finalize handed
        the page to the processor again); the new value. AWS runtime only."""
        expr = Expr()
        written = self._update_if(
            job_id,
            url_hash,
            expr,
            expr.update(add={counter: 1}),
            "attribute_exists(job_id)",
            returns="UPDATED_NEW",
        )
        if written is None:
            raise Conflict(f"{url_hash} is not in the frontier of job {job_id}")
        return int(written[counter])

    def release(self, job_id: str, url_hash: str, max_attempts: int, reason: str) -> UrlState:
        state = self._give_back(job_id, url_hash, max_attempts, reason, expired_before=None)
        return state if state is not None else self._state(job_id, url_hash)

    def reclaim_expired(self, job_id: str, now: float, max_attempts: int) -> int:
        # No index on leases: a filtered query reads the job's partition. It runs once per
        # orchestrator pass, and the conditions below make a re-leased item safe.
        expr = Expr()
        leased = query_all(
            self._client,
            TableName=self._table,
            KeyConditionExpression=f"{expr.name('job_id')} = {expr.value(job_id)}",
            FilterExpression=(
                f"{expr.name('state')} = {expr.value(str(UrlState.LEASED))} "
                f"AND {expr.name('lease_expires')} < {expr.value(now)}"
            ),
            ProjectionExpression=expr.name("url_hash"),
            ConsistentRead=True,
            **expr.kwargs(),
        )
        hashes = [row["url_hash"] for row in leased]
        given_back = (
            self._give_back(job_id, h, max_attempts, "lease_expired", expired_before=now)
            for h in hashes
        )
        return sum(1 for state in given_back if state is not None)

    def _give_back(
        self,
        job_id: str,
        url_hash: str,
        max_attempts: int,
        reason: str,
        expired_before: float | None,
    ) -> UrlState | None:
        """leased -> failed (attempts used up) or pending (attempts+1). Two conditional
        updates, one per outcome, instead of read-then-write: no lost update, no read.
        None when the item was not leased (or, with ``expired_before``, re-leased since)."""
        for final in (True, False):
            expr = Expr()
            condition = self._release_condition(expr, max_attempts, final, expired_before)
            new_state = UrlState.FAILED if final else UrlState.PENDING
            update = expr.update(
                set_={
                    "state": str(new_state),
                    "reason": reason,
                    "pending_pk": None if final else job_id,
                },
                add={"attempts": 1},
                remove=["lease_expires"],
            )
            if self._update_if(job_id, url_hash, expr, update, condition) is not None:
                return new_state
        return None

    @staticmethod
    def _release_condition(
        expr: Expr, max_attempts: int, final: bool, expired_before: float | None
    ) -> str:
        attempts = expr.name("attempts")  # always stored (0 when added)
        compare = ">=" if final else "<"
        parts = [
            f"{expr.name('state')} = {expr.value(str(UrlState.LEASED))}",
            f"{attempts} {compare} {expr.value(max_attempts - 1)}",
        ]
        if expired_before is not None:
            parts.append(f"{expr.name('lease_expires')} < {expr.value(expired_before)}")
        return " AND ".join(parts)

    def _update_if(
        self,
        job_id: str,
        url_hash: str,
        expr: Expr,
        update: str,
        condition: str,
        returns: str = "NONE",
    ) -> dict[str, Any] | None:
        written = call_if(
            self._client.update_item,
            TableName=self._table,
            Key=_key(job_id, url_hash),
            UpdateExpression=update,
            ConditionExpression=f"attribute_exists({expr.name('url_hash')}) AND {condition}",
            ReturnValues=returns,
            **expr.kwargs(),
        )
        if written is None:
            return None
        return from_item(written.get("Attributes", {}))

    # --- reading -----------------------------------------------------------------
    def _state(self, job_id: str, url_hash: str) -> UrlState:
        found = call(
            self._client.get_item,
            TableName=self._table,
            Key=_key(job_id, url_hash),
            ConsistentRead=True,
        )
        if "Item" not in found:
            raise Conflict(f"{url_hash} is not in the frontier of job {job_id}")
        return UrlState(found["Item"]["state"]["S"])

    def _all(self, job_id: str) -> list[dict[str, Any]]:
        expr = Expr()
        rows = query_all(
            self._client,
            TableName=self._table,
            KeyConditionExpression=f"{expr.name('job_id')} = {expr.value(job_id)}",
            ConsistentRead=True,
            **expr.kwargs(),
        )
        return [row for row in rows if row["url_hash"] != ORDER_COUNTER_SK]

    def counts(self, job_id: str) -> dict[UrlState, int]:
        seen = Counter(UrlState(row["state"]) for row in self._all(job_id))
        return {state: seen.get(state, 0) for state in UrlState}

    def items(self, job_id: str) -> list[FrontierItem]:
        found = [frontier_from_attrs(row) for row in self._all(job_id)]
        return sorted(found, key=lambda item: item.order)


def _key(job_id: str, url_hash: str) -> dict[str, Any]:
    return {"job_id": {"S": job_id}, "url_hash": {"S": url_hash}}


def _first_of_each(items: Sequence[FrontierItem]) -> list[FrontierItem]:
    """The batch without repeated url_hashes (the first occurrence wins)."""
    unique: dict[str, FrontierItem] = {}
    for item in items:
        unique.setdefault(item.url_hash, item)
    return list(unique.values())
