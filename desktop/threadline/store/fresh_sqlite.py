"""A new SQLite database made from the migrations' result in one transaction, without Alembic.

Running the migrations on an empty file imports Alembic, Mako, Pygments (Mako's error
pages), SQLModel and pydantic: tens of megabytes that a first start kept resident for as
long as the window stayed open, and a noticeable time (figures: docs/performance.md,
"Memory once the window has settled"). Nothing needs migrating in an empty file, so it is given the schema the
migrations end in instead: the statements SQLite itself holds for it (``sqlite_master``),
as ``fresh_sqlite_schema.py`` records them, then the head revision is stamped. A test builds
one database each way and compares them; after a new migration, ``python -m
threadline.store.fresh_sqlite_record`` rewrites the record (it runs the migrations once; then
``ruff format`` it).
PostgreSQL and older files still go through Alembic.
"""

from __future__ import annotations

import sqlalchemy as sa

from threadline.store.fresh_sqlite_schema import REVISION, STATEMENTS

_SHADOW_SUFFIXES = ("_data", "_idx", "_content", "_docsize", "_config")
"""Tables an FTS5 virtual table makes for itself (its creation makes them again)."""


def create_schema(connection: sa.Connection, head: str) -> bool:
    """Give an empty database the schema of revision ``head``; ``False`` (nothing done) when
    the record is of another revision, so the caller runs the migrations instead."""
    if head != REVISION:
        return False
    tables = connection.exec_driver_sql("SELECT count(*) FROM sqlite_master WHERE type = 'table'").scalar()
    if tables:
        return False  # another process made it while this one waited for the write lock
    for statement in STATEMENTS:
        connection.exec_driver_sql(statement)
    connection.exec_driver_sql("INSERT INTO alembic_version (version_num) VALUES (?)", (head,))
    return True


def snapshot(connection: sa.Connection) -> tuple[str, ...]:
    """The statements that make the schema of ``connection``'s database, in SQLite's order:
    its own ``CREATE`` texts, less what SQLite makes by itself (automatic indexes, the
    ``sqlite_`` tables, an FTS5 table's shadow tables)."""
    rows = connection.exec_driver_sql(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"
    ).all()
    virtual = [name for kind, name, sql in rows if kind == "table" and sql.startswith("CREATE VIRTUAL")]
    return tuple(
        sql
        for kind, name, sql in rows
        if not name.startswith("sqlite_")
        and not any(name == f"{table}{suffix}" for table in virtual for suffix in _SHADOW_SUFFIXES)
    )
