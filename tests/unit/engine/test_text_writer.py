"""The turn writer: writes in order, text coalesced, heartbeats, and nothing dropped when writes fail.

These drive ``TurnWriter`` against a small recording store so the order of
writes and the failures can be chosen exactly; the engine tests run it on real
SQLite files.
"""

from __future__ import annotations

import asyncio

import pytest

from threadline.core.messages import Message
from threadline.engine.text_writer import TurnWriter
from threadline.store.errors import StorageFullError


class RecordingStore:
    """Records every write as ``(operation, message id, text)``; ``failures`` writes raise first."""

    def __init__(self, failures: int = 0) -> None:
        self.writes: list[tuple[str, str, str]] = []
        self.touches: list[str] = []
        self.failures = failures
        self.attempts = 0

    def _write(self, operation: str, message_id: str, text: str) -> None:
        self.attempts += 1
        if self.failures:
            self.failures -= 1
            raise StorageFullError("database or disk is full")
        self.writes.append((operation, message_id, text))

    async def append_message(self, session_id: str, message: Message) -> None:
        self._write("append", message.id, message.text)

    async def update_message(self, message: Message) -> None:
        self._write("update", message.id, message.text)

    async def update_message_text(self, message_id: str, text: str) -> None:
        self._write("text", message_id, text)

    async def touch_message(self, message_id: str) -> None:
        self.touches.append(message_id)

    async def set_active_leaf(self, session_id: str, leaf_id: str | None) -> None:
        self._write("leaf", leaf_id or "", "")


async def wait_until(condition: object, timeout: float = 10.0) -> None:
    async def poll() -> None:
        while not condition():  # type: ignore[operator]
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), timeout)


@pytest.mark.asyncio
async def test_coalesces_text_and_beats_while_the_stream_stalls() -> None:
    store = RecordingStore()
    reply = Message.reply(parent_id=None)
    writer = TurnWriter(store, "s", interval=0.05, heartbeat=0.1)
    writer.track(reply)
    for piece in ("a", "b", "c"):
        reply.text += piece
        writer.text_changed()
    await wait_until(lambda: store.writes)
    assert store.writes == [("text", reply.id, "abc")]  # three deltas, one write
    await wait_until(lambda: len(store.touches) >= 2)  # the stream stalls: heartbeats, no writes
    assert store.writes == [("text", reply.id, "abc")]
    reply.text += "d"
    writer.text_changed()
    await writer.stop()
    assert store.writes[-1] == ("text", reply.id, "abcd")  # stop writes what is left
    count = len(store.touches)
    await asyncio.sleep(0.25)
    assert len(store.touches) == count  # and no heartbeat after stop


@pytest.mark.asyncio
async def test_writes_keep_their_order_and_a_final_update_covers_the_text() -> None:
    store = RecordingStore()
    reply = Message.reply(parent_id=None)
    writer = TurnWriter(store, "s", interval=10.0)  # text only through drain or the final update
    writer.append(reply)
    writer.track(reply)
    reply.text = "partial"
    writer.text_changed()
    results = Message.reply(parent_id=reply.id)
    writer.update(reply)
    writer.append(results)
    await writer.stop()
    assert [(op, mid) for op, mid, _ in store.writes] == [
        ("append", reply.id),
        ("update", reply.id),
        ("append", results.id),
    ]
    assert store.writes[1][2] == "partial"  # no separate text write was needed after the update


@pytest.mark.asyncio
@pytest.mark.expected_log_warnings("a write failed")
async def test_failed_writes_are_kept_and_retried_until_stored() -> None:
    store = RecordingStore(failures=3)
    states: list[Exception | None] = []
    reply = Message.reply(parent_id=None)
    writer = TurnWriter(store, "s", interval=0.01, on_save_state=states.append, retry_delays=(0.01, 0.02))
    writer.append(reply)
    writer.track(reply)
    reply.text = "kept in memory"
    writer.text_changed()
    await wait_until(lambda: writer.failing is not None)
    assert writer.pending and isinstance(states[0], StorageFullError)
    await writer.stop()
    assert store.attempts >= 4  # three refusals, then the writes went through
    assert store.writes[0][0] == "append"
    assert store.writes[-1][2] == "kept in memory"
    assert len(states) == 2 and states[1] is None  # told once it failed (same error), once saved
    assert not writer.pending and writer.failing is None


@pytest.mark.asyncio
@pytest.mark.expected_log_warnings("a write failed")
async def test_abandon_reports_what_was_not_stored() -> None:
    store = RecordingStore(failures=1_000_000)
    reply = Message.reply(parent_id=None)
    writer = TurnWriter(store, "s", retry_delays=(0.01,))
    writer.append(reply)
    await wait_until(lambda: writer.failing is not None)
    assert writer.abandon() is True
    assert TurnWriter(RecordingStore(), "s").abandon() is False
