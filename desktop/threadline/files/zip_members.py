"""Reading a zip member without trusting its archive: inflated in small steps, each checked.

A zip's directory may lie about a member's size, and a member of zeros inflates about a
thousandfold. ``zipfile`` does not protect memory from either: reading a member whole
inflates up to 2 GB in one call before it compares anything with the declared size. Both
the importer (exports are zips of JSON) and the document readers (DOCX, XLSX and PPTX are
zips of XML) therefore read members through :class:`MemberReader`, which inflates at most
``STEP`` bytes at a time from the member's raw bytes and checks each step *before* handing
it on: the bytes inflated so far against the packed bytes actually consumed (the ratio),
against the size the directory declares, and against the caller's cap. A bomb is refused
after a few megabytes, in constant memory, whatever its headers say (docs/import-export.md,
"Zip bombs").

Only stored and deflated members are read (every export and Office file uses them); an
encrypted member or another compression method is refused as unsupported.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path
from types import TracebackType

STEP = 64 * 1024
"""Most bytes inflated (or packed bytes read) at a time."""
RATIO_FROM = 1024 * 1024
"""A member is judged by its ratio only once this much has inflated: small XML and JSON
compress very well, and a bomb is still refused after a few megabytes."""
_LOCAL_HEADER = struct.Struct("<4s22xHH")
_LOCAL_MAGIC = b"PK\x03\x04"
_ENCRYPTED = 0x1


class MemberError(Exception):
    """A member that cannot or must not be read; subclasses say why."""


class MemberDamaged(MemberError):
    """The member's bytes are not what its archive says (cut off, corrupt, wrong checksum)."""


class MemberUnsupported(MemberError):
    """Encrypted, or compressed with a method other than stored or deflated."""


class MemberTooCompressed(MemberError):
    """It inflated more than ``ratio`` times the packed bytes it came from: a zip bomb."""

    def __init__(self, ratio: int) -> None:
        super().__init__(f"inflates more than {ratio} times its packed size")
        self.ratio = ratio


class MemberOversized(MemberError):
    """It inflated past the size its archive declares, or past the caller's cap."""

    def __init__(self, limit: int, *, declared: bool) -> None:
        super().__init__(f"inflates past {limit} bytes")
        self.limit = limit
        self.declared = declared
        """True when the archive's own declaration was passed (the header lies)."""


class MemberReader:
    """The inflated bytes of one member, read with ``read(size)``; checked step by step.

    ``max_ratio``: inflated bytes per packed byte consumed, judged from ``RATIO_FROM``
    inflated bytes on (``None``: not judged). ``cap``: most bytes it may inflate to.
    Opens its own handle on ``path``, so readers of one archive do not disturb each other.
    """

    def __init__(
        self, path: Path, info: zipfile.ZipInfo, *, max_ratio: int | None, cap: int | None = None
    ) -> None:
        if info.flag_bits & _ENCRYPTED:
            raise MemberUnsupported("it is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise MemberUnsupported(f"compression method {info.compress_type}")
        self._info = info
        self._max_ratio = max_ratio
        self._cap = cap
        self._inflater = zlib.decompressobj(-15) if info.compress_type == zipfile.ZIP_DEFLATED else None
        self._packed_left = info.compress_size
        self._fed = 0
        self._crc = 0
        self.inflated = 0
        """Bytes handed out so far."""
        self.at_end = False
        self._file = open(path, "rb")  # noqa: SIM115 (closed by close(), like a file)
        try:
            self._file.seek(info.header_offset)
            header = self._file.read(_LOCAL_HEADER.size)
            if len(header) != _LOCAL_HEADER.size:
                raise MemberDamaged("the archive is cut off")
            magic, name_length, extra_length = _LOCAL_HEADER.unpack(header)
            if magic != _LOCAL_MAGIC:
                raise MemberDamaged("a member's header is damaged")
            self._file.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
        except BaseException:
            self._file.close()
            raise

    @property
    def packed(self) -> int:
        """Packed bytes the inflater has consumed so far."""
        if self._inflater is None:
            return self._fed
        return self._fed - len(self._inflater.unconsumed_tail)

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` inflated bytes (all that is left when negative); ``b""`` at the end."""
        pieces: list[bytes] = []
        got = 0
        while not self.at_end and (size < 0 or got < size):
            piece = self._step(STEP if size < 0 else min(STEP, size - got))
            pieces.append(piece)
            got += len(piece)
        return b"".join(pieces)

    def drain(self) -> int:
        """Read to the end, keeping nothing (a check of the whole member); the bytes it holds."""
        while not self.at_end:
            self._step(STEP)
        return self.inflated

    def _step(self, wanted: int) -> bytes:
        data = self._next(wanted)
        self.inflated += len(data)
        self._crc = zlib.crc32(data, self._crc)
        declared = self._info.file_size
        if self.inflated > declared:
            raise MemberOversized(declared, declared=True)
        if self._cap is not None and self.inflated > self._cap:
            raise MemberOversized(self._cap, declared=False)
        ratio = self._max_ratio
        if ratio is not None and self.inflated > RATIO_FROM and self.inflated > ratio * max(self.packed, 1):
            raise MemberTooCompressed(ratio)
        if self.at_end and (self.inflated != declared or self._crc != self._info.CRC):
            raise MemberDamaged("a member's checksum or size does not match")
        return data

    def _next(self, wanted: int) -> bytes:
        if self._inflater is None:
            data = self._packed(min(wanted, self._packed_left))
            self.at_end = self._packed_left == 0
            return data
        while True:
            source = self._inflater.unconsumed_tail
            if not source:
                if self._packed_left == 0:
                    raise MemberDamaged("a member is cut off")
                source = self._packed(min(STEP, self._packed_left))
            try:
                data = self._inflater.decompress(source, wanted)
            except zlib.error as error:
                raise MemberDamaged("a member is corrupt") from error
            if self._inflater.eof:
                self.at_end = True
                return data
            if data:
                return data

    def _packed(self, count: int) -> bytes:
        data = self._file.read(count)
        if len(data) != count:
            raise MemberDamaged("the archive is cut off")
        self._packed_left -= count
        self._fed += count
        return data

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> MemberReader:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
