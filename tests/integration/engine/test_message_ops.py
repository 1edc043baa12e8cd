"""Deleting a message (with undo) and editing a reply, against a real SQLite file.

The stored rows are read with sqlite3 itself, and search goes through the store's
full-text index, so what a restart or another process would see is what is checked.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from tests.integration.engine.helpers import stored_path, turn
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer, ScriptedResponse, openai_text_stream, sse_response

from threadline.core.messages import MessageStatus
from threadline.core.tree import ConversationTree
from threadline.engine.engine import DATABASE_FILENAME, Engine
from threadline.engine.errors import MessageGoneError, SessionBusyError
from threadline.engine.events import ActivePathChanged, ConversationEvent, MessagesRemoved, MessagesRestored
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio


def text_reply(*pieces: str, **options: float) -> ScriptedResponse:
    return sse_response(openai_text_stream(list(pieces)), **options)


def stored_ids(engine: Engine, session_id: str) -> set[str]:
    with sqlite3.connect(engine.data_dir / DATABASE_FILENAME) as db:
        found = db.execute("SELECT id FROM messages WHERE session_id = ?", (session_id,)).fetchall()
    return {row[0] for row in found}


def fts_hits(engine: Engine, word: str) -> int:
    """Rows the SQLite full-text index itself finds for ``word`` (no engine filtering)."""
    with sqlite3.connect(engine.data_dir / DATABASE_FILENAME) as db:
        row = db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (word,)).fetchone()
    return int(row[0])


def shape(tree: ConversationTree) -> tuple[object, ...]:
    """Everything about a tree a person could tell apart: ids, parents, version order, texts, leaf."""
    nodes = sorted(
        (m.id, m.parent_id, tree.version(m.id).index, tree.version(m.id).count, m.text, m.status.value)
        for m in tree
    )
    return (tuple(nodes), tree.active_leaf)


async def two_turns(engine: Engine, replay_server: ReplayServer) -> str:
    replay_server.enqueue(text_reply("Alpha answer."), text_reply("Zebrafish answer."))
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "first question")
    await turn(engine, session.id, "second question about zebrafish")
    return session.id


async def test_delete_hides_at_once_and_purge_removes_rows_and_search_hits(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await two_turns(engine, replay_server)
    live = await engine.sessions.open_session(session_id)
    first, answer, second, reply = live.conversation.path()
    events: list[ConversationEvent] = []
    live.subscribe(events.append)
    assert [h.message_id for h in await engine.library.search("zebrafish")]  # found before

    await engine.messages.delete_message(session_id, second.id)

    assert [m.id for m in live.conversation.path()] == [first.id, answer.id]
    removed = next(e for e in events if isinstance(e, MessagesRemoved))
    assert removed.message_id == second.id and set(removed.ids) == {second.id, reply.id}
    assert isinstance(events[-1], ActivePathChanged) and events[-1].leaf_id == answer.id
    assert await engine.library.search("zebrafish") == []  # hidden from search during the undo window
    assert {second.id, reply.id} <= stored_ids(engine, session_id)  # rows still there: undo is cheap
    assert (await stored_path(engine.data_dir, session_id))[-1].id == answer.id  # stored leaf moved now

    await engine.messages.purge()

    assert stored_ids(engine, session_id) == {first.id, answer.id}
    assert fts_hits(engine, "zebrafish") == 0
    assert await engine.messages.undo_delete_message(session_id, second.id) is False  # too late


async def test_the_undo_window_ends_by_itself(engine: Engine, replay_server: ReplayServer) -> None:
    session_id = await two_turns(engine, replay_server)
    live = await engine.sessions.open_session(session_id)
    reply = live.conversation.path()[-1]
    engine.messages.undo_seconds = 0.05
    await engine.messages.delete_message(session_id, reply.id)
    for _ in range(400):
        if reply.id not in stored_ids(engine, session_id):
            break
        await asyncio.sleep(0.05)
    assert reply.id not in stored_ids(engine, session_id)
    assert engine.messages.pending(session_id) == []


async def test_undo_brings_back_the_same_tree_and_search_hits(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await two_turns(engine, replay_server)
    live = await engine.sessions.open_session(session_id)
    first, answer, _second, _reply = live.conversation.path()
    # A second version of the first answer, then back to version 1: the deleted message's
    # place among its siblings and the active leaf deep below it must both come back.
    replay_server.enqueue(text_reply("Alpha again."))
    engine.turns.regenerate(session_id, answer.id)
    await asyncio.wait_for(engine.turns.wait_idle(session_id), 20)
    await engine.controls.switch_version(session_id, live.conversation.path()[1].id, -1)
    before = shape(live.conversation.tree)
    stored_before = stored_ids(engine, session_id)
    events: list[ConversationEvent] = []
    live.subscribe(events.append)

    await engine.messages.delete_message(session_id, answer.id)
    siblings = live.conversation.tree.children(first.id)
    assert [m.text for m in siblings] == ["Alpha again."]
    assert live.conversation.tree.active_leaf == siblings[0].id  # the newest remaining branch
    assert await engine.messages.undo_delete_message(session_id, answer.id) is True

    assert shape(live.conversation.tree) == before
    assert live.conversation.tree.version(answer.id).index == 1
    assert any(isinstance(e, MessagesRestored) and e.message_id == answer.id for e in events)
    assert [h.message_id for h in await engine.library.search("zebrafish")]
    await engine.messages.purge()  # nothing pending: nothing deleted
    assert stored_ids(engine, session_id) == stored_before
    # A restart sees the same active path.
    assert [m.id for m in await stored_path(engine.data_dir, session_id)] == [
        m.id for m in live.conversation.path()
    ]


async def test_a_delete_not_undone_is_gone_after_a_restart(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    engine = await open_engine(tmp_path / "data", replay_server)
    try:
        session_id = await two_turns(engine, replay_server)
        live = await engine.sessions.open_session(session_id)
        first, answer, second, _reply = live.conversation.path()
        await engine.messages.delete_message(session_id, second.id)
    finally:
        await engine.aclose()  # closing carries out the pending delete
    store = await Store.open(Store.sqlite_url(tmp_path / "data" / DATABASE_FILENAME))
    try:
        tree = await store.load_tree(session_id)
        assert [m.id for m in tree] == [first.id, answer.id]
        assert tree.active_leaf == answer.id
        assert await store.search("zebrafish") == []
    finally:
        await store.close()


async def test_closing_the_chat_carries_out_its_pending_delete(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await two_turns(engine, replay_server)
    live = await engine.sessions.open_session(session_id)
    reply = live.conversation.path()[-1]
    await engine.messages.delete_message(session_id, reply.id)
    await engine.sessions.close_session(session_id)
    reopened = await engine.sessions.open_session(session_id)
    assert reply.id not in reopened.conversation.tree
    assert reply.id not in stored_ids(engine, session_id)


async def test_delete_is_refused_while_a_turn_runs(engine: Engine, replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        text_reply("Alpha answer."), text_reply(*[f"w{i} " for i in range(200)], chunk_delay=0.02)
    )
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "first")
    live = await engine.sessions.open_session(session.id)
    first = live.conversation.path()[0]
    engine.turns.send(session.id, "second")
    while live.conversation.reply is None:
        await asyncio.sleep(0.01)
    with pytest.raises(SessionBusyError) as refused:
        await engine.messages.delete_message(session.id, first.id)
    assert "delete" in refused.value.user_message
    assert first.id in live.conversation.tree
    engine.turns.cancel(session.id)
    await engine.turns.wait_idle(session.id)
    with pytest.raises(MessageGoneError):
        await engine.messages.delete_message(session.id, "no-such-message")


async def test_edit_reply_adds_an_active_version_and_the_next_request_carries_it(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(text_reply("The capital is Lyon."), text_reply("Noted."))
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "Capital of France?")
    live = await engine.sessions.open_session(session.id)
    original = live.conversation.path()[-1]

    edited = await engine.messages.edit_reply(session.id, original.id, "The capital is Paris.")

    tree = live.conversation.tree
    assert tree.active_leaf == edited.id and edited.parent_id == original.parent_id
    assert (tree.version(edited.id).index, tree.version(edited.id).count) == (2, 2)
    assert tree.get(original.id).text == "The capital is Lyon."  # never rewritten
    assert edited.status is MessageStatus.COMPLETE and edited.metadata is not None
    assert edited.metadata.edited and not (original.metadata and original.metadata.edited)
    assert edited.metadata.model == (original.metadata.model if original.metadata else "")
    stored = await stored_path(engine.data_dir, session.id)
    assert stored[-1].id == edited.id and stored[-1].metadata is not None and stored[-1].metadata.edited
    requests_before = len(replay_server.requests)
    assert requests_before == 1  # editing sent nothing

    await turn(engine, session.id, "And of Italy?")
    sent = replay_server.requests[-1].body["messages"]
    assert [m["content"] for m in sent if m["role"] == "assistant"] == ["The capital is Paris."]
