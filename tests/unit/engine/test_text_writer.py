"""The coalesced writer: text at most every interval, never far behind, and heartbeats while stalled."""

from __future__ import annotations

import asyncio

import pytest

from threadline.core.messages import Message
from threadline.engine.text_writer import CoalescedTextWriter


@pytest.mark.asyncio
async def test_coalesces_text_and_beats_while_the_stream_stalls() -> None:
    writes: list[str] = []
    touches: list[str] = []

    async def write(message_id: str, text: str) -> None:
        writes.append(text)

    async def touch(message_id: str) -> None:
        touches.append(message_id)

    reply = Message.reply(parent_id=None)
    writer = CoalescedTextWriter(write, 0.02, touch=touch, heartbeat=0.1)
    writer.track(reply)
    for piece in ("a", "b", "c"):
        reply.text += piece
    await asyncio.sleep(0.05)
    assert writes == ["abc"]  # three deltas, one write, within about one interval
    assert touches == []  # a write is itself a heartbeat
    await asyncio.sleep(0.3)  # the stream stalls: nothing new to write
    assert writes == ["abc"] and 2 <= len(touches) <= 3
    reply.text += "d"
    await writer.stop()
    assert writes == ["abc", "abcd"]  # stop writes what is left
    count = len(touches)
    await asyncio.sleep(0.15)
    assert len(touches) == count  # and no heartbeat after stop
