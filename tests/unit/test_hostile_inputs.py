"""Pure pieces of issue 9: bounded inflation, charset, nesting depth, URL messages,
credentials, the address guard's fence, serve's --allow-hosts, the WebSocket's `after`."""

from __future__ import annotations

import gzip
import socket
import threading
import zlib

import pytest
from mdcrawl.charset import decode_page
from mdcrawl.convert import convert_html
from mdcrawl.depth import MAX_DEPTH, cap_nesting, flatten_deep
from mdcrawl.errors import FetchError, InvalidInput, TooLarge, UnsafeUrl
from mdcrawl.extract import parse_html
from mdcrawl.inflate import PIECE, BoundedInflater
from mdcrawl.netguard import AddressGuard, start_guard
from mdcrawl.serve.hosts import REFUSED, StartUrlCheck, serve_guard
from mdcrawl.urls import split_credentials, validate_start_url

PAGE = b"<html><body><main><h1>Hi</h1><p>" + b"words " * 2000 + b"</p></main></body></html>"


def _inflate(body: bytes, encoding: str, limit: int = 10**7, chunk: int = 1000) -> bytes:
    inflater = BoundedInflater(encoding, limit, "http://x/")
    pieces = [p for i in range(0, len(body), chunk) for p in inflater.feed(body[i : i + chunk])]
    assert all(len(p) <= PIECE for p in pieces)
    return b"".join(pieces)


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("", lambda b: b),
        ("identity", lambda b: b),
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", _raw_deflate),
        ("gzip, gzip", lambda b: gzip.compress(gzip.compress(b))),
        ("deflate, gzip", lambda b: gzip.compress(zlib.compress(b))),
    ],
)
def test_every_encoding_layer_is_undone(encoding: str, encode) -> None:  # type: ignore[no-untyped-def]
    assert _inflate(encode(PAGE), encoding) == PAGE


def test_a_bomb_stops_at_the_cap_of_its_layer() -> None:
    bomb = gzip.compress(gzip.compress(b"\0" * 50_000_000))
    inflater = BoundedInflater("gzip, gzip", 1_000_000, "http://x/")
    with pytest.raises(TooLarge, match="1000000 byte cap"):
        inflater.feed(bomb)


def test_unknown_or_broken_encodings_are_fetch_errors() -> None:
    with pytest.raises(FetchError, match="'br' is not supported"):
        BoundedInflater("br", 100, "http://x/")
    with pytest.raises(FetchError, match="does not decode"):
        BoundedInflater("gzip", 100, "http://x/").feed(b"not gzip at all")


LATIN1 = "<html><body><h2 id='café'>Grüße Café</h2></body></html>"


def test_latin1_labelled_utf8_is_read_as_latin1() -> None:
    assert "Grüße Café" in decode_page(LATIN1.encode("latin-1"), "utf-8")
    assert "Grüße Café" in decode_page(LATIN1.encode("latin-1"), None)


def test_utf8_with_one_stray_byte_stays_utf8() -> None:
    body = LATIN1.encode("utf-8") + b"\xff"
    assert "Grüße Café" in decode_page(body, "utf-8")


def test_a_meta_charset_beats_a_wrong_utf8_label() -> None:
    page = "<html><head><meta charset='koi8-r'></head><body>Привет</body></html>"
    assert "Привет" in decode_page(page.encode("koi8-r"), "utf-8")


def test_anchors_keep_their_letters() -> None:
    html = "<main><h1>T</h1><p><a href='#grüße-café'>x</a></p><h2 id='grüße-café'>G</h2></main>"
    page = convert_html(f"<html><body>{html}</body></html>".encode("latin-1"), "http://x/", "utf-8")
    assert "#gr%C3%BC%C3%9Fe-caf%C3%A9" in page.markdown


def test_a_hundred_thousand_nested_divs_convert() -> None:
    deep = "<div>" * 100_000 + "<p>bottom</p>" + "</div>" * 100_000
    html = f"<html><body><main><h1>Deep</h1>{deep}<p>after</p></main></body></html>"
    page = convert_html(html.encode(), "http://x/")
    assert "bottom" in page.markdown and "after" in page.markdown


def test_a_long_run_of_blanks_does_not_stall_the_renderer() -> None:
    """The renderer's whitespace regex is quadratic on blanks without a newline: 100,000
    spaces took minutes. Preformatted blanks are kept as they are."""
    html = f"<p>a{' ' * 100_000}b</p><pre>c{' ' * 300}d</pre>"
    pages = []
    worker = threading.Thread(
        target=lambda: pages.append(
            convert_html(f"<html><body><main>{html}</main></body></html>", "http://x/")
        ),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=60)  # seconds here; minutes before
    assert pages and "a b" in pages[0].markdown and f"c{' ' * 300}d" in pages[0].markdown


def test_ordinary_pages_are_not_flattened() -> None:
    root = parse_html("<html><body>" + "<div>" * 50 + "<p>x</p>" + "</div>" * 50 + "</body></html>")
    assert flatten_deep(root) == 0


def test_flattening_keeps_leaves_and_text_in_order() -> None:
    html = "<div>" * (MAX_DEPTH + 5) + "a<b>b</b>c<div>d<i>e</i></div>" + "</div>" * (MAX_DEPTH + 5)
    root = parse_html(f"<html><body>{html}</body></html>")
    assert flatten_deep(root) == 1
    assert root.text_content().strip() == "abc de"  # a container's edge became a space
    assert [el.tag for el in root.iter("b", "i")] == ["b", "i"]


def test_cap_nesting_leaves_out_deep_tags_only() -> None:
    assert cap_nesting("<div><div><p>x</p></div></div>", 2) == "<div><div> x</div></div>"
    assert cap_nesting("<p>a<br>b &amp; c</p>", 5) == "<p>a<br>b &amp; c</p>"


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http:/127.0.0.1/", "did you mean http://127.0.0.1/ ?"),
        ("https:docs.example.com/x", "did you mean https://docs.example.com/x ?"),
        ("http://127.0.0.1:99999/", "port '99999'"),
        ("docs.example.com", "did you mean https://docs.example.com ?"),
    ],
)
def test_mistyped_urls_say_what_to_fix(url: str, words: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        validate_start_url(url)
    assert words in str(caught.value)


def test_credentials_are_split_off_the_url() -> None:
    assert split_credentials("http://u%40x:p%3Aw@h:8/a?b") == ("http://h:8/a?b", ("u@x", "p:w"))
    assert split_credentials("http://h/a") == ("http://h/a", None)


def test_hosted_checks_refuse_credentials() -> None:
    with pytest.raises(UnsafeUrl, match="credentials"):
        AddressGuard(("127.0.0.0/8",)).check_url("http://u:p@127.0.0.1/")


@pytest.fixture
def no_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("DNS was asked")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.mark.usefixtures("no_dns")
def test_a_fence_admits_its_networks_only_and_never_asks_dns() -> None:
    fence = AddressGuard(("127.0.0.1/32",), allow_public=False)
    fence.check_url("http://127.0.0.1:8000/")
    fence.check_url("http://localhost:8000/")
    for url in ("http://127.0.0.2/", "http://8.8.8.8/", "http://docs.example.com/"):
        with pytest.raises(UnsafeUrl):
            fence.check_url(url)


def _resolve_to(monkeypatch: pytest.MonkeyPatch, address: str) -> None:
    def resolve(host: str, port: int, *args: object, **kwargs: object) -> list[tuple]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)


def test_a_public_start_keeps_the_cli_on_public_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    _resolve_to(monkeypatch, "93.184.215.14")
    guard = start_guard("https://docs.example.com/")
    assert guard is not None
    for address in ("127.0.0.1", "10.0.0.1", "169.254.169.254", "::1"):
        with pytest.raises(UnsafeUrl):
            guard.check_ip(address)


def test_a_start_at_home_may_stay_at_home(monkeypatch: pytest.MonkeyPatch) -> None:
    _resolve_to(monkeypatch, "127.0.0.1")
    assert start_guard("http://localhost:8000/") is None


def test_serve_is_public_only_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    _resolve_to(monkeypatch, "93.184.215.14")
    check = StartUrlCheck(serve_guard(()))
    check("https://docs.example.com/")
    for url in (
        "http://127.0.0.1/",
        "http://10.1.2.3/",
        "http://169.254.169.254/",
        "http://[::1]/",
    ):
        with pytest.raises(UnsafeUrl) as caught:
            check(url)
        assert str(caught.value) == REFUSED  # the same words whatever the address


@pytest.mark.usefixtures("no_dns")
def test_allow_hosts_fences_and_public_reopens() -> None:
    fenced = serve_guard(["127.0.0.1/32"])
    fenced.check_ip("127.0.0.1")
    with pytest.raises(UnsafeUrl):
        fenced.check_ip("93.184.215.14")
    both = serve_guard(["127.0.0.1/32", "public"])
    both.check_ip("127.0.0.1")
    both.check_ip("93.184.215.14")
    with pytest.raises(UnsafeUrl):
        both.check_ip("10.0.0.1")
    with pytest.raises(InvalidInput):
        serve_guard(["not-a-network"])
