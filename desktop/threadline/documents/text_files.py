"""Decoding a text file whose encoding nobody told us.

Order: a byte-order mark decides (UTF-8 with BOM, UTF-16 either way); otherwise
UTF-8 if the bytes are valid UTF-8 (most files today); otherwise Latin-1, which
decodes any byte and is right for old Western files. Before the Latin-1 guess the
bytes are checked for being text at all: NUL bytes or many control characters mean
a binary file (an executable, an image, a zip), which is refused rather than sent
to the model as noise.
"""

from __future__ import annotations

import codecs

from threadline.documents.model import DocumentError

SNIFF_BYTES = 8192
MAX_CONTROL_SHARE = 0.05
"""Share of control characters (other than tab, newline, form feed…) that makes a file binary."""
_TEXT_CONTROLS = {0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1B}


def looks_binary(data: bytes) -> bool:
    head = data[:SNIFF_BYTES]
    if b"\x00" in head:
        return True
    if not head:
        return False
    controls = sum(1 for b in head if b < 0x20 and b not in _TEXT_CONTROLS)
    return controls / len(head) > MAX_CONTROL_SHARE


def decode_text(data: bytes, name: str) -> str:
    """The text of ``data``; ``DocumentError`` when it is not text. Line ends become ``\\n``."""
    if data.startswith(codecs.BOM_UTF8):
        text = data[len(codecs.BOM_UTF8) :].decode("utf-8", errors="replace")
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
    elif looks_binary(data):
        raise DocumentError(f"{name} is not a text file or a document Threadline can read.")
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")
