"""How much an imported file may hold before Threadline refuses it.

An export is untrusted input: a zip whose members inflate a thousandfold, a JSON
nested ten thousand levels deep, a conversation with ten million messages or a
mapping whose parents loop would otherwise exhaust memory or hang the import.
The limits are generous for real exports (years of daily use stay well below
them) and cheap to check while reading, so nothing is ever held in full before it
has been measured.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ImportLimits:
    """Bounds on one import; every one is checked before the data it bounds is kept."""

    max_file_bytes: int = 8 * 1024 * MIB
    """The file as given (a zip may be large because of images, which are not read)."""
    max_document_bytes: int = 2 * 1024 * MIB
    """One JSON document as read (a plain file, or one zip member once inflated)."""
    max_total_bytes: int = 4 * 1024 * MIB
    """All JSON read from one zip, inflated: a zip bomb stops here, whatever its headers say."""
    max_compression_ratio: int = 200
    """A zip member that inflates more than this many times the packed bytes it has come
    from so far is refused as it inflates (JSON compresses about 10×; thousands-fold is a
    bomb; see ``threadline.files.zip_members``)."""
    max_conversation_bytes: int = 256 * MIB
    """One conversation's JSON text."""
    max_messages: int = 200_000
    """Messages in one conversation."""
    max_text_chars: int = 16 * MIB
    """Characters in one message's text."""
    max_json_depth: int = 200
    """Nesting of objects and arrays in one conversation's JSON."""
    max_attachment_bytes: int = 20 * MIB
    """An image taken from the zip into a message (larger ones stay placeholders)."""


DEFAULT_LIMITS = ImportLimits()


class LimitExceeded(Exception):
    """Something in the file is bigger than a limit; ``reason`` says what, for the report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def json_depth_exceeds(value: object, limit: int) -> bool:
    """Whether ``value`` nests objects and arrays deeper than ``limit`` (checked without recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: list[object] = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def describe_size(size: int) -> str:
    """``size`` bytes for a person: "12 MB", "3.1 GB"."""
    if size >= 1024 * MIB:
        return f"{size / (1024 * MIB):.1f} GB"
    return f"{max(1, round(size / MIB))} MB"
