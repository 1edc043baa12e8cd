"""Full-text search: matches, snippets, order, archived/deleted rules, hostile query text."""

from __future__ import annotations

import pytest

from threadline.core.messages import Message, MessageStatus
from threadline.core.session import SNIPPET_CLOSE, SNIPPET_OPEN
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio

NASTY = [
    'foo"',
    "AND (",
    '"',
    "(",
    ")",
    "*",
    "-",
    "NOT",
    "OR",
    "NEAR(a b)",
    "a:b",
    "col:foo",
    "^foo",
    "foo*bar",
    "'",
    "''",
    "\\",
    "%",
    "_",
    "!@#$%^&*()",
    "{}[]",
    "a & b | !c",
    "<->",
    "foo:*",
    "\x00",
    "\x02\x03",
    "   ",
    "",
    "💥",
    "日本語",
    "x" * 2000,
]


async def _seed(store: Store) -> dict[str, str]:
    ids: dict[str, str] = {}
    chat = await store.create_session(title="Paris trip")
    first = Message.prompt("Which museums should I visit in Paris? The Louvre maybe.")
    reply = Message.reply(
        parent_id=first.id,
        text="Try the Musée d'Orsay and the Louvre; book tickets early.",
        status=MessageStatus.COMPLETE,
    )
    await store.append_messages(chat.id, [first, reply])
    ids["chat"], ids["first"], ids["reply"] = chat.id, first.id, reply.id
    old = await store.create_session(title="Archived notes")
    note = Message.prompt("An archived conversation about the louvre pyramid")
    await store.append_message(old.id, note)
    await store.archive_session(old.id, True)
    ids["archived"], ids["note"] = old.id, note.id
    return ids


async def test_hits_newest_first_with_marked_snippets_and_archived_included(store: Store) -> None:
    ids = await _seed(store)

    hits = await store.search("louvre")

    assert [h.message_id for h in hits] == [ids["note"], ids["reply"], ids["first"]]
    assert hits[0].session_id == ids["archived"]
    assert hits[1].session_title == "Paris trip"
    for hit in hits:
        assert f"{SNIPPET_OPEN}" in hit.snippet
        marked = hit.snippet.split(SNIPPET_OPEN)[1].split(SNIPPET_CLOSE)[0]
        assert marked.lower() == "louvre"
        assert hit.created_at.utcoffset() is not None


async def test_last_word_is_a_prefix_and_all_words_must_match(store: Store) -> None:
    ids = await _seed(store)
    assert [h.message_id for h in await store.search("book tick")] == [ids["reply"]]
    assert [h.message_id for h in await store.search("mus")] == [ids["reply"], ids["first"]]
    assert await store.search("museums pyramid") == []
    assert [h.message_id for h in await store.search("LOUVRE PYRAMID")] == [ids["note"]]
    assert len(await store.search("louvre", limit=1)) == 1


async def test_search_follows_streaming_updates_and_deletes(store: Store) -> None:
    info = await store.create_session()
    reply = Message.reply(parent_id=None, text="")
    await store.append_message(info.id, reply)
    await store.update_message_text(reply.id, "the aardvark")
    assert [h.message_id for h in await store.search("aardvark")] == [reply.id]
    await store.update_message_text(reply.id, "the badger")
    assert await store.search("aardvark") == []
    assert [h.message_id for h in await store.search("badger")] == [reply.id]
    reply.text = "the capybara"
    await store.update_message(reply)
    assert await store.search("badger") == []
    assert [h.message_id for h in await store.search("capybara")] == [reply.id]
    await store.delete_session(info.id)
    assert await store.search("capybara") == []


@pytest.mark.parametrize("query", NASTY, ids=repr)
async def test_hostile_queries_never_fail(store: Store, query: str) -> None:
    await _seed(store)
    hits = await store.search(query)
    assert isinstance(hits, list)


async def test_punctuated_words_still_match(store: Store) -> None:
    ids = await _seed(store)
    assert [h.message_id for h in await store.search('louvre"')] == [ids["note"], ids["reply"], ids["first"]]
    assert [h.message_id for h in await store.search("(Orsay AND")] == [ids["reply"]]
    assert [h.message_id for h in await store.search("d'Orsay")] == [ids["reply"]]


async def test_search_session_titles(store: Store) -> None:
    ids = await _seed(store)
    assert [s.id for s in await store.search_sessions("paris")] == [ids["chat"]]
    assert [s.id for s in await store.search_sessions("NOTES arch")] == [ids["archived"]]
    assert await store.search_sessions("%") == []
    assert await store.search_sessions("") == []
