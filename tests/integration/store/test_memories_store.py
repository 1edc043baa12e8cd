"""Saved memories (migration 0012) on real SQLite and PostgreSQL: stored, edited, deleted,
carried by an upgrade from 0011 and by a copy to a server; past-chat search keeps its scope."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio
import sqlalchemy as sa
from tests.support.backends import BACKENDS, empty_database
from tests.support.postgres import PostgresServer

from threadline.core.memory import Memory, MemoryScope
from threadline.core.messages import Message
from threadline.core.project import Project
from threadline.store import db, migrate
from threadline.store.copy import copy_database
from threadline.store.repository import Store
from threadline.store.search import ChatScope

pytestmark = pytest.mark.asyncio


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from empty_database(request, tmp_path / "memories.db")


@pytest_asyncio.fixture
async def store(url: str) -> AsyncIterator[Store]:
    opened = await Store.open(url)
    try:
        yield opened
    finally:
        await opened.close()


async def test_memories_are_stored_edited_and_deleted(store: Store) -> None:
    first = await store.save_memory(Memory("Uses PostgreSQL 16"))
    second = await store.save_memory(Memory("Service is Heron", MemoryScope.PROJECT, "p1"))
    assert [(m.text, m.scope, m.target) for m in await store.memories()] == [
        ("Uses PostgreSQL 16", MemoryScope.GLOBAL, ""),
        ("Service is Heron", MemoryScope.PROJECT, "p1"),
    ]
    await store.save_memory(replace(first, text="Uses PostgreSQL 17"))
    await store.delete_memory(second.id)
    stored = await store.memories()
    assert [m.text for m in stored] == ["Uses PostgreSQL 17"] and stored[0].created_at == first.created_at


async def test_past_chat_search_keeps_to_its_scope_and_leaves_out_the_asking_chat(store: Store) -> None:
    await store.save_project(_project("p1"))
    await store.save_project(_project("p2"))
    chats = {}
    for name, project in (("asking", "p1"), ("same", "p1"), ("other", "p2"), ("loose", None)):
        info = await store.create_session(title=name)
        if project is not None:
            await store.set_session_project(info.id, project)
        await store.append_message(info.id, Message.prompt(f"heron in {name}"))
        chats[name] = info.id

    async def found(scope: ChatScope) -> set[str]:
        return {hit.session_title for hit in await store.search_past_chats("heron", scope, 10)}

    assert await found(ChatScope(project_id="p1", exclude_session=chats["asking"])) == {"same"}
    assert await found(ChatScope(outside_projects=True, exclude_session=chats["loose"])) == set()
    assert await found(ChatScope(outside_projects=True)) == {"loose"}
    assert await found(ChatScope(exclude_session=chats["asking"])) == {"same", "other", "loose"}


def _project(project_id: str) -> Project:
    return Project(id=project_id, name=project_id)


@pytest.mark.expected_log_warnings("without a backup")
async def test_a_0011_database_upgrades_with_an_empty_memories_table(url: str) -> None:
    engine = db.create_engine(url)
    try:
        migrate.run_alembic_upgrade(engine, "0011")
        with engine.connect() as connection:
            assert "memories" not in sa.inspect(connection).get_table_names()
    finally:
        engine.dispose()
    store = await Store.open(url)
    try:
        assert await store.memories() == []
        await store.save_memory(Memory("kept"))
        assert [m.text for m in await store.memories()] == ["kept"]
    finally:
        await store.close()


@pytest.mark.postgres
async def test_a_copy_to_a_server_carries_the_memories(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    source = Store.sqlite_url(tmp_path / "source.db")
    server = postgres_server.create_database()

    async def memories(target: str, add: Memory | None = None) -> list[Memory]:
        store = await Store.open(target)
        try:
            if add is not None:
                await store.save_memory(add)
            return await store.memories()
        finally:
            await store.close()

    try:
        written = await memories(source, Memory("Likes short answers", MemoryScope.AGENT, "default"))
        report = await asyncio.to_thread(copy_database, source, server)
        assert report.identical, report.differences()
        assert await memories(server) == written
    finally:
        postgres_server.drop_database(server)
