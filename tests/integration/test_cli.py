"""The CLI's contract with a person: exit codes and messages for bad input."""

from __future__ import annotations

import socket
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

import pytest
from mdcrawl.cli import main

from tests.support.demo import crawl, read_manifest, write_site
from tests.support.server import serve_directory

BIG = 50 * 1024 * 1024


def test_help_documents_the_options_and_globs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", "--help"]) == 0
    text = capsys.readouterr().out
    for flag in ("--out", "--max-pages", "--budget", "--include", "--ignore-robots", "**"):
        assert flag in text


@pytest.mark.parametrize(
    "args",
    [
        ["crawl", "ftp://example.com/docs/"],
        ["crawl", "not a url"],
        ["crawl", "http://127.0.0.1:1/", "--max-pages", "0"],
        ["crawl"],
        [],
    ],
)
def test_usage_errors_exit_2(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*args, *(["--cache-dir", str(tmp_path)] if len(args) > 1 else [])]) == 2
    assert capsys.readouterr().err.strip()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_host_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/docs/"
    assert crawl(url, tmp_path / "cache", tmp_path / "out") == 1
    err = capsys.readouterr().err
    assert "could not be reached" in err and url in err


def _pdf(handler: SimpleHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/pdf")
    handler.send_header("Content-Length", "8")
    handler.end_headers()
    handler.wfile.write(b"%PDF-1.4")


def test_non_html_start_url_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve_directory(tmp_path, routes={"/manual": _pdf}) as server:
        assert crawl(server.url("/manual"), tmp_path / "cache", tmp_path / "out") == 1
    assert "is not an HTML page" in capsys.readouterr().err


def _loop(handler: SimpleHTTPRequestHandler) -> None:
    handler.send_response(302)
    handler.send_header("Location", "/docs/loop.html")
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def _huge(handler: SimpleHTTPRequestHandler) -> None:
    """50 MB of HTML with no Content-Length: only reading can find out it is too big."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html")
    handler.end_headers()
    handler.wfile.write(b"<!doctype html><html><body><p>")
    chunk = b"x" * (1024 * 1024)
    try:
        for _ in range(BIG // len(chunk)):
            handler.wfile.write(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the crawler hung up at its size cap, as it should


def test_redirect_loop_and_huge_page_are_skipped(tmp_path: Path) -> None:
    links = '<a href="loop.html">loop</a> <a href="huge.html">huge</a> <a href="ok.html">ok</a>'
    write_site(tmp_path / "site", {"/docs/index.html": links, "/docs/ok.html": "fine"})
    routes = {"/docs/loop.html": _loop, "/docs/huge.html": _huge}
    with serve_directory(tmp_path / "site", routes=routes) as server:
        assert crawl(server.url("/docs/"), tmp_path / "cache", tmp_path / "out") == 0
    by_url = {m["url"]: m for m in read_manifest(tmp_path / "out")}
    assert by_url[server.url("/docs/loop.html")]["status"] == "skipped"
    assert by_url[server.url("/docs/loop.html")]["reason"] == "too_many_redirects"
    assert by_url[server.url("/docs/huge.html")]["status"] == "skipped"
    assert by_url[server.url("/docs/huge.html")]["reason"] == "too_large"
    assert by_url[server.url("/docs/ok.html")]["status"] == "ok"
