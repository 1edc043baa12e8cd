"""Vector search through ``sqlite-vec``, when this Python's SQLite can load it.

Python's ``sqlite3`` can load extensions only when it was built to
(``Connection.enable_load_extension`` exists); some builds (pyenv's default, several
distributions' minimal ones) leave it out. Then the index is keyword-only and says
why in ``vector_support()``; nothing is replaced by a hand-written vector store
(docs/knowledge.md, "Keyword-only").
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Sequence
from functools import cache
from typing import Protocol


class Embedder(Protocol):
    """Turns texts into vectors (one per text, in order); raises ``EmbeddingError`` when it cannot."""

    @property
    def model(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class EmbeddingError(Exception):
    """The embedding server could not be reached or refused; ``str()`` says which, for the user."""


@cache
def vector_support() -> str:
    """ "" when ``sqlite-vec`` loads here; otherwise why not, in words for the user."""
    connection = sqlite3.connect(":memory:")
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
    except sqlite3.Error as err:
        return f"sqlite-vec could not be loaded ({err})"
    return ""


def pack(vector: Sequence[float]) -> bytes:
    """A vector as sqlite-vec stores it: little-endian float32."""
    return struct.pack(f"<{len(vector)}f", *vector)
