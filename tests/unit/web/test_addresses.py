"""Which addresses count as local for ``fetch_page`` (docs/web.md, "Local addresses")."""

from __future__ import annotations

import ipaddress

import pytest

from threadline.web.addresses import is_local


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fe80::1",
        "fd00::1",
        "::ffff:192.168.1.1",
        "224.0.0.1",
    ],
)
def test_local_ranges(address: str) -> None:
    assert is_local(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"])
def test_global_addresses(address: str) -> None:
    assert not is_local(ipaddress.ip_address(address))
