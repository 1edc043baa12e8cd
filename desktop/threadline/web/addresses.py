"""Which addresses ``fetch_page`` may open: resolve the host, check every address it has.

A model that read a hostile page may ask to fetch ``http://192.168.1.1/…`` or a service on
this computer (server-side request forgery, docs/web.md "Local addresses"). So unless the
user allows local addresses, every address a host resolves to must be a global one; a name
with one global and one private address is refused too (an attacker picks what the
connection would use). The address checked is the one connected to (``fetch.py`` puts it in
the URL and sends the name as ``Host`` and TLS server name): a second lookup, which a
rebinding DNS server would answer differently, never happens.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable

from threadline.web.errors import WebError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolve = Callable[[str, int], Awaitable[list[str]]]
"""A host and port to its addresses (``resolve`` below; tests pass their own)."""


def is_local(address: IPAddress) -> bool:
    """Anything but a global unicast address: loopback, private, link-local, unique-local,
    shared (CGNAT), documentation, multicast, unspecified and reserved ranges alike."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_global or address.is_multicast


async def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (an address literal resolves to itself)."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise WebError(f"The address {host} could not be found ({err.strerror or err}).") from err
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def checked_address(host: str, port: int, *, allow_local: bool, lookup: Resolve = resolve) -> str:
    """The address to connect to for ``host``; ``WebError`` when one of its addresses is local
    and local addresses are not allowed."""
    found = await lookup(host, port)
    if not found:
        raise WebError(f"The address {host} could not be found.")
    addresses = [ipaddress.ip_address(a.split("%", 1)[0]) for a in found]
    if not allow_local:
        local = next((a for a in addresses if is_local(a)), None)
        if local is not None:
            shown = host if host == str(local) else f"{host} ({local})"
            raise WebError(
                f"{shown} is on this computer or the local network, which fetch_page does not open. "
                "The user can allow it in Settings → Web (“Allow local addresses”)."
            )
    return str(addresses[0])
