"""The start's reads go through SQLAlchemy Core: the ORM, SQLModel and pydantic load on first need.

``core_tables`` names the columns a second time (as light ``sa.table`` clauses), so the first
test holds them to ``tables.py``; the second opens a store and does what a window's start
does in a fresh interpreter on an existing database, and checks that none of the ORM stack
was imported, then that the first write loads it and works.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

from threadline.store import core_tables
from threadline.store.coltypes import UTCDateTime
from threadline.store.tables import metadata


def test_core_clauses_name_the_columns_of_the_tables() -> None:
    for clause in core_tables.ALL:
        table = metadata.tables[clause.name]
        for column in clause.c:
            declared = table.c[column.name]
            where = (clause.name, column.name)
            assert column.type._type_affinity is declared.type._type_affinity, where
            assert isinstance(column.type, UTCDateTime) == isinstance(declared.type, UTCDateTime), where
            if isinstance(declared.type, sa.JSON):  # JSONB on PostgreSQL
                assert column.type._variant_mapping.keys() == declared.type._variant_mapping.keys(), where
        assert set(clause.c.keys()) == set(table.c.keys()), clause.name


START = """
import asyncio, sys
from pathlib import Path
from threadline.engine.engine import Engine

ORM = ("sqlmodel", "pydantic", "sqlalchemy.orm")

async def main(data_dir):
    engine = await Engine.open(Path(data_dir), watch_changes=True)
    try:
        await engine.store.get_setting("ui.theme")
        await engine.store.get_ui_state("ui.window")
        await engine.store.list_sessions(limit=100)
        await engine.store.list_projects()
        await engine.store.list_providers()
        loaded = [m for m in ORM if m in sys.modules]
        assert not loaded, loaded
        info = await engine.store.create_session(title="first")  # a write: the ORM loads now
        assert "sqlmodel" in sys.modules
        assert [s.id for s in await engine.store.list_sessions(limit=100)] == [info.id]
    finally:
        await engine.aclose()

asyncio.run(main(sys.argv[1]))
"""


CREATE = """
import asyncio, sys
from pathlib import Path
from threadline.engine.engine import Engine

async def main(data_dir):
    await (await Engine.open(Path(data_dir))).aclose()

asyncio.run(main(sys.argv[1]))
"""


def test_a_start_reads_without_the_orm_and_the_first_write_loads_it(tmp_path: Path) -> None:
    # The database is made (migrations: Alembic loads the tables) by an earlier run, as at any
    # start but the very first.
    for script in (CREATE, START):
        result = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr
