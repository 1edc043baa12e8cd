"""Integrity checks: a healthy database passes, a damaged page or a stale search index is found."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from threadline.core.messages import Message
from threadline.store.integrity import check_database, check_sqlite_file
from threadline.store.repository import Store


async def write_database(path: Path, messages: int = 400) -> None:
    """A database whose messages fill many pages (so one in the middle belongs to them)."""
    store = await Store.open(Store.sqlite_url(path))
    try:
        info = await store.create_session(title="many")
        parent = None
        for i in range(messages):
            prompt = Message.prompt(f"message {i}: " + "lorem ipsum dolor sit amet " * 20, parent_id=parent)
            await store.append_message(info.id, prompt)
            parent = prompt.id
    finally:
        await store.close()


def damage_a_messages_page(path: Path) -> int:
    """Overwrite the middle one of the ``messages`` table's b-tree pages; returns its number."""
    connection = sqlite3.connect(path)
    try:
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        pages = [int(r[0]) for r in connection.execute("SELECT pageno FROM dbstat WHERE name = 'messages'")]
    finally:
        connection.close()
    assert len(pages) > 10 and not Path(f"{path}-wal").exists()
    page = sorted(pages)[len(pages) // 2]
    with path.open("r+b") as file:
        file.seek((page - 1) * page_size)
        file.write(bytes([0xA5]) * page_size)
    return page


@pytest.mark.asyncio
async def test_a_healthy_database_has_no_problems(store_url: str) -> None:
    store = await Store.open(store_url)
    try:
        info = await store.create_session(title="fine")
        await store.append_message(info.id, Message.prompt("all good"))
        assert await store.check_integrity() == []
    finally:
        await store.close()
    assert await asyncio.to_thread(check_database, store_url) == []


@pytest.mark.asyncio
async def test_a_damaged_page_is_found(tmp_path: Path) -> None:
    path = tmp_path / "threadline.db"
    await write_database(path)
    assert check_sqlite_file(path) == []
    damage_a_messages_page(path)
    problems = check_sqlite_file(path)
    assert problems and all(isinstance(p, str) and p for p in problems)
    assert check_database(Store.sqlite_url(path)) == problems


@pytest.mark.asyncio
async def test_a_search_index_out_of_step_with_the_messages_is_found(tmp_path: Path) -> None:
    path = tmp_path / "threadline.db"
    await write_database(path, messages=5)
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TRIGGER messages_fts_update")
        connection.execute("UPDATE messages SET text = 'changed behind the index'")
    connection.close()
    store = await Store.open(Store.sqlite_url(path))
    try:
        problems = await store.check_integrity()
    finally:
        await store.close()
    assert len(problems) == 1 and problems[0].startswith("search index does not match")


def test_a_missing_file_has_nothing_to_check(tmp_path: Path) -> None:
    assert check_database(Store.sqlite_url(tmp_path / "never-created.db")) == []
