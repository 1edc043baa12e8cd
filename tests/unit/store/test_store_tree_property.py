"""Property: any tree written message by message reloads identically (shape, order, leaf)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from threadline.core.messages import Message, MessageStatus, RequestMetadata, ToolCall, ToolResult
from threadline.core.tree import ConversationTree
from threadline.store.repository import Store

# Each step: (index of an existing node to attach under, or -1 for a new root; is it a reply?)
steps = st.lists(st.tuples(st.integers(min_value=-1, max_value=60), st.booleans()), min_size=1, max_size=60)


def build(plan: list[tuple[int, bool]]) -> ConversationTree:
    tree = ConversationTree()
    ids: list[str] = []
    for target, is_reply in plan:
        parent = ids[target % len(ids)] if ids and target >= 0 else None
        if is_reply:
            message = Message.reply(parent_id=parent, text=f"r{len(ids)}", status=MessageStatus.COMPLETE)
        else:
            message = Message.prompt(f"p{len(ids)}", parent_id=parent)
        tree.add(message)
        ids.append(message.id)
    return tree


async def store_and_reload(tree: ConversationTree, leaf: str) -> ConversationTree:
    store = await Store.open("sqlite://")
    try:
        info = await store.create_session()
        for message in tree:
            await store.append_message(info.id, message)
        await store.set_active_leaf(info.id, leaf)
        return await store.load_tree(info.id)
    finally:
        await store.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=steps, leaf_pick=st.integers(min_value=0, max_value=1000))
def test_any_tree_round_trips(plan: list[tuple[int, bool]], leaf_pick: int) -> None:
    tree = build(plan)
    all_ids = [m.id for m in tree]
    leaf = all_ids[leaf_pick % len(all_ids)]

    loaded = asyncio.run(store_and_reload(tree, leaf))

    assert list(loaded) == list(tree)
    for message in tree:
        assert [c.id for c in loaded.children(message.id)] == [c.id for c in tree.children(message.id)]
    assert [c.id for c in loaded.children(None)] == [c.id for c in tree.children(None)]
    assert loaded.active_leaf == leaf
    assert loaded.path() == tree.path(leaf)
    # Every message with children is settled plain text here: the load packs each of them.
    assert loaded.packed_count == sum(1 for m in tree if tree.children(m.id))


def test_a_long_chat_loads_packed_with_its_metadata_intact() -> None:
    """Replies with full request metadata go through the store and the packed form unchanged."""
    start = datetime(2026, 11, 27, 9, 30, 15, 123456, tzinfo=UTC)
    tree = ConversationTree()
    parent: str | None = None
    for i in range(600):  # more than two of the store's read batches
        if i % 2 == 0:
            message = Message.prompt(f"question {i} — ünïcode 😀", parent_id=parent)
        else:
            meta = RequestMetadata(
                provider="local",
                model="llama",
                request_id=f"req-{i}",
                started_at=start + timedelta(seconds=i),
                ended_at=start + timedelta(seconds=i, milliseconds=750),
                time_to_first_token_ms=120.5,
                input_tokens=i * 10,
                output_tokens=i,
                stop_reason="stop",
            )
            text = "answer " * (i % 120)  # some past the length kept as its own string
            message = Message.reply(parent_id=parent, text=text, status=MessageStatus.COMPLETE, metadata=meta)
        tree.add(message)
        parent = message.id

    loaded = asyncio.run(store_and_reload(tree, parent))

    assert loaded.packed_count == 599  # all but the leaf
    assert loaded.path() == tree.path()
    assert loaded.get(tree.path()[301].id).metadata == tree.path()[301].metadata


def test_rows_packing_cannot_give_back_exactly_load_as_messages() -> None:
    """An ``int`` time to first token (as another writer may store it), a streaming reply and
    a reply with tool calls are read as messages, equal to what was stored."""
    prompt = Message.prompt("q")
    odd = Message.reply(
        parent_id=prompt.id,
        text="a",
        status=MessageStatus.COMPLETE,
        metadata=RequestMetadata(model="m", time_to_first_token_ms=120),  # type: ignore[arg-type]
    )
    follow = Message.prompt("calls?", parent_id=odd.id)
    calls = Message.reply(
        parent_id=follow.id, text="", status=MessageStatus.COMPLETE, tool_calls=(ToolCall("c1", "t", "{}"),)
    )
    results = Message.tool_results_message((ToolResult("c1", "done"),), parent_id=calls.id)
    streaming = Message.reply(parent_id=results.id, text="partial")
    tree = ConversationTree()
    for message in (prompt, odd, follow, calls, results, streaming):
        tree.add(message)

    loaded = asyncio.run(store_and_reload(tree, streaming.id))

    assert loaded.path() == tree.path()
    assert type(loaded.get(odd.id).metadata.time_to_first_token_ms) is int  # type: ignore[union-attr]
    assert loaded.packed_count == 2  # the two prompts; the rest are held as they were stored
