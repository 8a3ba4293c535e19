"""netguard: which addresses the hosted crawler may reach."""

from __future__ import annotations

import pytest
from mdcrawl.errors import FetchError, InvalidInput, UnsafeUrl
from mdcrawl.netguard import AddressGuard

BLOCKED = [
    "127.0.0.1", "127.8.9.10", "::1",  # loopback
    "10.0.0.5", "172.16.3.4", "192.168.1.1", "fc00::1", "fd12:3456::1",  # private
    "169.254.169.254", "169.254.1.1", "fe80::1",  # link-local, metadata
    "fd00:ec2::254",  # EC2 IPv6 metadata
    "100.64.0.1", "100.127.255.254",  # CGNAT
    "224.0.0.1", "239.255.255.250", "ff02::1",  # multicast
    "0.0.0.0", "::",  # unspecified
    "240.0.0.1", "255.255.255.255",  # reserved, broadcast
    "192.0.2.10", "2001:db8::1",  # documentation
    "::ffff:127.0.0.1", "::ffff:10.0.0.1",  # IPv4-mapped
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "2002:c0a8:0101::1",  # 6to4 of 192.168.1.1
]
PUBLIC = ["93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::808:808"]


@pytest.mark.parametrize("address", BLOCKED)
def test_internal_addresses_are_blocked(address: str) -> None:
    with pytest.raises(UnsafeUrl, match="not a public address"):
        AddressGuard().check_ip(address)
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(UnsafeUrl):
        AddressGuard().check_url(f"http://{host}/")


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address: str) -> None:
    AddressGuard().check_ip(address)
    host = f"[{address}]" if ":" in address else address
    AddressGuard().check_url(f"https://{host}:8443/docs/")


def test_host_names_are_judged_by_what_they_resolve_to() -> None:
    with pytest.raises(UnsafeUrl, match="localhost"):
        AddressGuard().check_url("http://localhost:8000/")
    AddressGuard(allow_networks=("127.0.0.0/8", "::1/128")).check_url("http://localhost:8000/")


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://93.184.216.34/", "gopher://93.184.216.34/", "//x/", "http:///"]
)
def test_non_http_urls_are_unsafe(url: str) -> None:
    with pytest.raises(UnsafeUrl):
        AddressGuard().check_url(url)


def test_allow_list_opens_only_its_own_networks() -> None:
    guard = AddressGuard(allow_networks=("127.0.0.0/8", "10.1.0.0/16"))
    guard.check_url("http://127.0.0.1:9/")
    guard.check_ip("10.1.2.3")
    for address in ("10.2.0.1", "169.254.169.254", "192.168.0.1"):
        with pytest.raises(UnsafeUrl):
            guard.check_ip(address)


def test_blocked_address_is_also_a_fetch_error_with_a_reason() -> None:
    with pytest.raises(FetchError) as caught:
        AddressGuard().check_url("http://10.0.0.1/")
    assert caught.value.reason == "unsafe_url"


def test_a_bad_allow_list_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="allow_networks"):
        AddressGuard(allow_networks=("not-a-network",))


async def test_async_resolve_checks_every_address() -> None:
    guard = AddressGuard()
    with pytest.raises(UnsafeUrl):
        await guard.resolve("localhost", 80)
    allowed = AddressGuard(allow_networks=("127.0.0.0/8", "::1/128"))
    addresses = await allowed.resolve("localhost", 80)
    assert "127.0.0.1" in addresses or "::1" in addresses
