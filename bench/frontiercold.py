"""What a cold orchestrator pays to rebuild a job's frontier from its log.

    python -m bench.frontiercold --endpoint http://127.0.0.1:PORT [--job JOB_ID]

A new Lambda environment (or a slice after a crash) has no view: its first frontier
call reads the job's whole log (``DynamoDbFrontier._view``). This reads it the same way
from a running stack's DynamoDB (the scale harness's moto server while or after
``bench.cost`` runs: its port is the ``AWS_ENDPOINT_URL`` the workers get) and prints
one JSON line: entries, URLs, bytes as DynamoDB sizes them, Query pages (1 MB each),
the read units AWS would bill (strongly consistent: 4 KB a unit), the seconds the read
took here and the seconds the fold took. Read only: the job is not changed.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import boto3
from mdcrawl.adapters.aws.dynamo import Expr, from_item
from mdcrawl.adapters.aws.frontierlog import View
from mdcrawl.adapters.aws.records import frontier_entry_from_attrs
from mdcrawl.names import Table

from bench.meter import item_size
from tests.support.aws import FAKE_CREDENTIALS, REGION, table_names

QUERY_PAGE_BYTES = 1024 * 1024  # DynamoDB stops a Query page at 1 MB read


def read_log(client: Any, table: str, job_id: str) -> tuple[list[dict[str, Any]], int, float]:
    """The job's log items (raw), the Query pages it took, the seconds."""
    expr = Expr()
    request = dict(
        TableName=table,
        KeyConditionExpression=f"{expr.name('job_id')} = {expr.value(job_id)}",
        ConsistentRead=True,
        **expr.kwargs(),
    )
    items: list[dict[str, Any]] = []
    pages = 0
    started = time.perf_counter()
    while True:
        page = client.query(**request)
        pages += 1
        items.extend(page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return items, pages, time.perf_counter() - started
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def fold(items: list[dict[str, Any]]) -> tuple[View, float]:
    started = time.perf_counter()
    view = View()
    for item in items:
        view.apply(frontier_entry_from_attrs(from_item(item)))
        view.next_seq += 1
    return view, time.perf_counter() - started


def measure(endpoint: str, job_id: str | None) -> dict[str, Any]:
    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name=REGION,
                          **FAKE_CREDENTIALS)
    names = table_names()
    job_id = job_id or _only_job(client, names[Table.JOBS])
    items, pages, read_s = read_log(client, names[Table.FRONTIER], job_id)
    view, fold_s = fold(items)
    size = sum(item_size(item) for item in items)
    return {
        "job_id": job_id,
        "entries": len(items),
        "urls": len(view.items),
        "kb": round(size / 1024, 1),
        "aws_query_pages": max(1, -(-size // QUERY_PAGE_BYTES)),
        "aws_read_units": -(-size // 4096),
        "moto_query_pages": pages,
        "read_s": round(read_s, 3),
        "fold_s": round(fold_s, 3),
    }


def _only_job(client: Any, table: str) -> str:
    jobs = [item["job_id"]["S"] for item in client.scan(TableName=table)["Items"]]
    if len(jobs) != 1:
        raise SystemExit(f"{len(jobs)} jobs in {table}: name one with --job")
    return jobs[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", required=True, help="the stack's DynamoDB endpoint URL")
    parser.add_argument("--job", help="the job id (default: the only job there is)")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.endpoint, args.job)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
