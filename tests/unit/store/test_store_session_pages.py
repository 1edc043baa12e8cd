"""The sidebar's reads: keyset pages over every session, the title filter, and the preview rule."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from threadline.core.messages import Message, MessageStatus, ToolCall, ToolResult
from threadline.core.session import SessionInfo
from threadline.store import search
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio


async def _sessions(store: Store, count: int, *, pinned: frozenset[int] = frozenset()) -> list[SessionInfo]:
    made = []
    for i in range(count):
        info = await store.create_session(title=f"Chat {i}", session_id=f"s{i:03d}")
        if i in pinned:
            info = await store.pin_session(info.id, True)
        made.append(info)
    return made


async def _walk(store: Store, limit: int, *, archived: bool = False) -> list[str]:
    seen: list[str] = []
    after: SessionInfo | None = None
    while page := await store.list_sessions(archived=archived, limit=limit, after=after):
        seen += [s.id for s in page]
        after = page[-1]
    return seen


async def test_keyset_pages_visit_every_session_once_in_list_order(store: Store) -> None:
    await _sessions(store, 23, pinned=frozenset({2, 9, 17}))
    whole = [s.id for s in await store.list_sessions(limit=1000)]
    assert whole[:3] == ["s017", "s009", "s002"]  # pinned first, newest first
    for limit in (1, 2, 4, 7, 50):
        assert await _walk(store, limit) == whole, limit


async def test_a_page_continues_after_a_session_that_changed_or_went_since(store: Store) -> None:
    made = await _sessions(store, 6)
    whole = [s.id for s in await store.list_sessions(limit=100)]
    first = await store.list_sessions(limit=3)
    await store.append_messages(first[-1].id, [Message.prompt("moves it to the top")])
    await store.delete_session(whole[3])
    rest = await store.list_sessions(limit=100, after=first[-1])  # the cursor as it was read
    assert [s.id for s in rest] == whole[4:]
    assert len(made) == 6


async def test_archived_pages_are_their_own_list(store: Store) -> None:
    made = await _sessions(store, 5)
    for info in made[:3]:
        await store.archive_session(info.id, True)
    assert await _walk(store, 2, archived=True) == ["s002", "s001", "s000"]
    assert await _walk(store, 2) == ["s004", "s003"]


async def test_title_filter_by_list_pinned_first_and_new_chat_matches_untitled(store: Store) -> None:
    made = await _sessions(store, 6, pinned=frozenset({1}))
    await store.archive_session(made[4].id, True)
    untitled = await store.create_session(session_id="untitled")
    found = await store.search_sessions("chat", archived=False)
    assert [s.id for s in found] == ["s001", "untitled", "s005", "s003", "s002", "s000"]
    assert [s.id for s in await store.search_sessions("chat", archived=True)] == ["s004"]
    assert untitled.id in [s.id for s in await store.search_sessions("new", archived=False)]
    assert [s.id for s in await store.search_sessions("CHAT 3", archived=False)] == ["s003"]
    assert await store.search_sessions("100%", archived=False) == []


async def test_title_filter_finds_chats_beyond_the_recent_window(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "TITLE_WINDOW", 3)
    await _sessions(store, 8)
    await store.rename_session("s000", "The oldest zeppelin")
    assert [s.id for s in await store.search_sessions("zeppelin", archived=False)] == ["s000"]
    assert [s.id for s in await store.search_sessions("chat", archived=False, limit=2)] == ["s007", "s006"]


async def test_the_preview_is_the_last_conversation_text_never_a_record(store: Store) -> None:
    info = await store.create_session()
    prompt = Message.prompt("What is a zeppelin?")
    reply = Message.reply(parent_id=prompt.id, text="An airship.", status=MessageStatus.COMPLETE)
    await store.append_messages(info.id, [prompt, reply])
    summary = Message.summary(
        "SUMMARY: the user asked about airships", parent_id=reply.id, summarised_through=reply.id
    )
    await store.append_messages(info.id, [summary])
    assert (await store.get_session(info.id)).preview == "An airship."  # type: ignore[union-attr]
    await store.update_message(replace(summary, text="SUMMARY, rewritten"))
    assert (await store.get_session(info.id)).preview == "An airship."  # type: ignore[union-attr]

    call = ToolCall(id="c1", name="clock", arguments="{}")
    asks = Message.reply(
        parent_id=summary.id, text="Let me check.", tool_calls=(call,), status=MessageStatus.COMPLETE
    )
    results = Message.tool_results_message((ToolResult(call_id="c1", text="12:00"),), parent_id=asks.id)
    cancelled = Message.cancelled_tool_uses((call,), parent_id=results.id, reason="Stopped by the user")
    await store.append_messages(info.id, [asks, results, cancelled])
    assert (await store.get_session(info.id)).preview == "Let me check."  # type: ignore[union-attr]

    later = Message.prompt("And a blimp?", parent_id=cancelled.id)
    await store.append_messages(info.id, [later])
    assert (await store.get_session(info.id)).preview == "And a blimp?"  # type: ignore[union-attr]
    assert timedelta(0) <= (await store.get_session(info.id)).updated_at - info.updated_at  # type: ignore[union-attr]
