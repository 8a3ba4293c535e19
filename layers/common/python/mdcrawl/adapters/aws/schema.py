"""DynamoDB key schemas as data: read by the AWS adapters, by infra/ and by the moto
and DynamoDB Local fixtures, so the table the stack creates is the table the code uses."""

from __future__ import annotations

from dataclasses import dataclass

from ...names import (
    CONNECTIONS_JOB_INDEX,
    JOBS_OWNER_INDEX,
    TTL_ATTRIBUTE,
    Table,
)


@dataclass(frozen=True)
class Key:
    name: str
    type: str  # "S" or "N"


@dataclass(frozen=True)
class IndexSpec:
    """A global secondary index projecting keys only: every reader needs just the keys
    (a job's subscribers) or fetches the items by key (listing an owner's jobs). Why:
    an update that changes no projected attribute costs the index nothing, so the
    per-page counter updates stop paying for a second copy."""

    name: str
    pk: Key
    sk: Key | None = None


@dataclass(frozen=True)
class TableSpec:
    table: Table
    pk: Key
    sk: Key | None = None
    indexes: tuple[IndexSpec, ...] = ()
    ttl: bool = False  # items carry TTL_ATTRIBUTE and expire
    point_in_time_recovery: bool = False
    # A DynamoDB Stream of new items (NEW_IMAGE): the events table's feeds the fan-out
    # function, which pushes each job's new events to its subscribers in seq order.
    stream: bool = False


SCHEMAS: dict[Table, TableSpec] = {
    Table.JOBS: TableSpec(
        Table.JOBS,
        Key("job_id", "S"),
        indexes=(IndexSpec(JOBS_OWNER_INDEX, Key("owner", "S"), Key("created_at", "N")),),
        ttl=True,
        point_in_time_recovery=True,
    ),
    # A log per job (adapters/aws/frontier.py): entries at seq 0, 1, 2..., each written
    # once; the claim reads the fold in memory, so no index.
    Table.FRONTIER: TableSpec(Table.FRONTIER, Key("job_id", "S"), Key("seq", "N"), ttl=True),
    Table.CACHE: TableSpec(Table.CACHE, Key("url_hash", "S"), ttl=True),
    Table.PAGES: TableSpec(Table.PAGES, Key("job_id", "S"), Key("url_hash", "S"), ttl=True),
    Table.EVENTS: TableSpec(
        Table.EVENTS, Key("job_id", "S"), Key("seq", "N"), ttl=True, stream=True
    ),
    # One item per connection (sk "#conn") plus one per subscription (sk = job id, with
    # sub_job set): the index finds a job's subscribers.
    Table.CONNECTIONS: TableSpec(
        Table.CONNECTIONS,
        Key("connection_id", "S"),
        Key("sk", "S"),
        indexes=(IndexSpec(CONNECTIONS_JOB_INDEX, Key("sub_job", "S"), Key("connection_id", "S")),),
        ttl=True,
    ),
}

__all__ = ["SCHEMAS", "TTL_ATTRIBUTE", "IndexSpec", "Key", "TableSpec"]
