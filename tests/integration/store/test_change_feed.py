"""The change feed on a real SQLite file and a real PostgreSQL server.

Triggers log what any writer did; the feed hands the entries out in order with the
rows they name, resumes after a lost connection without missing one, and says so
when it fell behind the trimmed log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa
from tests.support.backends import BACKENDS, empty_database
from tests.support.postgres import PostgresServer

from threadline.core.messages import Message, MessageStatus
from threadline.core.project import Project
from threadline.store.change_feed import ChangeBatch, ChangeFeed, ChangeKind
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio
WAIT = 20.0


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from empty_database(request, tmp_path / "feed.db")


async def collect(feed: ChangeFeed, until_seq: int, messages_of: tuple[str, ...] = ()) -> list[ChangeBatch]:
    batches: list[ChangeBatch] = []
    async with asyncio.timeout(WAIT):
        while feed.last_seq < until_seq:
            batches.append(await feed.next_batch(messages_of))
    return batches


async def newest_seq(store: Store) -> int:
    engine = sa.create_engine(store.url)
    try:
        with engine.connect() as connection:
            return int(connection.execute(sa.text("SELECT max(seq) FROM change_log")).scalar_one() or 0)
    finally:
        engine.dispose()


async def test_every_write_is_one_entry_in_order_with_the_rows_it_names(url: str) -> None:
    store = await Store.open(url)
    feed = await ChangeFeed.open(url)
    try:
        info = await store.create_session(title="one")
        prompt = Message.prompt("hello")
        await store.append_message(info.id, prompt)
        reply = Message.reply(parent_id=prompt.id)
        reply.status = MessageStatus.STREAMING
        await store.append_message(info.id, reply)
        await store.update_message_text(reply.id, "Hel")
        await store.touch_message(reply.id)  # a heartbeat: nothing a reader shows
        await store.update_message_text(reply.id, "Hello")
        reply.text = "Hello"
        reply.status = MessageStatus.COMPLETE
        await store.update_message(reply)
        await store.rename_session(info.id, "renamed", by_user=True)
        batches = await collect(feed, await newest_seq(store), (info.id,))
        changes = [c for b in batches for c in b.changes]
        kinds = [c.kind for c in changes]
        assert kinds[0] is ChangeKind.SESSION_CREATED
        assert [k for k in kinds if k.value.startswith("message")] == [
            ChangeKind.MESSAGE_ADDED,
            ChangeKind.MESSAGE_ADDED,
            ChangeKind.MESSAGE_TEXT,
            ChangeKind.MESSAGE_TEXT,
            ChangeKind.MESSAGE_CHANGED,
        ]
        assert kinds[-1] is ChangeKind.SESSION_CHANGED
        assert [c.seq for c in changes] == sorted({c.seq for c in changes})
        last = batches[-1]
        assert last.sessions[info.id] is not None and last.sessions[info.id].title == "renamed"  # type: ignore[union-attr]
        stored = {m.message.id: m.message for b in batches for m in b.messages}
        assert stored[reply.id].text == "Hello"

        await store.delete_session(info.id)
        batches = await collect(feed, await newest_seq(store))
        changes = [c for b in batches for c in b.changes]
        # The cascade's message deletes are not logged: the session's entry says it all.
        assert [c.kind for c in changes] == [ChangeKind.SESSION_DELETED]
        assert batches[-1].sessions == {info.id: None}
    finally:
        await feed.aclose()
        await store.close()


async def test_each_project_write_is_one_project_entry_and_no_session_lookup(url: str) -> None:
    """Creating, editing and deleting a project each log one ``project_changed`` entry naming
    the project (migration 0009); the feed does not take the project's id for a session."""
    store = await Store.open(url)
    feed = await ChangeFeed.open(url)
    try:
        project = await store.save_project(Project.create("Garden", colour="#10b981"))
        batches = await collect(feed, await newest_seq(store))
        assert [(c.kind, c.session_id, c.message_id) for b in batches for c in b.changes] == [
            (ChangeKind.PROJECT_CHANGED, project.id, None)
        ]
        assert all(b.projects_changed for b in batches)
        assert all(project.id not in b.sessions for b in batches)

        await store.save_project(replace(project, name="Allotment", instructions="Metric units."))
        batches = await collect(feed, await newest_seq(store))
        assert [c.kind for b in batches for c in b.changes] == [ChangeKind.PROJECT_CHANGED]

        chat = await store.create_session(title="in the garden")
        await store.set_session_project(chat.id, project.id)
        await store.delete_project(project.id)
        batches = await collect(feed, await newest_seq(store))
        changes = [(c.kind, c.session_id) for b in batches for c in b.changes]
        # The chat moved out of the deleted project logs its own entry, in the same commit.
        assert changes.count((ChangeKind.PROJECT_CHANGED, project.id)) == 1
        assert (ChangeKind.SESSION_CHANGED, chat.id) in changes
        assert changes[-2:] in (
            [(ChangeKind.SESSION_CHANGED, chat.id), (ChangeKind.PROJECT_CHANGED, project.id)],
            [(ChangeKind.PROJECT_CHANGED, project.id), (ChangeKind.SESSION_CHANGED, chat.id)],
        )
        assert set(batches[-1].sessions) == {chat.id}
        assert batches[-1].sessions[chat.id] is not None and batches[-1].sessions[chat.id].project_id is None  # type: ignore[union-attr]

        await store.append_message(chat.id, Message.prompt("no project here"))
        batches = await collect(feed, await newest_seq(store))
        assert not any(b.projects_changed for b in batches)
    finally:
        await feed.aclose()
        await store.close()


async def test_messages_of_other_sessions_are_not_fetched(url: str) -> None:
    store = await Store.open(url)
    feed = await ChangeFeed.open(url)
    try:
        shown = await store.create_session(title="open")
        other = await store.create_session(title="closed")
        await store.append_message(shown.id, Message.prompt("in the open one"))
        await store.append_message(other.id, Message.prompt("in the other"))
        batches = await collect(feed, await newest_seq(store), (shown.id,))
        assert [m.message.text for b in batches for m in b.messages] == ["in the open one"]
    finally:
        await feed.aclose()
        await store.close()


async def test_a_reader_behind_the_trimmed_log_is_told(url: str) -> None:
    store = await Store.open(url)
    feed = await ChangeFeed.open(url)
    try:
        info = await store.create_session(title="x")
        engine = sa.create_engine(url)
        try:
            with engine.begin() as connection:  # as if the log had been trimmed past this reader
                connection.execute(sa.text("DELETE FROM change_log"))
        finally:
            engine.dispose()
        await store.rename_session(info.id, "y", by_user=True)
        batch = await asyncio.wait_for(feed.next_batch(), WAIT)
        assert batch.missed
        assert [c.kind for c in batch.changes] == [ChangeKind.SESSION_CHANGED]
    finally:
        await feed.aclose()
        await store.close()


async def test_a_kind_logged_by_a_newer_version_is_passed_over(url: str) -> None:
    store = await Store.open(url)
    feed = await ChangeFeed.open(url)
    try:
        engine = sa.create_engine(url)
        try:
            with engine.begin() as connection:  # as a newer Threadline on this database would
                connection.execute(
                    sa.text(
                        "INSERT INTO change_log (at, kind, session_id, message_id) "
                        "VALUES (CURRENT_TIMESTAMP, 'something_new', 'x', NULL)"
                    )
                )
        finally:
            engine.dispose()
        info = await store.create_session(title="after it")
        batches = await collect(feed, await newest_seq(store))
        changes = [c for b in batches for c in b.changes]
        assert [(c.kind, c.session_id) for c in changes] == [(ChangeKind.SESSION_CREATED, info.id)]
    finally:
        await feed.aclose()
        await store.close()


async def test_the_log_keeps_only_its_newest_entries(tmp_path: Path) -> None:
    url = Store.sqlite_url(tmp_path / "trim.db")
    store = await Store.open(url)
    try:
        info = await store.create_session(title="x")
        engine = sa.create_engine(url)
        try:
            with engine.begin() as connection:
                for n in range(10_150):
                    connection.execute(
                        sa.text("UPDATE sessions SET title = :t WHERE id = :id"),
                        {"t": f"t{n}", "id": info.id},
                    )
            with engine.connect() as connection:
                count, low, high = connection.execute(
                    sa.text("SELECT count(*), min(seq), max(seq) FROM change_log")
                ).one()
        finally:
            engine.dispose()
        assert high == 10_151
        assert count < 10_000 + 100 and low == high - count + 1  # trimmed every 100th entry
    finally:
        await store.close()


@pytest.mark.postgres
async def test_a_terminated_listen_connection_resumes_without_missing_a_change(
    postgres_server: PostgresServer,
) -> None:
    import psycopg

    url = postgres_server.create_database()
    store = await Store.open(url)
    feed = await ChangeFeed.open(url, slow_poll=60.0)  # only notifications and reconnects wake it
    try:
        info = await store.create_session(title="before")
        await collect(feed, await newest_seq(store))
        async with asyncio.timeout(WAIT):
            while feed.listen_pid is None:
                await asyncio.sleep(0.02)
        pid = feed.listen_pid
        with psycopg.connect(postgres_server.admin_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        for n in range(5):  # written while the feed may not be listening
            await store.rename_session(info.id, f"title {n}", by_user=True)
        batches = await collect(feed, await newest_seq(store))
        assert len([c for b in batches for c in b.changes]) == 5
        assert batches[-1].sessions[info.id].title == "title 4"  # type: ignore[union-attr]
        async with asyncio.timeout(WAIT):
            while feed.listen_pid in (None, pid):
                await asyncio.sleep(0.02)
        assert feed.reconnects >= 1
    finally:
        await feed.aclose()
        await store.close()
        postgres_server.drop_database(url)
