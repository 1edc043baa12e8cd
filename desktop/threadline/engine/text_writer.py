"""Coalesced writes of a streaming reply's text (DESIGN.md §1, durability).

Every delta updates the live message at once (the UI sees it), but the store
gets the text at most every ``interval`` seconds, and a background flusher makes
sure it is never more than about one interval behind even when the stream
stalls. A process killed mid-stream therefore loses at most ~250 ms of tokens.

Each write is also the reply's heartbeat; while the stream stalls, ``touch``
beats every few seconds, so another instance opening the same database does not
take the reply for one left behind by a dead process (``store/writers.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from threadline.core.messages import Message

WRITE_INTERVAL = 0.25
HEARTBEAT_INTERVAL = 5.0


class CoalescedTextWriter:
    def __init__(
        self,
        write: Callable[[str, str], Awaitable[None]],
        interval: float = WRITE_INTERVAL,
        *,
        touch: Callable[[str], Awaitable[None]] | None = None,
        heartbeat: float = HEARTBEAT_INTERVAL,
    ) -> None:
        self._write = write
        self._touch = touch
        self._interval = interval
        self._heartbeat = heartbeat
        self._last_beat = time.monotonic()
        self._message: Message | None = None
        self._written = ""
        self._task: asyncio.Task[None] | None = None

    def track(self, message: Message) -> None:
        """Start following ``message``; its current text counts as already written."""
        self._message = message
        self._written = message.text
        self._last_beat = time.monotonic()
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="threadline-text-writer")

    async def flush(self) -> None:
        message = self._message
        if message is not None and message.text != self._written:
            text = message.text
            await self._write(message.id, text)
            self._written = text
            self._last_beat = time.monotonic()

    async def stop(self) -> None:
        """Write what is left and stop the flusher (safe to call twice)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.flush()
        self._message = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.flush()
            message = self._message
            if message is not None and self._touch and time.monotonic() - self._last_beat >= self._heartbeat:
                self._last_beat = time.monotonic()
                await self._touch(message.id)
