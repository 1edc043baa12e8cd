"""Zip bombs built in milliseconds: a few megabytes that inflate to gigabytes.

Compressing gigabytes of zeros takes seconds. Deflate is a sequence of blocks, and a
block of repeated bytes ended by a full flush stands on its own, byte-aligned, so it
can simply be repeated: ``prefix`` (compressed once) + the block N times + an empty
final block is a valid stream. The zip around it is written by hand with honest
sizes and checksum, so only what inflates betrays it.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

BLOCK = 8 * 1024 * 1024
"""Inflated bytes of the repeated block."""
_FINAL = b"\x03\x00"
"""An empty final fixed-Huffman block: ends the stream."""


def _flushed(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush(zlib.Z_FULL_FLUSH)


def write_zip_bomb(
    path: Path,
    *,
    inflated: int,
    prefix: bytes = b"",
    fill: bytes = b"\0",
    name: str = "conversations.json",
    declared: int | None = None,
    beside: dict[str, bytes] | None = None,
) -> Path:
    """A zip at ``path`` whose member ``name`` is ``prefix`` then ``fill`` repeated,
    ``len(prefix)`` + at least ``inflated`` bytes in all (under 4 GiB: no ZIP64).

    ``declared``: the size its headers claim instead of the true one (a lying header).
    ``beside``: small members written (deflated, honestly) before it.
    """
    repeats = -(-inflated // BLOCK)
    plain = fill * (BLOCK // len(fill))
    packed = (_flushed(prefix) if prefix else b"") + _flushed(plain) * repeats + _FINAL
    size = len(prefix) + repeats * BLOCK
    assert size < 0xFFFFFFFF
    crc = zlib.crc32(prefix)
    for _ in range(repeats):
        crc = zlib.crc32(plain, crc)
    members = [
        (n, _flushed(data) + _FINAL, len(data), zlib.crc32(data)) for n, data in (beside or {}).items()
    ]
    members.append((name, packed, size if declared is None else declared, crc))
    body, directory = b"", b""
    for member_name, member_packed, member_size, member_crc in members:
        encoded = member_name.encode()
        fields = (20, 0, 8, 0, 0x21, member_crc, len(member_packed), member_size, len(encoded))
        header_offset = len(body)
        body += struct.pack("<4s5H3I2H", b"PK\x03\x04", *fields, 0) + encoded + member_packed
        directory += (
            struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 20, *fields, 0, 0, 0, 0, 0, header_offset) + encoded
        )
    count = len(members)
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, count, count, len(directory), len(body), 0)
    path.write_bytes(body + directory + end)
    return path
