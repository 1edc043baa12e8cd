"""Column types shared by the tables and the migrations.

SQLite has no time-zone-aware timestamp: it would store whatever ``isoformat``
gives and hand back naive datetimes. ``UTCDateTime`` normalises to naive UTC on
the way in (so text ordering equals time ordering) and attaches UTC on the way
out, so callers always see aware UTC datetimes (the store's contract) on every
backend. ``JSONValue`` is JSON on SQLite and JSONB on PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
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


JSONValue = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
"""JSON on SQLite (text), JSONB on PostgreSQL."""
