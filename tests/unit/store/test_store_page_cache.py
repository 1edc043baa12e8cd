"""Giving back SQLite's page cache after a long tree was read (``Store.release_page_cache``)."""

from __future__ import annotations

import ctypes
import importlib
from collections.abc import Callable

import pytest

from threadline.core.messages import Message, MessageStatus
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio


def sqlite_memory_used() -> Callable[[], int] | None:
    """``sqlite3_memory_used`` of the SQLite the sqlite3 module runs on, if it can be reached."""
    try:
        module = importlib.import_module("_sqlite3")
        function = ctypes.CDLL(module.__file__).sqlite3_memory_used
    except (ImportError, AttributeError, OSError, TypeError):
        return None
    function.restype = ctypes.c_int64
    return lambda: int(function())


def long_chat(count: int) -> list[Message]:
    messages: list[Message] = []
    parent: str | None = None
    for i in range(count // 2):
        prompt = Message.prompt(f"Question {i}: " + "words " * 40, parent_id=parent)
        reply = Message.reply(
            parent_id=prompt.id, status=MessageStatus.COMPLETE, text=f"Answer {i}: " + "text " * 80
        )
        messages += [prompt, reply]
        parent = reply.id
    return messages


async def test_the_page_cache_a_long_tree_filled_is_given_back(store: Store) -> None:
    if "sqlite" not in store.url:
        pytest.skip("a SQLite page cache: PostgreSQL's server keeps its own")
    memory_used = sqlite_memory_used()
    if memory_used is None:
        pytest.skip("SQLite's memory counter is not reachable here")
    info = await store.create_session()
    await store.append_messages(info.id, long_chat(2000))
    tree = await store.load_tree(info.id)
    filled = memory_used()

    await store.release_page_cache()

    assert memory_used() < filled - 500_000  # the tree's pages (about 1 MB here) left the cache
    assert len(await store.load_tree(info.id)) == len(tree)  # and are read again when needed


async def test_releasing_the_page_cache_of_a_closed_store_does_nothing(store: Store) -> None:
    await store.close()
    await store.release_page_cache()
