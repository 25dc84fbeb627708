from __future__ import annotations

import pytest

from services.crawler.network_guard import host_is_private, is_public_address


@pytest.mark.parametrize("ip", ["8.8.8.8", "1.1.1.1", "114.114.114.114", "2001:4860:4860::8888", "2400:3200::1",
                                "64:ff9b::8.8.8.8", "2002:808:808::1"])  # NAT64, 6to4 of a public address
def test_global_unicast_addresses_are_public(ip: str) -> None:
    assert is_public_address(ip)


@pytest.mark.parametrize("ip", [
    "127.0.0.1", "127.8.9.10", "10.0.0.1", "172.16.5.4", "192.168.1.1",  # loopback, RFC 1918
    "169.254.169.254",  # link-local, where cloud metadata services live
    "100.64.0.1",  # carrier-grade NAT
    "0.0.0.0", "224.0.0.1", "240.0.0.1", "255.255.255.255",  # unspecified, multicast, reserved
    "::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1",
    "::ffff:10.0.0.1", "::ffff:127.0.0.1",  # IPv4-mapped IPv6 reaches the IPv4 address
    "::127.0.0.1", "::ffff:0:127.0.0.1",  # IPv4-compatible, SIIT-translated
    "64:ff9b::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::8.8.8.8",  # NAT64, local-use NAT64
    "2002:7f00:1::", "2002:c0a8:101::1",  # 6to4 wrapping 127.0.0.1, 192.168.1.1
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo whose client is 127.0.0.1
    "not an ip", "",
])
def test_private_and_special_addresses_are_not_public(ip: str) -> None:
    assert not is_public_address(ip)


def test_ip_literal_hosts_are_judged_without_dns() -> None:
    assert host_is_private("127.0.0.1") and host_is_private("[::1]") and host_is_private("10.1.2.3")
    assert not host_is_private("8.8.8.8")
