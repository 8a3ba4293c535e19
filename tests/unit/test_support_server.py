"""The docs server tests and benches crawl: HTTP/1.0 by default (a connection per
request), HTTP/1.1 kept alive on request (as real docs hosts answer)."""

from __future__ import annotations

import http.client
from pathlib import Path

from tests.support.server import serve_directory


def _two_requests(base_url: str) -> tuple[list[int], list[int]]:
    """Two GETs on one connection: the statuses and the HTTP versions."""
    host, port = base_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    statuses, versions = [], []
    try:
        for _ in range(2):
            connection.request("GET", "/page.html")
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
            versions.append(response.version)
    finally:
        connection.close()
    return statuses, versions


def test_a_kept_alive_connection_serves_request_after_request(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text("<html><body><p>" + "x" * 3000 + "</p></body></html>")
    with serve_directory(tmp_path, keep_alive=True) as server:
        statuses, versions = _two_requests(server.base_url)
    assert statuses == [200, 200]
    assert versions == [11, 11]


def test_by_default_the_server_closes_each_connection(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text("<html><body><p>hi</p></body></html>")
    with serve_directory(tmp_path) as server:
        host, port = server.base_url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=5)
        connection.request("GET", "/page.html")
        response = connection.getresponse()
        response.read()
        assert response.version == 10 and response.will_close
        connection.close()
