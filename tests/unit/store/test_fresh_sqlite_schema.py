"""A new SQLite file gets the schema the migrations end in without running them (Alembic, Mako,
Pygments, SQLModel and pydantic stay unloaded on a first start): the two ways give the same
database, and the record of the schema is of the head revision."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from tests.support.fresh_python import run_fresh

from threadline.store import fresh_sqlite, migrate
from threadline.store.fresh_sqlite_schema import REVISION
from threadline.store.repository import Store

REGENERATE = "run `python -m threadline.store.fresh_sqlite_record`, then `ruff format` the file it writes"


def schema_of(path: Path) -> list[tuple[str, str, str, str]]:
    """Everything SQLite holds about the file's schema (shadow tables and automatic indexes too)."""
    with sqlite3.connect(path) as connection:
        rows = connection.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
        ).fetchall()
        columns = [
            (table, *map(str, column))
            for (table,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            for column in connection.execute(f"PRAGMA table_info('{table}')")
        ]
        version = connection.execute("SELECT version_num FROM alembic_version").fetchall()
    return [*rows, *columns, ("version", str(version), "", "")]


def test_the_record_is_of_the_head_revision() -> None:
    assert REVISION == migrate.HEAD_REVISION, f"a migration was added: {REGENERATE}"


def test_a_new_file_made_without_the_migrations_equals_one_made_by_them(tmp_path: Path) -> None:
    migrated = tmp_path / "migrated.db"
    engine = sa.create_engine(f"sqlite:///{migrated}")
    migrate.run_alembic_upgrade(engine)
    engine.dispose()
    made = tmp_path / "made.db"
    engine = sa.create_engine(f"sqlite:///{made}")
    with engine.begin() as connection:
        assert fresh_sqlite.create_schema(connection, migrate.HEAD_REVISION)
    engine.dispose()
    assert schema_of(made) == schema_of(migrated), REGENERATE


@pytest.mark.asyncio
async def test_a_new_database_opens_at_the_head_revision_and_works(tmp_path: Path) -> None:
    store = await Store.open(Store.sqlite_url(tmp_path / "threadline.db"))
    try:
        info = await store.create_session(title="first")
        assert (await store.get_session(info.id)) is not None
    finally:
        await store.close()
    with sqlite3.connect(tmp_path / "threadline.db") as connection:
        assert connection.execute("SELECT version_num FROM alembic_version").fetchall() == [(REVISION,)]


FIRST_START = """
import asyncio, sys
from pathlib import Path
from threadline.engine.engine import Engine

async def main(data_dir):
    engine = await Engine.open(Path(data_dir), watch_changes=True)
    try:
        await engine.store.list_sessions(limit=100)
    finally:
        await engine.aclose()

asyncio.run(main(sys.argv[1]))
heavy = ("alembic", "mako", "pygments", "sqlmodel", "pydantic")
print(",".join(sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in heavy})))
"""


def test_a_first_start_on_a_new_folder_loads_no_migration_machinery(tmp_path: Path) -> None:
    assert run_fresh(FIRST_START, str(tmp_path / "new")).strip() == ""
    assert (tmp_path / "new" / "threadline.db").exists()
