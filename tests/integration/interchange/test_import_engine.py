"""Importing through the engine into real databases: stored trees, idempotence, updates, cancel, search."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from tests.support.postgres import PostgresServer, postgres_server

from threadline.engine.engine import Engine
from threadline.engine.events import SessionEvent, SessionUpdated
from threadline.engine.importer import import_file
from threadline.interchange.detect import read_file
from threadline.interchange.ids import message_id_for
from threadline.interchange.model import ImportedConversation, ImportProgress, ImportSource
from threadline.store.repository import Store

__all__ = ["postgres_server"]

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "import"
CHATGPT = FIXTURES / "chatgpt_conversations.json"


@pytest_asyncio.fixture
async def engine(tmp_path: Path) -> AsyncIterator[Engine]:
    opened = await Engine.open(tmp_path / "data")
    yield opened
    await opened.aclose()


async def stored_shape(store: Store, session_id: str) -> tuple[list[tuple[str, str | None, str]], str | None]:
    tree = await store.load_tree(session_id)
    return [(m.id, m.parent_id, m.text) for m in tree], tree.active_leaf


@pytest.mark.asyncio
async def test_import_stores_whole_trees_announces_them_and_is_searchable(engine: Engine) -> None:
    events: list[SessionEvent] = []
    engine.sessions.subscribe_sessions(events.append)
    report = await engine.library.import_file(CHATGPT)
    assert (report.imported, report.updated, report.skipped, len(report.failed)) == (3, 0, 0, 2)
    parsed = [c for c in read_file(CHATGPT) if isinstance(c, ImportedConversation)]
    for conversation in parsed:
        shape, leaf = await stored_shape(engine.store, conversation.session_id)
        assert sorted(shape) == sorted((m.id, m.parent_id, m.text) for m in conversation.messages)
        assert leaf == conversation.active_leaf
    announced = {e.session.id for e in events if isinstance(e, SessionUpdated)}
    assert announced == {c.session_id for c in parsed}
    info = await engine.store.get_session(parsed[1].session_id)
    assert info is not None and info.archived and info.title == "Describe this cat picture."
    hits = await engine.library.search("interpreter printed")
    assert [h.session_title for h in hits] == ["Sum in Python"]


@pytest.mark.asyncio
async def test_second_import_skips_and_changed_file_updates_append_only(
    engine: Engine, tmp_path: Path
) -> None:
    await engine.library.import_file(CHATGPT)
    again = await engine.library.import_file(CHATGPT)
    assert (again.imported, again.updated, again.skipped) == (0, 0, 3)

    data: list[dict[str, Any]] = json.loads(CHATGPT.read_text())
    chat = copy.deepcopy(data[0])
    mapping = chat["mapping"]
    mapping["asst-2"]["children"] = ["user-3"]
    mapping["user-3"] = {
        "id": "user-3",
        "parent": "asst-2",
        "children": [],
        "message": {
            "id": "user-3",
            "author": {"role": "user"},
            "create_time": 1714000400.0,
            "content": {"content_type": "text", "parts": ["And 5+5?"]},
        },
    }
    mapping["user-1"]["message"]["content"]["parts"] = ["rewritten in the file"]  # has replies: kept
    mapping["asst-1b"]["message"]["content"]["parts"] = ["3+3 is six."]  # a leaf: follows the file
    chat["title"] = "Sums in Python"
    chat["current_node"] = "user-3"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps([chat]))
    report = await engine.library.import_file(changed)
    assert (report.imported, report.updated, report.skipped) == (0, 1, 0)

    session_id = next(c for c in read_file(changed) if isinstance(c, ImportedConversation)).session_id
    tree = await engine.store.load_tree(session_id)
    conversation_id = chat["conversation_id"]

    def text(node: str) -> str:
        return tree.get(message_id_for(ImportSource.CHATGPT, conversation_id, node)).text

    assert text("user-3") == "And 5+5?" and tree.active_leaf == message_id_for(
        ImportSource.CHATGPT, conversation_id, "user-3"
    )
    assert text("user-1") == "What is 2+2? Use python."
    assert text("asst-1b") == "3+3 is six."
    info = await engine.store.get_session(session_id)
    assert info is not None and info.title == "Sums in Python"
    assert len(tree) == 8
    twice = await engine.library.import_file(changed)
    assert (twice.updated, twice.skipped) == (0, 1)


def many_conversations(count: int, messages: int) -> list[dict[str, Any]]:
    chats = []
    for n in range(count):
        mapping: dict[str, Any] = {}
        for m in range(messages):
            mapping[f"n{m}"] = {
                "id": f"n{m}",
                "parent": f"n{m - 1}" if m else None,
                "children": [f"n{m + 1}"] if m + 1 < messages else [],
                "message": {
                    "id": f"n{m}",
                    "author": {"role": "user" if m % 2 == 0 else "assistant"},
                    "create_time": 1700000000 + n * 100 + m,
                    "content": {
                        "content_type": "text",
                        "parts": [f"message {m} of chat {n} " + "lorem " * 40],
                    },
                },
            }
        chats.append(
            {
                "title": f"Chat {n}",
                "create_time": 1700000000 + n * 100,
                "mapping": mapping,
                "current_node": f"n{messages - 1}",
                "conversation_id": f"bulk-{n}",
            }
        )
    return chats


@pytest.mark.asyncio
async def test_cancel_mid_import_leaves_only_whole_conversations(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "bulk.json"
    path.write_text(json.dumps(many_conversations(200, 40)))
    seen: list[ImportProgress] = []
    reached = asyncio.Event()

    def progress(step: ImportProgress) -> None:
        seen.append(step)
        if step.done >= 5:
            reached.set()

    task = asyncio.create_task(engine.library.import_file(path, progress))
    await asyncio.wait_for(reached.wait(), 120)
    task.cancel()
    report = await task
    assert report.cancelled and not report.failed
    assert 5 <= report.imported < 200
    stored = await engine.store.list_sessions(limit=1000)
    assert len(stored) == report.imported
    for info in stored:
        assert await engine.store.message_count(info.id) == 40
    assert seen[0].fraction is not None and seen[0].total is None

    rest = await engine.library.import_file(path)  # the rest comes in later; what was there is skipped
    assert (rest.imported, rest.skipped) == (200 - report.imported, report.imported)


@pytest.mark.asyncio
async def test_messages_of_another_chat_are_refused(engine: Engine, tmp_path: Path) -> None:
    from threadline.core.messages import Message
    from threadline.core.session import SessionInfo
    from threadline.interchange.threadline_json import dumps

    first = tmp_path / "one.json"
    first.write_text(dumps([(SessionInfo(id="s1", title="One"), [Message.prompt("hi", id="shared-id")])]))
    second = tmp_path / "two.json"
    second.write_text(dumps([(SessionInfo(id="s2", title="Two"), [Message.prompt("hi", id="shared-id")])]))
    assert (await engine.library.import_file(first)).imported == 1
    report = await engine.library.import_file(second)
    assert report.imported == 0
    assert [(p.title, p.reason) for p in report.failed] == [
        ("Two", "Some of its messages are already stored in another chat.")
    ]
    assert await engine.store.get_session("s2") is None


@pytest.mark.asyncio
@pytest.mark.postgres
async def test_import_into_postgresql(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database()
    try:
        store = await Store.open(url)
        try:
            for path in sorted(FIXTURES.glob("*.json")):
                await import_file(store, path)
            again = [await import_file(store, path) for path in sorted(FIXTURES.glob("*.json"))]
            assert sum(r.imported + r.updated for r in again) == 0
            assert sum(r.skipped for r in again) == 7
            hits = await store.search("umbrella")
            assert hits and hits[0].session_title == "Weather tool and a regenerated answer"
        finally:
            await store.close()
    finally:
        postgres_server.drop_database(url)
