"""Two instances on one database: a reply another live instance is streaming is not "interrupted".

Each test writes a streaming reply, then sets its recorded writer and heartbeat as
another process would have left them, closes the store and opens it again (what
a second app instance does at start).
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from datetime import timedelta

import pytest
import sqlalchemy as sa
from alembic import command

from threadline.core.messages import Message, MessageStatus, utcnow
from threadline.store import db, migrate
from threadline.store.repository import Store
from threadline.store.writers import STALE_AFTER, left_behind, writer_alive

HOST = socket.gethostname()


@pytest.fixture
def live_pid() -> Iterator[int]:
    """The pid of another process on this host that is alive for the test."""
    process = subprocess.Popen(["sleep", "60"])
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait()


@pytest.fixture
def dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


async def streaming_reply(url: str, writer: str, age: timedelta) -> str:
    """A stored streaming reply whose writer last beat ``age`` ago; returns its id."""
    store = await Store.open(url)
    try:
        info = await store.create_session(title="shared")
        prompt = Message.prompt("Tell me a long story")
        await store.append_message(info.id, prompt)
        reply = Message.reply(parent_id=prompt.id, text="Once upon")
        await store.append_message(info.id, reply)
    finally:
        await store.close()
    engine = db.create_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(
                sa.text("UPDATE messages SET writer = :writer, heartbeat_at = :beat WHERE id = :id"),
                {"writer": writer, "beat": (utcnow() - age).replace(tzinfo=None), "id": reply.id},
            )
    finally:
        engine.dispose()
    return reply.id


async def status_after_reopen(url: str, message_id: str) -> MessageStatus:
    store = await Store.open(url)
    try:
        session = (await store.list_sessions())[0]
        return (await store.load_tree(session.id)).get(message_id).status
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_reply_of_a_live_instance_stays_streaming(store_url: str, live_pid: int) -> None:
    reply = await streaming_reply(store_url, f"{HOST}|{live_pid}", timedelta(seconds=2))
    assert await status_after_reopen(store_url, reply) is MessageStatus.STREAMING


@pytest.mark.asyncio
async def test_reply_of_a_dead_process_is_interrupted_at_once(store_url: str, dead_pid: int) -> None:
    reply = await streaming_reply(store_url, f"{HOST}|{dead_pid}", timedelta(seconds=1))
    assert await status_after_reopen(store_url, reply) is MessageStatus.INTERRUPTED


@pytest.mark.asyncio
async def test_a_live_pid_with_a_stale_heartbeat_is_interrupted(store_url: str, live_pid: int) -> None:
    """The pid may have been reused by something else: no heartbeat for a minute means no writer."""
    reply = await streaming_reply(store_url, f"{HOST}|{live_pid}", STALE_AFTER + timedelta(seconds=5))
    assert await status_after_reopen(store_url, reply) is MessageStatus.INTERRUPTED


@pytest.mark.asyncio
async def test_another_hosts_reply_is_judged_by_its_heartbeat(store_url: str) -> None:
    fresh = await streaming_reply(store_url, "other-machine|4242", timedelta(seconds=3))
    assert await status_after_reopen(store_url, fresh) is MessageStatus.STREAMING


@pytest.mark.asyncio
async def test_another_hosts_stale_reply_is_interrupted(store_url: str) -> None:
    stale = await streaming_reply(store_url, "other-machine|4242", STALE_AFTER * 2)
    assert await status_after_reopen(store_url, stale) is MessageStatus.INTERRUPTED


@pytest.mark.asyncio
async def test_text_writes_and_touches_are_heartbeats(store: Store) -> None:
    info = await store.create_session()
    prompt = Message.prompt("hi")
    reply = Message.reply(parent_id=prompt.id)
    await store.append_messages(info.id, [prompt, reply])

    def beat() -> tuple[str, object]:
        with store._engine.connect() as connection:  # reading the raw columns the store keeps
            row = connection.execute(
                sa.text("SELECT writer, heartbeat_at FROM messages WHERE id = :id"), {"id": reply.id}
            ).one()
        return row[0], row[1]

    writer, first = beat()
    assert writer == f"{HOST}|{os.getpid()}" and first is not None
    await store.update_message_text(reply.id, "Hel")
    _, second = beat()
    await store.touch_message(reply.id)
    _, third = beat()
    assert str(first) <= str(second) <= str(third)


def test_liveness_rules() -> None:
    now = utcnow()
    assert writer_alive(f"{HOST}|{os.getpid()}") is False  # an earlier store of this process
    assert writer_alive("elsewhere|1") is None
    assert left_behind(None, None, now)
    assert not left_behind("elsewhere|1", now - timedelta(seconds=1), now)
    assert left_behind("elsewhere|1", now - STALE_AFTER - timedelta(seconds=1), now)


@pytest.mark.asyncio
async def test_upgrade_from_0001_keeps_messages_and_adds_the_columns(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "old.sqlite3"
    url = Store.sqlite_url(path)
    engine = db.create_engine(url)
    try:
        migrate.run_alembic_upgrade(engine, "head")
        with engine.begin() as connection:
            command.downgrade(migrate.alembic_config(connection), "0001")
    finally:
        engine.dispose()
    store = await Store.open(url)  # at head again: write with the new code…
    info = await store.create_session(title="kept")
    prompt = Message.prompt("an old prompt that must survive")
    await store.append_message(info.id, prompt)
    await store.close()
    engine = db.create_engine(url)
    try:
        with engine.begin() as connection:  # …then take the schema back to 0001, data and all
            command.downgrade(migrate.alembic_config(connection), "0001")
            columns = {c["name"] for c in sa.inspect(connection).get_columns("messages")}
            assert "writer" not in columns
    finally:
        engine.dispose()

    store = await Store.open(url)  # an app of this version opens the 0001 database
    try:
        assert store.backup_path is not None and "-rev-0001" in store.backup_path.name
        tree = await store.load_tree(info.id)
        assert tree.get(prompt.id).text == "an old prompt that must survive"
        hits = await store.search("survive")
        assert [h.message_id for h in hits] == [prompt.id]  # the full-text index still works
    finally:
        await store.close()
