"""Every write of a running turn, in order, with a streaming reply's text coalesced.

A turn writes as it goes: the reply when its first token arrives, its text while
it streams, its final state, each round of tool results. All of these go
through one ``TurnWriter`` per turn, for three reasons:

* **Order.** One worker performs the writes one after another, so a reply's
  text is never written before the reply itself, nor its final state before
  its last text.
* **The 250 ms bound.** Every delta updates the live message at once (the UI
  sees it), but the store gets the text in coalesced writes. The bound is
  measured from the first token not yet stored: its write *starts* early enough
  (``interval`` less the time recent writes took and a small margin) to be
  finished within ``interval`` of the token's arrival, so a process killed
  mid-stream loses at most ~250 ms of tokens, however long the writes take
  (``bench/kill_bench.py`` measures it).
* **Nothing dropped.** A write that fails (a locked, full, read-only or damaged
  database) stays queued, with the text still in memory, and is retried with
  backoff for as long as the turn lives. ``on_save_state`` is told when saving
  starts failing (with the error) and when everything is saved again, so the
  tab can say "Saving…" and why. The turn ends only once its writer has drained.
  The store itself retries a transient failure (a dropped server connection) for
  a while before it raises; a write still waiting after a second while the store
  reports such trouble (``Store.trouble``, see ``store_trouble.py``) counts as
  failing at once, so a lost connection is shown within a second or so.

A reply's reasoning (a thinking model's) is coalesced the same way: while only the
text grew, the fast text-only write is used; once the reasoning grew, the reply's
whole row is rewritten (its reasoning lives in the content JSON).

Each write is also the reply's heartbeat; while the stream stalls, the writer
beats every few seconds, so another instance opening the same database does not
take the reply for one left behind by a dead process (``store/writers.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

from threadline.core.messages import Message
from threadline.core.reasoning import Reasoning
from threadline.engine.store_trouble import awaiting

log = logging.getLogger("threadline.engine")

WRITE_INTERVAL = 0.25
"""Longest time a streamed token may wait before it is stored."""
HEARTBEAT_INTERVAL = 5.0
RETRY_DELAYS = (0.25, 0.5, 1.0, 2.0, 4.0)
"""Waits between attempts after a failed write; the last one repeats."""
WRITE_MARGIN = 0.04
"""Kept free of the interval besides the write's own time: a token's way from the server to the
writer and the loop's own delays count against the bound too (without it, SIGKILL tests saw the
bound overrun; docs/performance.md)."""
MAX_WRITE_LEAD = 0.5
"""The most of ``interval`` reserved for the write itself (a slow disk must not turn coalescing off)."""

SaveStateCallback = Callable[[Exception | None], None]
"""Called with the error when saving starts failing (or fails differently), ``None`` once saved."""


class TurnStore(Protocol):
    """The store operations a turn writes with (``threadline.store.repository.Store`` has them)."""

    async def append_message(self, session_id: str, message: Message) -> None: ...
    async def update_message(self, message: Message) -> None: ...
    async def update_message_text(self, message_id: str, text: str) -> None: ...
    async def touch_message(self, message_id: str) -> None: ...
    async def set_active_leaf(self, session_id: str, leaf_id: str | None) -> None: ...


class TurnWriter:
    """Queues a turn's writes and performs them in order on a background task."""

    def __init__(
        self,
        store: TurnStore,
        session_id: str,
        *,
        on_save_state: SaveStateCallback | None = None,
        interval: float = WRITE_INTERVAL,
        heartbeat: float = HEARTBEAT_INTERVAL,
        retry_delays: tuple[float, ...] = RETRY_DELAYS,
    ) -> None:
        self._store = store
        self._session_id = session_id
        self._on_save_state = on_save_state
        self._interval = interval
        self._heartbeat = heartbeat
        self._retry_delays = retry_delays
        self._ops: deque[tuple[Callable[[], Awaitable[None]], Message | None]] = deque()
        self._message: Message | None = None
        self._written = ""
        self._written_reasoning: tuple[Reasoning, ...] = ()
        self._unwritten_since: float | None = None
        self._write_time = 0.0
        self._last_beat = time.monotonic()
        self._flush_requested = False
        self._failing: Exception | None = None
        self._failures = 0
        self._wake = asyncio.Event()
        self._drained = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # -- what the turn asks for ----------------------------------------------------------

    def append(self, message: Message) -> None:
        """Insert ``message`` (with the text it has when the write happens)."""
        self._queue(lambda: self._store.append_message(self._session_id, message), message)

    def update(self, message: Message) -> None:
        """Write ``message``'s whole current state (status, metadata, text…)."""
        self._queue(lambda: self._store.update_message(message), message)

    def set_active_leaf(self, leaf_id: str | None) -> None:
        self._queue(lambda: self._store.set_active_leaf(self._session_id, leaf_id), None)

    def track(self, message: Message) -> None:
        """Follow ``message``'s text from now on; the text it has now is written (or queued) already."""
        self._message = message
        self._written = message.text
        self._written_reasoning = message.reasoning
        self._unwritten_since = None
        self._last_beat = time.monotonic()
        self._ensure_running()

    def text_changed(self) -> None:
        """The tracked message's text (or reasoning) grew: it is stored within ``interval`` from now."""
        if self._unwritten_since is None:
            self._unwritten_since = time.monotonic()
            self._wake.set()

    @property
    def pending(self) -> bool:
        """Whether anything the turn produced is not stored yet."""
        message = self._message
        return bool(self._ops) or (message is not None and not self._stored(message))

    @property
    def failing(self) -> Exception | None:
        """The error of the last failed attempt, while saving is failing."""
        return self._failing

    async def drain(self) -> None:
        """Wait until everything queued and the latest text are stored (retrying failures)."""
        while self.pending:
            self._ensure_running()
            self._flush_requested = True
            self._drained.clear()
            self._wake.set()
            await self._drained.wait()

    async def stop(self) -> None:
        """Store what is left, then stop the background task (safe to call twice)."""
        await self.drain()
        await self._cancel_task()
        self._message = None

    def abandon(self) -> bool:
        """Stop at once without writing what is left; returns whether anything was left unsaved."""
        lost = self.pending
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        self._ops.clear()
        self._message = None
        self._drained.set()  # a drain still waiting (a shielded one) ends: nothing is pending now
        return lost

    # -- the worker ---------------------------------------------------------------------------

    def _queue(self, write: Callable[[], Awaitable[None]], message: Message | None) -> None:
        self._ops.append((write, message))
        self._ensure_running()
        self._wake.set()

    def _ensure_running(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"turn-writer-{self._session_id}")

    async def _cancel_task(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            await self._wait_for_work()
            try:
                await self._write_pending()
            except Exception as err:  # kept and retried: the text is still in memory
                self._failed(err)
                await asyncio.sleep(self._retry_delays[min(self._failures, len(self._retry_delays)) - 1])
                continue
            self._saved()

    async def _wait_for_work(self) -> None:
        while True:
            if self._ops or self._flush_requested or self._failing is not None:
                return
            now = time.monotonic()
            deadlines: list[float] = []
            if self._unwritten_since is not None:
                lead = min(WRITE_MARGIN + self._write_time * 2, self._interval * MAX_WRITE_LEAD)
                deadlines.append(self._unwritten_since + self._interval - lead)
            if self._message is not None:
                deadlines.append(self._last_beat + self._heartbeat)
            timeout = min(deadlines) - now if deadlines else None
            if timeout is not None and timeout <= 0:
                return
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)

    async def _write_pending(self) -> None:
        while self._ops:
            write, message = self._ops[0]
            text = message.text if message is not None else ""
            reasoning = message.reasoning if message is not None else ()
            await self._timed(write)
            self._ops.popleft()
            if message is not None and message is self._message:
                self._written_up_to(text, reasoning)
        message = self._message
        if message is not None and message.reasoning is not self._written_reasoning:
            snapshot = message.copy()  # the row as it is now, not as the stream leaves it mid-write
            await self._timed(lambda: self._store.update_message(snapshot))
            self._written_up_to(snapshot.text, snapshot.reasoning)
        elif message is not None and message.text != self._written:
            text = message.text
            await self._timed(lambda: self._store.update_message_text(message.id, text))
            self._written_up_to(text, self._written_reasoning)
        elif message is not None and time.monotonic() - self._last_beat >= self._heartbeat:
            try:
                await self._timed(lambda: self._store.touch_message(message.id))
            except Exception as err:  # a missed beat loses nothing; the next write or beat follows
                log.info("session %s: heartbeat not written: %s", self._session_id, err)
        self._last_beat = time.monotonic()

    async def _timed(self, write: Callable[[], Awaitable[None]]) -> None:
        started = time.monotonic()
        await awaiting(write(), self._store, self._notice_trouble)
        self._write_time = time.monotonic() - started

    def _notice_trouble(self, trouble: Exception) -> None:
        """A slow write while the store retries a transient error: saving is failing, say so now."""
        if self._failing is None:
            log.info("session %s: writes wait while the store retries: %s", self._session_id, trouble)
            self._failing = trouble
            self._tell(trouble)

    def _stored(self, message: Message) -> bool:
        return message.text == self._written and message.reasoning is self._written_reasoning

    def _written_up_to(self, text: str, reasoning: tuple[Reasoning, ...]) -> None:
        """``text`` is stored; tokens that came while it was written wait from the write's start."""
        self._written = text
        self._written_reasoning = reasoning
        message = self._message
        if message is None or self._stored(message):
            self._unwritten_since = None
        else:
            self._unwritten_since = time.monotonic() - self._write_time

    def _failed(self, err: Exception) -> None:
        self._failures += 1
        previous, self._failing = self._failing, err
        if previous is None or _what_to_tell(previous) != _what_to_tell(err):
            self._tell(err)  # first, so a listener showing the trouble itself can quiet this log
        log.warning(
            "session %s: a write failed (attempt %d), kept in memory and retried: %s",
            self._session_id,
            self._failures,
            err,
        )

    def _saved(self) -> None:
        """A whole pass was written: the store accepts writes again (the tab stops saying
        "Saving…" even while a fast stream keeps adding text), and a drain may end."""
        self._failures = 0
        if self._failing is not None:
            self._failing = None
            self._tell(None)
        if self.pending:
            return  # more came while writing: a flush goes on at once, new text within the interval
        self._flush_requested = False
        self._drained.set()

    def _tell(self, err: Exception | None) -> None:
        if self._on_save_state is None:
            return
        try:
            self._on_save_state(err)
        except Exception:
            log.exception("save-state observer failed")


def _what_to_tell(err: Exception) -> tuple[type[Exception], str]:
    """What the user would be shown for ``err`` (driver details differ between attempts)."""
    return type(err), getattr(err, "user_message", "")
