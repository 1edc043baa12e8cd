"""Windows agree with the command line: notice what other processes wrote to the database.

A chat that ``threadline ask`` creates, or a rename done by a second instance, must
show in an open window within a second. Every ``POLL_SECONDS`` the watch asks the
database's change counter (``threadline.store.change_counter``, next to free);
only when it moved does it re-read the sessions active since the last check plus
the sessions this engine has shown (a rename or a pin does not move a session's
activity time), compare them with what it knows, and hand each difference to the
engine (``changed``), which emits ``SessionUpdated`` as for its own changes. A
shown session whose row is gone was deleted elsewhere (``removed``).

Its own writes also move the counter (the counter has a connection of its own),
but they re-read as rows it already knows, so they produce no second event.

``reload_tree`` brings an open conversation up to date with messages written
elsewhere; the engine calls it only while the session is idle here, so a turn
running in this process is never overwritten.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime, timedelta

from threadline.core.messages import Message
from threadline.core.session import SessionInfo
from threadline.core.tree import ConversationTree
from threadline.engine.events import (
    ActivePathChanged,
    MessageChanged,
    SessionEvent,
    SessionRemoved,
    SessionRestored,
    SessionUpdated,
)
from threadline.engine.live import LiveConversation
from threadline.store.change_counter import ChangeCounter
from threadline.store.errors import StoreError

log = logging.getLogger("threadline.engine.change_watch")

POLL_SECONDS = 0.5
LATE_COMMIT_MARGIN = timedelta(seconds=60)
"""How far before the watermark a check still looks: a writer stamps ``updated_at``
before it commits, and may wait for the write lock (or retry) meanwhile."""

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Changed = Callable[[SessionInfo], Awaitable[None]]
Removed = Callable[[str], Awaitable[None]]


class ChangeWatch:
    """Started by ``start`` (the engine's loop), stopped by ``aclose``; see the module doc."""

    def __init__(
        self, url: str, *, changed: Changed, removed: Removed, interval: float = POLL_SECONDS
    ) -> None:
        self._url = url
        self._changed = changed
        self._removed = removed
        self._interval = interval
        self._known: dict[str, SessionInfo] = {}
        self._gone: set[str] = set()
        """Sessions this engine removed: their rows linger until the undo window ends, and a
        re-read then must not bring them back."""
        self._since: datetime | None = None
        self._task: asyncio.Task[None] | None = None
        self._counter: ChangeCounter | None = None
        self.checks = 0
        """How many times the sessions were re-read (the counter had moved); tests read it."""

    # -- what this engine has shown ------------------------------------------------------------

    def remember(self, sessions: Iterable[SessionInfo]) -> None:
        """Sessions handed to a window (a sidebar page, a filter's results): watch their rows."""
        for info in sessions:
            self._known[info.id] = info

    def observe(self, event: SessionEvent) -> None:
        """The engine's own session events keep what is known current (no echo of them)."""
        if isinstance(event, SessionUpdated | SessionRestored):
            if isinstance(event, SessionRestored):
                self._gone.discard(event.session.id)
            if event.session.id not in self._gone:
                self._known[event.session.id] = event.session
        elif isinstance(event, SessionRemoved):
            self._known.pop(event.session_id, None)
            self._gone.add(event.session_id)

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="change-watch")

    async def aclose(self) -> None:
        """Stop polling and close the counter's connection; nothing is left pending."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        counter, self._counter = self._counter, None
        if counter is not None:
            await counter.close()

    async def _run(self) -> None:
        try:
            self._counter = await ChangeCounter.open(self._url)
            self._since = await self._counter.latest_activity()
            last = await self._counter.counter()
        except StoreError as err:
            log.warning("changes made by other programs will not show until restart: %s", err)
            return
        except Exception:
            log.exception("could not start watching the database for changes")
            return
        while True:
            await asyncio.sleep(self._interval)
            try:
                now = await self._counter.counter()
                if now != last:
                    last = now
                    await self.check()
            except asyncio.CancelledError:
                raise
            except Exception as err:  # a busy or briefly unreachable database: ask again next time
                log.info("checking the database for changes failed: %s", err)

    async def check(self) -> None:
        """Re-read what may have changed and report the differences (the counter moved)."""
        assert self._counter is not None
        self.checks += 1
        # No session seen yet (an empty database): every row is new.
        since = self._since - LATE_COMMIT_MARGIN if self._since is not None else EPOCH
        known = list(self._known)
        rows = await self._counter.changed_sessions(since, known)
        found = {info.id: info for info in rows}
        for info in rows:
            if self._since is None or info.updated_at > self._since:
                self._since = info.updated_at
            if info.id in self._gone:
                continue
            if self._known.get(info.id) != info:
                self._known[info.id] = info
                await self._changed(info)
        for session_id in known:
            if session_id not in found and session_id in self._known:
                del self._known[session_id]
                await self._removed(session_id)


async def reload_tree(live: LiveConversation, load: Callable[[str], Awaitable[ConversationTree]]) -> None:
    """Take the stored tree of an idle open conversation if it differs from the one in memory.

    Messages that changed are announced (``MessageChanged``), then the active path
    (``ActivePathChanged``), which makes a tab show the new messages.
    """
    stored = await load(live.session_id)
    conversation = live.conversation
    if not conversation.ready_for_input:
        return  # a turn started here while the tree was read: it owns the tree now
    mine = conversation.tree
    if stored.active_leaf == mine.active_leaf and _same(stored, mine):
        return
    conversation.tree = stored
    for message in stored:
        if message.id in mine and _shown(mine.get(message.id)) != _shown(message):
            live.emit(MessageChanged(live.session_id, message))
    live.emit(ActivePathChanged(live.session_id, stored.active_leaf))


def _shown(message: Message) -> tuple[object, ...]:
    """What a tab shows of a message (a stored copy may differ in, say, timestamp precision)."""
    return (
        message.parent_id,
        message.status,
        message.text,
        len(message.tool_calls),
        len(message.tool_results),
        len(message.images),
        len(message.context),
    )


def _same(a: ConversationTree, b: ConversationTree) -> bool:
    return len(a) == len(b) and all(m.id in b and _shown(b.get(m.id)) == _shown(m) for m in a)
