"""How much a scan looks at and how much content is kept (docs/workspace.md, "Limits")."""

from __future__ import annotations

import threading
from dataclasses import dataclass

MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    max_file_bytes: int = 2 * MB
    """A file larger than this is hashed (its change is seen) but its content is not kept."""
    max_turn_bytes: int = 64 * MB
    """New content kept per turn; past it, changes are recorded without their content."""
    max_files: int = 250_000
    """Files a scan looks at; the rest of the folder is named as not looked at."""
    max_scan_bytes: int = 512 * MB
    """Bytes one scan reads (files it has not seen unchanged before); the rest are named."""


def size_words(size: int) -> str:
    if size >= MB:
        return f"{size / MB:g} MB"
    if size >= 1024:
        return f"{size / 1024:g} KB"
    return f"{size} bytes"


class Budget:
    """The content bytes a turn may still keep; shared by its tool calls (thread-safe)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def take(self, size: int) -> bool:
        with self._lock:
            if self.used + size > self.limit:
                return False
            self.used += size
            return True

    @property
    def refusal(self) -> str:
        return f"over this turn's limit of {size_words(self.limit)} of kept content"


DEFAULT_LIMITS = Limits()
