"""A start and a turn go through SQLAlchemy Core: the ORM, SQLModel and pydantic load on first need.

``core_tables`` names the columns a second time (as light ``sa.table`` clauses), so the first
test holds them to ``tables.py``; the second, in a fresh interpreter on an existing database, does
what a window's start reads and what a turn writes, checks that none of the ORM stack was
imported, then that an operation still written with the ORM loads it and works.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from tests.support.fresh_python import run_fresh

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
from datetime import timedelta
from pathlib import Path
from threadline.core.messages import Message, MessageStatus
from threadline.core.project import Project
from threadline.engine.engine import Engine

ORM = ("sqlmodel", "pydantic", "sqlalchemy.orm")

def orm_loaded():
    return [m for m in ORM if m in sys.modules]

async def main(data_dir):
    engine = await Engine.open(Path(data_dir), watch_changes=True)
    store = engine.store
    try:
        # What a window's start reads.
        await store.get_setting("ui.theme")
        await store.get_ui_state("ui.window")
        await store.list_sessions(limit=100)
        await store.list_projects()
        await store.list_providers()
        await store.list_agents()
        assert not orm_loaded(), orm_loaded()
        # What a turn writes (as `threadline ask` does).
        info = await store.create_session(title="first")
        assert (await store.acquire_lease(info.id, "me|1|t", timedelta(seconds=30))).ok
        prompt = Message.prompt("hi")
        reply = Message.reply(parent_id=prompt.id, status=MessageStatus.STREAMING)
        await store.append_messages(info.id, [prompt, reply])
        await store.update_message_text(reply.id, "Hel")
        await store.update_message(reply.copy(text="Hello", status=MessageStatus.COMPLETE))
        await store.rename_session(info.id, "Greeting", by_user=False)
        await store.set_setting("last_used", {"model": "m"})
        await store.release_lease(info.id, "me|1|t")
        tree = await store.load_tree(info.id)
        assert [m.text for m in tree.path()] == ["hi", "Hello"], tree.path()
        assert (await store.get_session(info.id)).title == "Greeting"
        # What the sidebar's filter, search and project list read.
        assert [s.id for s in await store.search_sessions("greet")] == [info.id]
        assert [h.message_id for h in await store.search("hello")] == [reply.id]
        assert await store.project_chat_counts() == {}
        assert not orm_loaded(), orm_loaded()
        # Operations still written with the ORM load it when first used.
        await store.save_project(Project.create("Work"))
        assert "sqlmodel" in sys.modules
        assert [p.name for p in await store.list_projects()] == ["Work"]
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


def test_a_start_and_a_turn_run_without_the_orm_and_other_writes_load_it(tmp_path: Path) -> None:
    # The database is made (migrations: Alembic loads the tables) by an earlier run, as at any
    # start but the very first.
    for script in (CREATE, START):
        run_fresh(script, str(tmp_path))
