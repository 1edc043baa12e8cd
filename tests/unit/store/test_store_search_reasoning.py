"""Full-text search finds words of a reply's thinking (migration 0007), on SQLite and PostgreSQL:
as it streams in, after it changes, never after the message is deleted, with the snippet cut
from the thinking; the text index's own integrity check still passes."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command

from threadline.core.messages import Message, MessageStatus
from threadline.core.reasoning import Reasoning
from threadline.core.session import SNIPPET_OPEN
from threadline.store import db, migrate
from threadline.store.repository import Store
from threadline.store.search import THINKING_LABEL

pytestmark = pytest.mark.asyncio


def thought(*texts: str) -> tuple[Reasoning, ...]:
    return tuple(Reasoning(text=t) for t in texts)


async def test_thinking_is_found_and_follows_changes(store: Store) -> None:
    info = await store.create_session(title="Thoughts")
    prompt = Message.prompt("Where should the keeper live?")
    reply = Message.reply(parent_id=prompt.id, text="By the sea.", status=MessageStatus.STREAMING)
    await store.append_messages(info.id, [prompt, reply])
    assert await store.search("lighthouse") == []

    reply.reasoning = thought("A lighthouse needs a keeper", "the keeper needs a cottage")
    await store.update_message(reply)  # how the reply's thinking is stored while it streams
    (hit,) = await store.search("lighthouse")
    assert hit.message_id == reply.id and hit.snippet.startswith(THINKING_LABEL)
    assert SNIPPET_OPEN + "lighthouse" in hit.snippet
    assert [h.message_id for h in await store.search("cottage")] == [reply.id]

    reply.reasoning = thought("A harbour needs a pilot")
    reply.status = MessageStatus.COMPLETE
    await store.update_message(reply)
    assert await store.search("lighthouse") == []
    assert [h.message_id for h in await store.search("harbour")] == [reply.id]
    # A word in the text and the thinking: one hit, its snippet from the text.
    (both,) = await store.search("sea")
    assert both.message_id == reply.id and not both.snippet.startswith(THINKING_LABEL)
    assert await store.check_integrity() == []

    await store.delete_session(info.id)
    assert await store.search("harbour") == []


async def test_thinking_hits_keep_to_a_project(store: Store) -> None:
    from threadline.core.project import Project

    project = await store.save_project(Project.create("Coast"))
    inside = await store.create_session(title="in")
    outside = await store.create_session(title="out")
    await store.set_session_project(inside.id, project.id)
    for info in (inside, outside):
        prompt = Message.prompt("?")
        reply = Message.reply(parent_id=prompt.id, text="ok", status=MessageStatus.COMPLETE)
        reply.reasoning = thought("the lighthouse again")
        await store.append_messages(info.id, [prompt, reply])
    assert {h.session_id for h in await store.search("lighthouse", project_id=project.id)} == {inside.id}
    assert len(await store.search("lighthouse")) == 2


async def test_an_0006_database_indexes_the_thinking_it_already_holds(tmp_path: Path) -> None:
    url = Store.sqlite_url(tmp_path / "old.sqlite3")
    store = await Store.open(url)
    info = await store.create_session(title="before")
    prompt = Message.prompt("?")
    reply = Message.reply(parent_id=prompt.id, text="ok", status=MessageStatus.COMPLETE)
    reply.reasoning = thought("an albatross circles")
    await store.append_messages(info.id, [prompt, reply])
    await store.close()
    engine = db.create_engine(url)
    try:
        with engine.begin() as connection:
            command.downgrade(migrate.alembic_config(connection), "0006")
        with engine.connect() as connection:
            names = {r[0] for r in connection.execute(sa.text("SELECT name FROM sqlite_master"))}
        assert "reasoning_fts" not in names
    finally:
        engine.dispose()
    store = await Store.open(url)  # upgrades to 0007 and fills the index from what is stored
    try:
        assert [h.message_id for h in await store.search("albatross")] == [reply.id]
    finally:
        await store.close()
