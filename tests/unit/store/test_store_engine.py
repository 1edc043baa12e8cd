"""Connection settings and the one-worker-thread model."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from threadline.core.messages import Message
from threadline.store import db
from threadline.store.errors import StoreError
from threadline.store.repository import Store


@pytest.mark.asyncio
async def test_sqlite_connections_use_wal_normal_sync_foreign_keys_and_busy_timeout(tmp_path: Path) -> None:
    store = await Store.open(Store.sqlite_url(tmp_path / "t.sqlite3"))
    try:

        def pragmas() -> dict[str, object]:
            with store._engine.connect() as conn:
                return {
                    name: conn.exec_driver_sql(f"PRAGMA {name}").scalar()
                    for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
                }

        values = await asyncio.get_running_loop().run_in_executor(store._executor, pragmas)
    finally:
        await store.close()
    assert values == {"journal_mode": "wal", "synchronous": 1, "foreign_keys": 1, "busy_timeout": 5000}


@pytest.mark.asyncio
async def test_all_database_work_runs_on_one_named_worker_thread(store: Store) -> None:
    seen: set[str] = set()
    event_thread = threading.current_thread().name
    sa.event.listen(store._engine, "checkout", lambda *_: seen.add(threading.current_thread().name))
    info = await store.create_session()
    await asyncio.gather(*(store.append_message(info.id, Message.prompt(f"m{i}")) for i in range(30)))
    await store.list_sessions()
    assert event_thread not in seen
    assert len(seen) == 1
    assert next(iter(seen)).startswith("threadline-store")


@pytest.mark.asyncio
async def test_concurrent_appends_are_serialised_in_call_order(store: Store) -> None:
    info = await store.create_session()
    messages = [Message.prompt(f"message {i}") for i in range(40)]
    await asyncio.gather(*(store.append_message(info.id, m) for m in messages))
    tree = await store.load_tree(info.id)
    assert [m.id for m in tree.children(None)] == [m.id for m in messages]
    assert tree.active_leaf == messages[-1].id


def test_urls() -> None:
    path = Path("/tmp/some dir/x.sqlite3")
    url = Store.sqlite_url(path)
    assert url.startswith("sqlite:///")
    assert db.sqlite_path(url) == path
    assert db.sqlite_path("sqlite://") is None
    assert db.sqlite_path("postgresql+psycopg://u@h/db") is None


@pytest.mark.asyncio
async def test_in_memory_sqlite_works() -> None:
    store = await Store.open("sqlite://")
    try:
        info = await store.create_session(title="mem")
        await store.append_message(info.id, Message.prompt("hello memory"))
        assert [h.session_id for h in await store.search("memory")] == [info.id]
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_an_unusable_url_is_a_store_error() -> None:
    with pytest.raises(StoreError) as caught:
        await Store.open("nosuchdialect://x")
    assert caught.value.user_message
