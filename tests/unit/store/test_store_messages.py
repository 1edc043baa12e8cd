"""Messages through the repository: round trips, tree shape, active leaf, streaming writes."""

from __future__ import annotations

import pytest
from store_samples import at, every_kind

from threadline.core.messages import Message, MessageStatus, RequestMetadata
from threadline.core.tree import ConversationTree
from threadline.store.errors import NotFoundError
from threadline.store.ops_messages import TREE_BATCH
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio


async def test_every_kind_round_trips(store: Store) -> None:
    info = await store.create_session(title="kinds")
    messages = every_kind()
    for message in messages:
        await store.append_message(info.id, message)

    tree = await store.load_tree(info.id)

    assert tree.path() == messages
    assert tree.active_leaf == messages[-1].id
    assert await store.message_count(info.id) == len(messages)


async def test_bulk_append_round_trips_and_activates_last(store: Store) -> None:
    info = await store.create_session()
    messages = every_kind()
    await store.append_messages(info.id, messages)

    tree = await store.load_tree(info.id)

    assert list(tree) == messages
    assert tree.active_leaf == messages[-1].id
    assert (await store.get_session(info.id)).active_leaf == messages[-1].id  # type: ignore[union-attr]


async def test_tree_shape_sibling_order_active_leaf_and_checkpoints_survive_reload(store_url: str) -> None:
    # Built in core first: versions of a prompt and of a reply, a side branch.
    tree = ConversationTree()
    root = tree.add(Message.prompt("v1 of the question").copy(created_at=at(0)))
    reply_a = tree.add(Message.reply(parent_id=root.id, text="A", status=MessageStatus.COMPLETE))
    reply_b = tree.add(Message.reply(parent_id=root.id, text="B", status=MessageStatus.COMPLETE))
    follow = tree.add(Message.prompt("follow-up", parent_id=reply_a.id))
    reply_c = tree.add(Message.reply(parent_id=root.id, text="C", status=MessageStatus.COMPLETE))
    root2 = tree.add(Message.prompt("v2 of the question"))
    tree.set_active_leaf(follow.id)
    tree.set_checkpoint("before-v2", reply_b.id)

    store = await Store.open(store_url)
    try:
        info = await store.create_session()
        for message in tree:  # insertion order
            await store.append_message(info.id, message)
        await store.set_active_leaf(info.id, follow.id)
        await store.update_session(info.id, checkpoints=tree.checkpoints)
    finally:
        await store.close()

    store = await Store.open(store_url)
    try:
        loaded = await store.load_tree(info.id)
    finally:
        await store.close()

    assert [m.id for m in loaded.children(root.id)] == [reply_a.id, reply_b.id, reply_c.id]
    assert [m.id for m in loaded.children(None)] == [root.id, root2.id]
    assert loaded.version(reply_b.id).index == 2
    assert loaded.active_leaf == follow.id
    assert [m.id for m in loaded.path()] == [root.id, reply_a.id, follow.id]
    assert loaded.checkpoints == {"before-v2": reply_b.id}
    assert list(loaded) == list(tree)


async def test_missing_active_leaf_falls_back_to_newest_leaf(store: Store) -> None:
    info = await store.create_session()
    root = Message.prompt("q")
    old = Message.reply(parent_id=root.id, text="old", status=MessageStatus.COMPLETE)
    new = Message.reply(parent_id=root.id, text="new", status=MessageStatus.COMPLETE)
    await store.append_messages(info.id, [root, new, old])  # "old" is written last: newest by ordinal
    await store.set_active_leaf(info.id, "gone")
    await store.update_session(info.id, checkpoints={"keep": root.id, "dangling": "gone"})

    tree = await store.load_tree(info.id)

    assert tree.active_leaf == old.id
    assert tree.checkpoints == {"keep": root.id}


async def test_a_tree_longer_than_one_fetch_batch_loads_whole_with_shared_ids(store: Store) -> None:
    # Rows are fetched TREE_BATCH at a time: a chain across two batch boundaries loads whole,
    # and each parent id is the parent's own string (held once, not again by every child).
    info = await store.create_session()
    messages: list[Message] = []
    parent: str | None = None
    for i in range(2 * TREE_BATCH + 3):
        message = Message.prompt(f"q{i}", parent_id=parent)
        messages.append(message)
        parent = message.id
    await store.append_messages(info.id, messages)

    tree = await store.load_tree(info.id)

    assert list(tree) == messages
    assert tree.active_leaf == messages[-1].id
    for message in tree:
        if message.parent_id is not None:
            assert message.parent_id is tree.get(message.parent_id).id


async def test_empty_session_loads_empty_tree(store: Store) -> None:
    info = await store.create_session()
    tree = await store.load_tree(info.id)
    assert len(tree) == 0
    assert tree.active_leaf is None


async def test_streaming_text_updates_then_final_update(store: Store) -> None:
    info = await store.create_session()
    prompt = Message.prompt("tell me")
    reply = Message.reply(parent_id=prompt.id, metadata=RequestMetadata(provider="p", started_at=at(1)))
    await store.append_message(info.id, prompt)
    await store.append_message(info.id, reply)
    for text in ("Once", "Once upon", "Once upon a time"):
        await store.update_message_text(reply.id, text)

    streamed = (await store.load_tree(info.id)).get(reply.id)
    assert streamed.text == "Once upon a time"
    assert streamed.status is MessageStatus.STREAMING

    reply.text = "Once upon a time, the end."
    reply.status = MessageStatus.COMPLETE
    reply.metadata = RequestMetadata(provider="p", started_at=at(1), ended_at=at(2), output_tokens=7)
    await store.update_message(reply)

    final = (await store.load_tree(info.id)).get(reply.id)
    assert final == reply
    assert (await store.get_session(info.id)).preview == "Once upon a time, the end."  # type: ignore[union-attr]


async def test_update_turns_reply_into_tool_calls(store: Store) -> None:
    info = await store.create_session()
    messages = every_kind()
    reply = Message.reply(parent_id=None)
    await store.append_message(info.id, reply)
    changed = messages[1].copy(id=reply.id, parent_id=None, created_at=reply.created_at)
    await store.update_message(changed)
    assert (await store.load_tree(info.id)).get(reply.id) == changed


async def test_updates_of_unknown_messages_raise(store: Store) -> None:
    with pytest.raises(NotFoundError):
        await store.update_message_text("nope", "x")
    with pytest.raises(NotFoundError):
        await store.update_message(Message.prompt("x"))
    with pytest.raises(NotFoundError):
        await store.append_message("no-session", Message.prompt("x"))
    with pytest.raises(NotFoundError):
        await store.load_tree("no-session")


async def test_streaming_messages_are_interrupted_at_open(store_url: str) -> None:
    store = await Store.open(store_url)
    info = await store.create_session()
    prompt = Message.prompt("q")
    reply = Message.reply(parent_id=prompt.id, text="half an ans")
    done = Message.reply(parent_id=prompt.id, text="done", status=MessageStatus.COMPLETE)
    await store.append_messages(info.id, [prompt, reply, done])
    await store.close()  # as if the process died mid-stream

    reopened = await Store.open(store_url)
    try:
        assert reopened.interrupted_at_open == 1
        tree = await reopened.load_tree(info.id)
        assert tree.get(reply.id).status is MessageStatus.INTERRUPTED
        assert tree.get(reply.id).text == "half an ans"
        assert tree.get(done.id).status is MessageStatus.COMPLETE
        assert await reopened.mark_interrupted() == 0
    finally:
        await reopened.close()


async def test_append_bumps_activity_and_preview(store: Store) -> None:
    info = await store.create_session()
    await store.append_message(info.id, Message.prompt("\n  first line of prompt\nsecond"))
    after = await store.get_session(info.id)
    assert after is not None
    assert after.updated_at >= info.updated_at
    assert after.preview == "first line of prompt"
    # A message without text (tool results) keeps the previous preview.
    await store.append_message(info.id, every_kind()[2].copy(parent_id=None))
    assert (await store.get_session(info.id)).preview == "first line of prompt"  # type: ignore[union-attr]


async def test_datetimes_are_aware_utc(store: Store) -> None:
    info = await store.create_session()
    assert info.created_at.utcoffset() is not None
    await store.append_messages(info.id, every_kind())
    for message in await store.load_tree(info.id):
        assert message.created_at.utcoffset() is not None
        assert message.created_at.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


@pytest.mark.expected_log_warnings("has no parent")
async def test_a_message_whose_parent_is_missing_is_skipped_not_fatal(store: Store) -> None:
    info = await store.create_session()
    root = Message.prompt("root")
    orphan = Message.prompt("lost", parent_id="never-stored")
    await store.append_messages(info.id, [root, orphan])
    tree = await store.load_tree(info.id)
    assert [m.id for m in tree] == [root.id]
    assert tree.active_leaf == root.id


async def test_the_preview_follows_the_shown_version_also_after_a_reopen(store_url: str) -> None:
    store = await Store.open(store_url)
    try:
        info = await store.create_session()
        prompt = Message.prompt("the question")
        first = Message.reply(parent_id=prompt.id, text="first answer", status=MessageStatus.COMPLETE)
        await store.append_messages(info.id, [prompt, first])
        second = Message.reply(parent_id=prompt.id, status=MessageStatus.STREAMING)
        await store.append_message(info.id, second)
        # A reply about to stream previews the path's last words, not the version it replaces.
        assert (await store.get_session(info.id)).preview == "the question"  # type: ignore[union-attr]
        await store.update_message(second.copy(text="second answer", status=MessageStatus.COMPLETE))
        assert (await store.get_session(info.id)).preview == "second answer"  # type: ignore[union-attr]

        await store.set_active_leaf(info.id, first.id)  # ‹ back to v1
        assert (await store.get_session(info.id)).preview == "first answer"  # type: ignore[union-attr]
        # A late write to the version not shown (another window, a compare's other column)
        # does not take the preview over.
        await store.update_message(second.copy(text="second answer, edited", status=MessageStatus.COMPLETE))
        assert (await store.get_session(info.id)).preview == "first answer"  # type: ignore[union-attr]
    finally:
        await store.close()

    reopened = await Store.open(store_url)
    try:
        assert (await reopened.get_session(info.id)).preview == "first answer"  # type: ignore[union-attr]
    finally:
        await reopened.close()


async def test_a_path_ending_in_records_previews_the_last_words_above_them(store: Store) -> None:
    info = await store.create_session()
    prompt = Message.prompt("list the files")
    reply = Message.reply(parent_id=prompt.id, text="Here they are.", status=MessageStatus.COMPLETE)
    other = Message.reply(parent_id=prompt.id, text="A different take.", status=MessageStatus.COMPLETE)
    await store.append_messages(info.id, [prompt, reply, other])
    results = every_kind()[2].copy(parent_id=reply.id)  # tool results: a record, no preview of its own
    await store.append_message(info.id, results)
    await store.set_active_leaf(info.id, other.id)
    await store.set_active_leaf(info.id, results.id)
    assert (await store.get_session(info.id)).preview == "Here they are."  # type: ignore[union-attr]
