"""Text UTF-8 cannot encode (a lone surrogate) is stored as U+FFFD, on SQLite and PostgreSQL.

JSON allows ``"\\ud800"``, so a model, a tool or an imported file can hand over a
string holding a surrogate on its own; the drivers refuse to write it. The store
repairs it on the way in (``threadline.store.encodable``), in text and JSON
columns alike, and logs where (never the text).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio
from tests.support.backends import BACKENDS, empty_database
from tests.support.postgres import PostgresServer, postgres_server  # noqa: F401  (fixture)

from threadline.core.messages import Message, MessageStatus, RequestMetadata, ToolCall, ToolResult
from threadline.store.repository import Store

pytestmark = [pytest.mark.asyncio, pytest.mark.expected_log_warnings("cannot be stored .* U\\+FFFD")]

LONE = "a\ud800b"
SHOWN = "a\ufffdb"


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from empty_database(request, tmp_path / "store.db")


@pytest_asyncio.fixture
async def store(url: str) -> AsyncIterator[Store]:
    opened = await Store.open(url)
    try:
        yield opened
    finally:
        await opened.close()


async def test_text_and_json_columns_keep_everything_but_the_lone_surrogate(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "threadline.store")
    info = await store.create_session(title=f"title {LONE}")
    prompt = Message.prompt(f"prompt {LONE} 😀")
    call = ToolCall("call-1", "read_file", '{"path": "' + LONE + '"}')
    reply = Message.reply(
        parent_id=prompt.id,
        tool_calls=(call,),
        metadata=RequestMetadata(provider="replay", model="m", error=f"error {LONE}"),
    )
    results = Message.tool_results_message(
        (ToolResult("call-1", f"result {LONE}", tool_name="read_file"),), parent_id=reply.id
    )
    await store.append_messages(info.id, [prompt, reply, results])
    await store.update_message_text(reply.id, f"streamed {LONE} \ud83d\ude00")  # a pair in two code points
    await store.update_message(replace(reply, text=f"final {LONE}", status=MessageStatus.COMPLETE))
    await store.rename_session(info.id, f"renamed {LONE}")
    await store.set_setting("lone", {f"key {LONE}": [f"value {LONE}"]})

    tree = await store.load_tree(info.id)
    assert tree.get(prompt.id).text == f"prompt {SHOWN} 😀"
    stored_reply = tree.get(reply.id)
    assert stored_reply.text == f"final {SHOWN}"
    assert stored_reply.tool_calls[0].arguments == '{"path": "' + SHOWN + '"}'
    assert stored_reply.metadata is not None and stored_reply.metadata.error == f"error {SHOWN}"
    assert tree.get(results.id).tool_results[0].text == f"result {SHOWN}"
    assert (await store.get_session(info.id)).title == f"renamed {SHOWN}"  # type: ignore[union-attr]
    assert await store.get_setting("lone") == {f"key {SHOWN}": [f"value {SHOWN}"]}

    lines = [r.getMessage() for r in caplog.records if "cannot be stored" in r.getMessage()]
    assert lines and all("a\ud800b" not in line and "prompt" not in line for line in lines)
    assert any("messages" in line for line in lines) and any("sessions" in line for line in lines)


async def test_a_split_surrogate_pair_is_joined_and_nothing_is_logged(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    info = await store.create_session(title="pairs")
    prompt = Message.prompt("\ud83d\ude00 and 😀")
    await store.append_message(info.id, prompt)
    assert (await store.load_tree(info.id)).get(prompt.id).text == "😀 and 😀"
    assert not [r for r in caplog.records if "cannot be stored" in r.getMessage()]
