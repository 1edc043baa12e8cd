"""Persistence: SQLModel tables, converters, Alembic migrations, search and the async ``Store``.

Only the errors are imported eagerly; ``Store`` (and with it SQLAlchemy and
SQLModel, slow to import; docs/performance.md) loads on first use so the window can
paint first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from threadline.store.errors import (
    CorruptDatabaseError,
    DatabaseUnreachableError,
    NotFoundError,
    ReadOnlyDatabaseError,
    SchemaTooNewError,
    StorageFullError,
    StoreBusyError,
    StoreClosedError,
    StoreError,
)

if TYPE_CHECKING:
    from threadline.store.repository import Store

__all__ = [
    "CorruptDatabaseError",
    "DatabaseUnreachableError",
    "NotFoundError",
    "ReadOnlyDatabaseError",
    "SchemaTooNewError",
    "StorageFullError",
    "Store",
    "StoreBusyError",
    "StoreClosedError",
    "StoreError",
]


def __getattr__(name: str) -> Any:
    if name == "Store":
        from threadline.store.repository import Store

        return Store
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
