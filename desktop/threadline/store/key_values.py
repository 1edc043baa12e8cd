"""Settings and UI state: one JSON value per key, read and upserted through SQLAlchemy Core.

Read at every start and written by every send (the last-used model), so without the ORM
(see ``core_tables``).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from threadline.store.core_tables import settings, ui_state

NOTICES_SETTING = "notices"
"""Sentences an upgrade leaves for the user (a list of strings, never a secret): the window and
the commands show them once and clear the key (``engine.settings.take_notices``)."""

TABLES = {"settings": settings, "ui_state": ui_state}
"""The key-value tables, by name."""


def get_value(connection: sa.Connection, table: str, key: str, default: Any) -> Any:
    """The JSON value stored under ``key`` in ``settings`` or ``ui_state``, else ``default``."""
    clause = TABLES[table]
    row = connection.execute(sa.select(clause.c.value).where(clause.c.key == key)).first()
    return default if row is None else row.value


def set_value(connection: sa.Connection, table: str, key: str, value: Any) -> None:
    """Insert or replace one key, in one statement (``INSERT … ON CONFLICT DO UPDATE``).

    Not a read, then an insert or an update: two instances saving the same key at once —
    the last-used model, the window state — both read "absent", and the second insert
    fails on the primary key. The upsert lets the later write win instead.
    """
    clause = TABLES[table]
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        statement = pg_insert(clause).values(key=key, value=value)
        connection.execute(
            statement.on_conflict_do_update(index_elements=["key"], set_={"value": statement.excluded.value})
        )
    else:  # SQLite: the PostgreSQL dialect is not loaded (it costs every `ask` start)
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        lite = sqlite_insert(clause).values(key=key, value=value)
        connection.execute(
            lite.on_conflict_do_update(index_elements=["key"], set_={"value": lite.excluded.value})
        )
