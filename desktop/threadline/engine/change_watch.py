"""Every window follows what other instances write: the change feed applied to the engine.

The store's change feed (``threadline.store.change_feed``) hands out, in order,
what any writer of the database changed, with the rows it names. The watch turns
that into the events this engine already emits for its own changes:

* **Sessions** (the sidebar): a session row that differs from what this engine last
  told its observers becomes ``SessionUpdated`` (through the engine's ``changed``);
  a session that is gone becomes ``SessionRemoved`` (``removed``). The engine asks
  ``is_news`` before it announces a change of its own, so whichever of the two
  paths comes first announces it and the other stays silent: no echoes.
* **Open conversations** take other instances' messages as they arrive, in place:
  a new message is ``MessageAdded``, a reply that grew by text only is a
  ``TextDelta`` (so another machine's reply streams in an open tab), any other change
  is ``MessageChanged`` (final status, reasoning, tool calls), a deleted one is
  ``MessagesRemoved``; a moved active leaf is ``ActivePathChanged`` (new versions)
  and changed checkpoints are ``CheckpointsChanged``.
* **Projects**: a batch with any ``project_changed`` entry (or one that missed
  entries) calls ``projects_changed`` once, before the batch's sessions are announced
  (so a chat moved into a project made elsewhere finds that project listed). The
  engine re-reads the small project list and announces ``ProjectsChanged`` only when
  it differs from what it last told, so its own edits are not echoed.
* **Memories**: the same for a batch with any ``memory_changed`` entry (migration 0013):
  ``memories_changed`` once, and ``MemoriesChanged`` only when the list differs.

A session this engine is busy with (a turn runs here, or a message delete waits for
its undo) is never touched. A batch is read from one snapshot; if this engine
changed the session after (or shortly before, ``SETTLE_SECONDS``) that snapshot, the
batch could carry the state from before its own change, so the session is left out
and re-read once it has been quiet that long (``reload_tree``, a diff against the
stored tree). A reader that fell behind the trimmed log re-reads what it shows
once, as the polling watch that preceded the feed did (``change_counter``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta

from threadline.core.messages import Message
from threadline.core.session import SessionInfo
from threadline.core.tree import ConversationTree
from threadline.engine.events import (
    ActivePathChanged,
    ChangesReceiving,
    CheckpointsChanged,
    ConversationEvent,
    MessageAdded,
    MessageChanged,
    MessagesRemoved,
    SessionBusyElsewhere,
    SessionEvent,
    SessionRemoved,
    SessionRestored,
    SessionUpdated,
    TextDelta,
)
from threadline.engine.live import LiveConversation
from threadline.store.change_counter import ChangeCounter
from threadline.store.change_feed import ChangeBatch, ChangeFeed, ChangeKind, StoredMessage
from threadline.store.errors import StoreError

log = logging.getLogger("threadline.engine.change_watch")

SETTLE_SECONDS = 1.0
"""How long after its own change to a session this engine waits before taking the feed's
state of it (its own write may commit after a snapshot that started before it)."""
RETRY_SECONDS = 1.0
"""Wait after a failed read of the feed (a busy or briefly unreachable database)."""
OPEN_RETRY_SECONDS = (1.0, 2.0, 5.0, 10.0, 30.0)
"""Waits between attempts to open the feed (the last repeats until the watch is closed)."""
LATE_COMMIT_MARGIN = timedelta(seconds=60)
"""How far before the newest activity seen a catch-up re-read still looks."""
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Changed = Callable[[SessionInfo], Awaitable[None]]
Removed = Callable[[str], Awaitable[None]]
LoadTree = Callable[[str], Awaitable[ConversationTree]]
ListChanged = Callable[[], Awaitable[None]]


async def _nothing() -> None:
    return None


class ChangeWatch:
    """Started by ``start`` (the engine's loop), stopped by ``aclose``; see the module doc."""

    def __init__(
        self,
        url: str,
        *,
        changed: Changed,
        removed: Removed,
        live: Callable[[str], LiveConversation | None] = lambda _id: None,
        busy: Callable[[str], bool] = lambda _id: False,
        load_tree: LoadTree | None = None,
        settle: float = SETTLE_SECONDS,
        session_touched: Callable[[str], None] = lambda _id: None,
        open_retry: tuple[float, ...] = OPEN_RETRY_SECONDS,
        on_receiving: Callable[[bool], None] = lambda _receiving: None,
        projects_changed: ListChanged = _nothing,
        memories_changed: ListChanged = _nothing,
        since: int | None = None,
    ) -> None:
        self._url = url
        self._since_seq = since
        """The change-log entry to follow from (``Store.newest_change`` read when the engine
        opened, before any window read the store): the feed connects a moment later, in the
        background, and what other instances wrote meanwhile must reach this window too.
        ``None``: from the newest entry when the feed connects."""
        self._projects_changed = projects_changed
        """Told once per batch that says projects changed (the engine re-reads the list)."""
        self._memories_changed = memories_changed
        """Told once per batch that says memories changed (the engine re-reads the list)."""
        self._open_retry = open_retry
        self._on_receiving = on_receiving
        """Told when ``receiving`` changes after start-up (not for the first, good news)."""
        self._session_touched = session_touched
        """Told each open session with a ``session_changed`` entry (its lease may have moved)."""
        self._changed = changed
        self._removed = removed
        self._live = live
        self._busy = busy
        self._load_tree = load_tree
        self._settle = settle
        self._known: dict[str, SessionInfo] = {}
        self._gone: set[str] = set()
        """Sessions this engine removed: their rows linger until the undo window ends, and a
        feed entry meanwhile must not bring them back."""
        self._local_at: dict[str, float] = {}
        """When this engine last changed each session itself (``time.monotonic``)."""
        self._deferred: set[str] = set()
        """Sessions left out of a batch: re-read once settled and idle."""
        self._attached: set[int] = set()
        self._applying = False
        self._since: datetime | None = None
        self._task: asyncio.Task[None] | None = None
        self.feed: ChangeFeed | None = None
        self.checks = 0
        """How many batches of changes were applied (tests read it)."""
        self.open_failures = 0
        """How many attempts to open the feed failed (tests read it)."""
        self.receiving: bool | None = None
        """Whether other instances' changes reach this engine now: the feed is open, listening
        (PostgreSQL) and its last read worked; ``None`` before the first attempt to open it."""
        self._listening = True
        self._reads_work = True

    # -- what this engine has shown and done ----------------------------------------------------

    def remember(self, sessions: Iterable[SessionInfo]) -> None:
        """Sessions handed to a window (a sidebar page, a filter's results)."""
        for info in sessions:
            self._known.setdefault(info.id, info)
            self._watermark(info)

    def is_news(self, info: SessionInfo) -> bool:
        """Whether announcing ``info`` tells observers anything (not already announced)."""
        return self._known.get(info.id) != info or info.id in self._gone

    def observe(self, event: SessionEvent) -> None:
        """The engine's session events keep what is known current (no echo of them)."""
        if isinstance(event, SessionUpdated | SessionRestored):
            if isinstance(event, SessionRestored):
                self._gone.discard(event.session.id)
            if event.session.id not in self._gone:
                self._known[event.session.id] = event.session
                self._watermark(event.session)
            self._mark_local(event.session.id)
        elif isinstance(event, SessionRemoved):
            self._known.pop(event.session_id, None)
            self._gone.add(event.session_id)

    def attach(self, live: LiveConversation) -> None:
        """Follow an opened conversation's own events (its local changes, see the module doc)."""
        if id(live) in self._attached:
            return
        self._attached.add(id(live))
        session_id = live.session_id

        def local(event: ConversationEvent) -> None:
            if not isinstance(event, SessionBusyElsewhere | ChangesReceiving):  # news, not a change here
                self._mark_local(session_id)

        live.subscribe(local)

    def _mark_local(self, session_id: str) -> None:
        if not self._applying:
            self._local_at[session_id] = time.monotonic()

    def _watermark(self, info: SessionInfo) -> None:
        if self._since is None or info.updated_at > self._since:
            self._since = info.updated_at

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="change-watch")

    async def aclose(self) -> None:
        """Stop reading and close the feed's connections; nothing is left pending."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        feed, self.feed = self.feed, None
        if feed is not None:
            await feed.aclose()

    async def _open(self) -> ChangeFeed:
        """Open the feed, trying again after ``open_retry`` waits until it opens or the watch closes.

        A database that cannot be reached at start-up (a server restarting, no network
        yet) must not leave this window blind to other instances until it restarts.
        """
        while True:
            try:
                feed = await ChangeFeed.open(
                    self._url, on_listening=self._listening_changed, since=self._since_seq
                )
            except Exception as err:
                self._set_receiving(False)
                delay = self._open_retry[min(self.open_failures, len(self._open_retry) - 1)]
                if self.open_failures == 0 and isinstance(err, StoreError):
                    log.warning("not following other windows' changes yet (%s); trying again", err)
                elif self.open_failures == 0:
                    log.exception("could not start following the database's changes; trying again")
                else:
                    log.info("following the database's changes failed again: %s", err)
                self.open_failures += 1
                await asyncio.sleep(delay)
                continue
            if self.open_failures:
                log.info("following other windows' changes now")
            self.feed = feed
            self._set_receiving(True)
            return feed

    async def _run(self) -> None:
        self.feed = await self._open()
        pending: asyncio.Task[ChangeBatch] | None = None
        try:
            while True:
                if pending is None:
                    pending = asyncio.create_task(self.feed.next_batch(self._open_ids))
                await asyncio.wait({pending}, timeout=self._next_recheck())
                if pending.done():
                    finished, pending = pending, None
                    try:
                        batch = finished.result()
                    except Exception as err:  # a busy or briefly unreachable database
                        log.info("reading the database's changes failed: %s", err)
                        self._reads_changed(False)
                        await asyncio.sleep(RETRY_SECONDS)
                        continue
                    self._reads_changed(True)
                    await self.apply(batch)
                try:
                    await self._recheck_settled()
                except StoreError as err:  # unreachable for now: the sessions stay deferred
                    log.info("re-reading deferred sessions failed: %s", err)
                    await asyncio.sleep(RETRY_SECONDS)
        finally:
            if pending is not None:
                pending.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await pending

    def _listening_changed(self, listening: bool) -> None:
        self._listening = listening
        self._set_receiving(self._listening and self._reads_work)

    def _reads_changed(self, work: bool) -> None:
        self._reads_work = work
        self._set_receiving(self._listening and self._reads_work)

    def _set_receiving(self, receiving: bool) -> None:
        """Keep ``receiving`` and say when it changes; a first ``True`` is not news."""
        before, self.receiving = self.receiving, receiving
        if before != receiving and (before is not None or not receiving):
            self._on_receiving(receiving)

    def _open_ids(self) -> frozenset[str]:
        return frozenset(s for s in self._local_or_known() if self._live(s) is not None)

    def _local_or_known(self) -> Iterator[str]:
        yield from self._known
        yield from self._local_at

    # -- applying a batch -------------------------------------------------------------------------

    async def apply(self, batch: ChangeBatch) -> None:
        """Announce what the batch changed; see the module doc for what is left out and why."""
        self.checks += 1
        if batch.missed:
            await self._catch_up()
        if batch.projects_changed or batch.missed:
            await self._refresh("projects", self._projects_changed)
        if batch.memories_changed or batch.missed:
            await self._refresh("memories", self._memories_changed)
        by_session: dict[str, list[StoredMessage]] = {}
        for stored in batch.messages:
            by_session.setdefault(stored.session_id, []).append(stored)
        for change in batch.changes:
            if change.kind is ChangeKind.SESSION_CHANGED and self._live(change.session_id) is not None:
                self._session_touched(change.session_id)
        for session_id, info in batch.sessions.items():
            if session_id in self._gone:
                continue
            if info is None:
                await self._gone_elsewhere(session_id)
                continue
            self._watermark(info)
            if self._unsettled(session_id, batch.read_started) or self._busy(session_id):
                self._deferred.add(session_id)
                continue
            live = self._live(session_id)
            if live is not None:
                if session_id in batch.messages_of:
                    deleted = [
                        c.message_id
                        for c in batch.changes
                        if c.session_id == session_id and c.kind is ChangeKind.MESSAGE_DELETED
                    ]
                    self._apply_messages(live, info, by_session.get(session_id, []), deleted)
                else:  # opened after the batch was asked for: its messages were not read
                    self._deferred.add(session_id)
            await self._announce(info)

    async def _refresh(self, what: str, read_again: ListChanged) -> None:
        try:
            await read_again()
        except StoreError as err:  # unreachable for now: the next such entry tries again
            log.info("re-reading the %s failed: %s", what, err)

    async def _announce(self, info: SessionInfo) -> None:
        if not self.is_news(info):
            return
        self._applying = True
        try:
            await self._changed(info)
        finally:
            self._applying = False

    async def _gone_elsewhere(self, session_id: str) -> None:
        if session_id in self._known or self._live(session_id) is not None:
            self._known.pop(session_id, None)
            self._applying = True
            try:
                await self._removed(session_id)
            finally:
                self._applying = False

    def _unsettled(self, session_id: str, read_started: float) -> bool:
        local = self._local_at.get(session_id)
        return local is not None and read_started < local + self._settle

    def _apply_messages(
        self,
        live: LiveConversation,
        info: SessionInfo,
        stored: list[StoredMessage],
        deleted: list[str | None],
    ) -> None:
        session_id = live.session_id
        tree = live.conversation.tree
        events: list[ConversationEvent] = []
        for item in stored:
            message = item.message
            if message.id in tree:
                events.extend(_updated(session_id, tree.editable(message.id), message))
            elif message.parent_id is None or message.parent_id in tree:
                activate = message.parent_id == tree.active_leaf and (
                    info.active_leaf == message.id or info.active_leaf not in tree
                )
                tree.add(message, activate=activate)
                events.append(MessageAdded(session_id, message))
            else:  # its parent was not part of this batch: take the stored tree instead
                self._deferred.add(session_id)
                return
        for message_id in deleted:
            if message_id is not None and message_id in tree:
                removed = tree.remove_subtree(message_id)
                events.append(MessagesRemoved(session_id, message_id, tuple(m.id for m in removed.messages)))
        if info.active_leaf != tree.active_leaf and (info.active_leaf is None or info.active_leaf in tree):
            tree.set_active_leaf(info.active_leaf)
            events.append(ActivePathChanged(session_id, info.active_leaf))
        checkpoints = {name: target for name, target in info.checkpoints.items() if target in tree}
        if checkpoints != tree.checkpoints:
            tree.checkpoints = checkpoints
            events.append(CheckpointsChanged(session_id, dict(tree.named_checkpoints), tree.tangent_origin))
        self._emit(live, events)

    def _emit(self, live: LiveConversation, events: list[ConversationEvent]) -> None:
        self._applying = True
        try:
            for event in events:
                live.emit(event)
        finally:
            self._applying = False

    # -- re-reading -------------------------------------------------------------------------------

    def _next_recheck(self) -> float | None:
        if not self._deferred:
            return None
        now = time.monotonic()
        due = [self._local_at.get(s, 0.0) + self._settle - now for s in self._deferred]
        return max(0.05, min(due))

    async def _recheck_settled(self) -> None:
        """Re-read deferred sessions that have been quiet long enough and are idle here."""
        now = time.monotonic()
        ready = [
            s
            for s in self._deferred
            if self._local_at.get(s, 0.0) + self._settle <= now and not self._busy(s)
        ]
        if not ready or self.feed is None:
            return
        rows = await self.feed.sessions(ready)
        for session_id in ready:
            self._deferred.discard(session_id)
            info = rows.get(session_id)
            if info is None:
                await self._gone_elsewhere(session_id)
                continue
            live = self._live(session_id)
            if live is not None and self._load_tree is not None and not self._busy(session_id):
                self._applying = True
                try:
                    await reload_tree(live, self._load_tree)
                except StoreError as err:
                    log.info("re-reading session %s failed: %s", session_id, err)
                finally:
                    self._applying = False
            await self._announce(info)

    async def _catch_up(self) -> None:
        """The log no longer holds what this engine missed: re-read what it shows, once."""
        since = self._since - LATE_COMMIT_MARGIN if self._since is not None else EPOCH
        known = list(self._known)
        counter = await ChangeCounter.open(self._url)
        try:
            rows = await counter.changed_sessions(since, known)
        finally:
            await counter.close()
        found = {info.id for info in rows}
        for info in rows:
            if info.id not in self._gone:
                self._watermark(info)
                if self._live(info.id) is not None:
                    self._deferred.add(info.id)
                await self._announce(info)
        for session_id in known:
            if session_id not in found:
                await self._gone_elsewhere(session_id)


def _updated(session_id: str, mine: Message, stored: Message) -> list[ConversationEvent]:
    """Bring ``mine`` (the live tree's object, which views hold) to the stored state, in place."""
    if _shown(mine) == _shown(stored):
        return []
    old_text = mine.text
    grew = _shown(mine)[1:] == _shown(stored)[1:] and stored.text.startswith(old_text)
    for field in dataclasses.fields(Message):
        if field.name != "id":
            setattr(mine, field.name, getattr(stored, field.name))
    if grew:
        return [TextDelta(session_id, mine.id, stored.text[len(old_text) :])]
    return [MessageChanged(session_id, mine)]


async def reload_tree(live: LiveConversation, load: LoadTree) -> None:
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
        if stored.checkpoints != mine.checkpoints:
            mine.checkpoints = stored.checkpoints
            live.emit(CheckpointsChanged(live.session_id, dict(mine.named_checkpoints), mine.tangent_origin))
        return
    conversation.tree = stored
    for message in stored:
        if message.id in mine and _shown(mine.get(message.id)) != _shown(message):
            live.emit(MessageChanged(live.session_id, message))
    live.emit(ActivePathChanged(live.session_id, stored.active_leaf))
    if stored.checkpoints != mine.checkpoints:
        live.emit(CheckpointsChanged(live.session_id, dict(stored.named_checkpoints), stored.tangent_origin))


def _shown(message: Message) -> tuple[object, ...]:
    """What a tab shows of a message, text first (a stored copy may differ in, say,
    timestamp precision, which is not shown)."""
    return (
        message.text,
        message.parent_id,
        message.status,
        message.kind,
        message.tool_calls,
        len(message.tool_results),
        len(message.images),
        len(message.context),
        tuple(r.text for r in message.reasoning),
    )


def _same(a: ConversationTree, b: ConversationTree) -> bool:
    return len(a) == len(b) and all(m.id in b and _shown(b.get(m.id)) == _shown(m) for m in a)
