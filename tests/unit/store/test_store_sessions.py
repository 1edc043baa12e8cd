"""Sessions through the repository: create, rename rules, pin/archive/list order, delete cascade."""

from __future__ import annotations

import pytest
from store_samples import every_kind

from threadline.core.messages import Message
from threadline.store.errors import NotFoundError
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio


async def test_create_and_get(store: Store) -> None:
    info = await store.create_session(title="T", agent_id="a", provider="p", model="m", session_id="fixed-id")
    assert info.id == "fixed-id"
    got = await store.get_session("fixed-id")
    assert got == info
    assert (got.title, got.agent_id, got.provider, got.model) == ("T", "a", "p", "m")  # type: ignore[union-attr]
    assert not got.title_set_by_user  # type: ignore[union-attr]
    assert await store.get_session("missing") is None


async def test_automatic_rename_never_overwrites_a_user_title(store: Store) -> None:
    info = await store.create_session()
    auto = await store.rename_session(info.id, "From the first prompt", by_user=False)
    assert (auto.title, auto.title_set_by_user) == ("From the first prompt", False)
    auto2 = await store.rename_session(info.id, "Better automatic title", by_user=False)
    assert auto2.title == "Better automatic title"

    mine = await store.rename_session(info.id, "My title")
    assert (mine.title, mine.title_set_by_user) == ("My title", True)
    after = await store.rename_session(info.id, "Automatic again", by_user=False)
    assert (after.title, after.title_set_by_user) == ("My title", True)
    assert (await store.get_session(info.id)).title == "My title"  # type: ignore[union-attr]


async def test_list_pinned_first_then_recent_activity_and_archive_filter(store: Store) -> None:
    a = await store.create_session(title="a")
    await store.create_session(title="b")
    c = await store.create_session(title="c")
    d = await store.create_session(title="d")
    await store.append_message(a.id, Message.prompt("a is now the most recent"))
    await store.pin_session(c.id, True)
    await store.archive_session(d.id, True)

    listed = [s.title for s in await store.list_sessions()]
    assert listed == ["c", "a", "b"]
    assert [s.title for s in await store.list_sessions(archived=True)] == ["d"]
    assert [s.title for s in await store.list_sessions(limit=2)] == ["c", "a"]
    assert [s.title for s in await store.list_sessions(limit=2, offset=2)] == ["b"]

    unpinned = await store.pin_session(c.id, False)
    assert not unpinned.pinned
    restored = await store.archive_session(d.id, False)
    assert not restored.archived
    assert next(s.title for s in await store.list_sessions()) == "a"
    assert len(await store.list_sessions()) == 4


async def test_delete_cascades_to_messages_and_search(store: Store) -> None:
    keep = await store.create_session(title="keep")
    gone = await store.create_session(title="gone")
    await store.append_messages(keep.id, [Message.prompt("zebra crossing kept")])
    await store.append_messages(gone.id, [*every_kind(), Message.prompt("zebra crossing deleted")])

    await store.delete_session(gone.id)

    assert await store.get_session(gone.id) is None
    assert await store.message_count(gone.id) == 0
    hits = await store.search("zebra")
    assert [h.session_id for h in hits] == [keep.id]
    assert await store.message_count(keep.id) == 1
    await store.delete_session(gone.id)  # deleting twice is harmless
    # The ids are free again: nothing of the old session lingers.
    again = await store.create_session(session_id=gone.id)
    await store.append_messages(again.id, every_kind())


async def test_update_session_fields_and_checkpoints(store: Store) -> None:
    info = await store.create_session(provider="p", model="m", agent_id="a")
    changed = await store.update_session(info.id, model="m2")
    assert (changed.provider, changed.model, changed.agent_id) == ("p", "m2", "a")
    changed = await store.update_session(info.id, provider="q", agent_id="b", checkpoints={"x": "y"})
    assert (changed.provider, changed.model, changed.agent_id) == ("q", "m2", "b")
    assert changed.checkpoints == {"x": "y"}
    assert (await store.get_session(info.id)).checkpoints == {"x": "y"}  # type: ignore[union-attr]


async def test_set_active_leaf(store: Store) -> None:
    info = await store.create_session()
    first, second = Message.prompt("1"), Message.prompt("2")
    await store.append_messages(info.id, [first, second])
    await store.set_active_leaf(info.id, first.id)
    assert (await store.get_session(info.id)).active_leaf == first.id  # type: ignore[union-attr]
    assert (await store.load_tree(info.id)).active_leaf == first.id


async def test_operations_on_missing_sessions_raise_not_found(store: Store) -> None:
    for call in (
        store.rename_session("nope", "x"),
        store.pin_session("nope", True),
        store.archive_session("nope", True),
        store.update_session("nope", model="m"),
        store.set_active_leaf("nope", None),
    ):
        with pytest.raises(NotFoundError) as caught:
            await call
        assert caught.value.user_message


async def test_closed_store_refuses_work_and_close_is_idempotent(store_url: str) -> None:
    from threadline.store.errors import StoreClosedError

    store = await Store.open(store_url)
    assert store.url == store_url
    await store.close()
    await store.close()
    assert store.closed
    with pytest.raises(StoreClosedError):
        await store.list_sessions()
