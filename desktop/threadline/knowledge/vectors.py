"""Vector search through ``sqlite-vec``, loaded into the index's SQLite (``driver``).

The index's SQLite is ``sqlean``'s build wherever it is installed, which always loads
extensions; with Python's own ``sqlite3`` instead, a build without
``enable_load_extension`` leaves the index keyword-only and ``vector_support()`` says why.
Nothing is replaced by a hand-written vector store (docs/knowledge.md, "Keyword-only").

Vectors are searched in two steps (docs/knowledge.md, "Vector search at scale"): each is also
kept as one bit per dimension (its sign) in a ``vec0`` table, whose Hamming-distance scan over a
million rows is cheap; the best of those are re-ranked by cosine distance on the full vectors.
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Sequence
from functools import cache
from typing import Protocol

from threadline.knowledge import driver


class Embedder(Protocol):
    """Turns texts into vectors (one per text, in order); raises ``EmbeddingError`` when it cannot."""

    @property
    def model(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class EmbeddingError(Exception):
    """The embedding server could not be reached or refused; ``str()`` says which, for the user.

    ``server`` (its address, without any credentials) and ``reason`` ("connection refused",
    "no answer in 60 s", "HTTP 503") let an indexing that waits for it say where and why.
    """

    def __init__(self, message: str, *, server: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.server = server
        self.reason = reason


@cache
def vector_support() -> str:
    """ "" when ``sqlite-vec`` loads here; otherwise why not, in words for the user."""
    connection = driver.connect(":memory:")
    try:
        return _load(connection)
    finally:
        connection.close()


def load_vectors(connection: sqlite3.Connection) -> bool:
    """Loads ``sqlite-vec`` into ``connection``; whether it did."""
    return not vector_support() and not _load(connection)


def _load(connection: sqlite3.Connection) -> str:
    if not hasattr(connection, "enable_load_extension"):
        return "this Python's SQLite cannot load extensions, so sqlite-vec is unavailable"
    try:
        import sqlite_vec  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return "sqlite-vec is not installed"
    try:
        connection.enable_load_extension(True)
        try:
            sqlite_vec.load(connection)
        finally:
            connection.enable_load_extension(False)
    except driver.errors() as err:
        return f"sqlite-vec could not be loaded ({err})"
    return ""


def pack(vector: Sequence[float]) -> bytes:
    """A vector as sqlite-vec stores it: little-endian float32."""
    return struct.pack(f"<{len(vector)}f", *vector)


def bit_width(dimensions: int) -> int:
    """Bits stored per vector: one per dimension, rounded up to whole bytes."""
    return -(-dimensions // 8) * 8


def pack_bits(vector: Sequence[float]) -> bytes:
    """One bit per dimension, set when the value is positive (padded with zeros to whole bytes)."""
    out = bytearray(bit_width(len(vector)) // 8)
    for position, value in enumerate(vector):
        if value > 0:
            out[position >> 3] |= 1 << (position & 7)
    return bytes(out)
