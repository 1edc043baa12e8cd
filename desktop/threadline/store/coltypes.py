"""Column types shared by the tables and the migrations.

SQLite has no time-zone-aware timestamp: it would store whatever ``isoformat``
gives and hand back naive datetimes. ``UTCDateTime`` normalises to naive UTC on
the way in (so text ordering equals time ordering) and attaches UTC on the way
out, so callers always see aware UTC datetimes (the store's contract) on every
backend. ``JSONValue`` is JSON on SQLite and JSONB on PostgreSQL.

SQLAlchemy's PostgreSQL dialect (memory and import time a SQLite user need not pay,
its asyncpg support included; docs/performance.md) is imported only when a PostgreSQL
database is used:
``JSONValue``'s PostgreSQL variant names ``JSONB`` when SQLAlchemy first asks for
that dialect's type, not when the tables are declared.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """An aware UTC datetime, stored as naive UTC on SQLite and timestamptz elsewhere."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class _JSONB(sa.types.TypeDecorator[Any]):
    """PostgreSQL's ``JSONB``, imported when that dialect first asks for it."""

    impl = sa.JSON()
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> sa.types.TypeEngine[Any]:
        from sqlalchemy.dialects.postgresql import JSONB

        return JSONB()


JSONValue = sa.JSON().with_variant(_JSONB(), "postgresql")
"""JSON on SQLite (text), JSONB on PostgreSQL."""
