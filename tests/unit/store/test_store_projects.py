"""Projects in the store, on SQLite and PostgreSQL: listing, moving chats, scoped pages and search."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa

from threadline.core.messages import Message
from threadline.core.project import Project
from threadline.core.sticky import ContextSource, StickyContext
from threadline.store import db, migrate
from threadline.store.errors import NotFoundError
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio


async def test_a_project_round_trips_and_lists_by_name(store: Store) -> None:
    context = StickyContext(sources=(ContextSource("spec/*.md", base="/work/site"),))
    zebra = await store.save_project(Project.create("zebra", colour="#10b981", instructions="Be brief."))
    alpha = await store.save_project(replace(Project.create("Alpha"), context=context))
    listed = await store.list_projects()
    assert [p.name for p in listed] == ["Alpha", "zebra"]
    assert listed[0].context == context and listed[1].instructions == "Be brief."
    assert listed[1].colour == "#10b981"
    renamed = await store.save_project(replace(alpha, name="Beta"))
    assert (await store.get_project(alpha.id)) == renamed and renamed.updated_at >= alpha.updated_at
    assert (await store.find_project_by_name("ZEBRA")) == zebra
    assert await store.find_project_by_name("nothing") is None


async def test_pages_and_searches_keep_to_one_project(store: Store) -> None:
    project = await store.save_project(Project.create("Garden"))
    inside = [await store.create_session(title=f"roses {i}") for i in range(3)]
    outside = await store.create_session(title="roses elsewhere")
    for info in inside:
        await store.set_session_project(info.id, project.id)
        await store.append_message(info.id, Message.prompt("pruning roses in spring"))
    await store.append_message(outside.id, Message.prompt("pruning roses indoors"))

    page = await store.list_sessions(project_id=project.id, limit=2)
    rest = await store.list_sessions(project_id=project.id, limit=2, after=page[-1])
    assert {s.id for s in page + rest} == {s.id for s in inside} and len(page + rest) == 3
    assert all(s.project_id == project.id for s in page + rest)
    assert len(await store.list_sessions()) == 4  # the unscoped list still holds everything

    hits = await store.search("pruning", project_id=project.id)
    assert {h.session_id for h in hits} == {s.id for s in inside}
    assert len(await store.search("pruning")) == 4
    titled = await store.search_sessions("roses", project_id=project.id)
    assert {s.id for s in titled} == {s.id for s in inside}
    assert await store.project_chat_counts() == {project.id: 3}


async def test_deleting_a_project_moves_its_chats_out_and_keeps_them(store: Store) -> None:
    project = await store.save_project(Project.create("Temporary"))
    info = await store.create_session(title="keep me")
    moved = await store.set_session_project(info.id, project.id)
    assert moved.project_id == project.id
    assert await store.delete_project(project.id) == 1
    again = await store.get_session(info.id)
    assert again is not None and again.project_id is None
    assert await store.list_projects() == []
    with pytest.raises(NotFoundError):
        await store.delete_project(project.id)
    with pytest.raises(NotFoundError):
        await store.set_session_project(info.id, project.id)


async def test_a_0004_database_upgrades_with_no_projects(tmp_path: Path) -> None:
    url = Store.sqlite_url(tmp_path / "old.sqlite3")
    engine = db.create_engine(url)
    try:
        migrate.run_alembic_upgrade(engine, "0004")
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO sessions (id, title, title_set_by_user, pinned, archived, folder, agent_id,"
                    " provider, model, preview, checkpoints, created_at, updated_at, summary, context)"
                    " VALUES ('old', 'Old chat', 0, 0, 0, '', '', '', '', '', '{}',"
                    " '2026-01-01 00:00:00', '2026-01-01 00:00:00', '', '{}')"
                )
            )
    finally:
        engine.dispose()
    store = await Store.open(url)
    try:
        info = await store.get_session("old")
        assert info is not None and info.title == "Old chat" and info.project_id is None
        assert await store.list_projects() == []
    finally:
        await store.close()
