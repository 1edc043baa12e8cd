"""What a person does to single messages of an open chat: delete (with undo) and edit a reply.

Deleting follows the pattern of a session's delete (``engine.sessions.delete_session``): the
message and everything below it leave the live tree at once, so every view and the
next request stop showing and sending them (``MessagesRemoved``, then
``ActivePathChanged``), while the stored rows stay until the undo window ends
(``undo_seconds``), the chat is closed, or the engine closes (``purge``). Undo
therefore needs nothing from the store: the subtree goes back into the tree as it
was — same ids, same version place, same active leaf — and the stored active leaf
follows. Meanwhile search leaves those messages out (``hidden``).

Editing a reply never rewrites it: the edited text becomes a new sibling version
(complete, its request metadata copied and marked ``edited``) and the active one,
exactly as editing a prompt adds a version. Nothing is sent to the model.

Both refuse while a turn runs in the chat (``SessionBusyError``): the turn owns the
tree until it has ended and been stored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from typing import Any

from threadline.core.messages import Message, MessageStatus, RequestMetadata, new_id, utcnow
from threadline.core.tree import RemovedBranch, TreeError
from threadline.engine.errors import EngineError, MessageGoneError, SessionBusyError, SessionClosedError
from threadline.engine.events import ActivePathChanged, MessageAdded, MessagesRemoved, MessagesRestored
from threadline.engine.live import LiveConversation
from threadline.store.repository import Store

log = logging.getLogger("threadline.engine")

BUSY_DELETE = "A reply is still running in this chat. Wait for it to finish (or press Stop), then delete."
BUSY_EDIT = "A reply is still running in this chat. Wait for it to finish (or press Stop), then edit."


class NotEditableError(EngineError, ValueError):
    """Only a finished reply without tool calls can be rewritten."""

    default_message = "Only a finished reply without tool calls can be edited."


@dataclass(slots=True)
class _PendingDelete:
    branch: RemovedBranch
    timer: asyncio.TimerHandle


class MessageOps:
    """Pending message deletes and reply edits of the engine's live conversations."""

    def __init__(
        self,
        store: Store,
        live: Callable[[str], LiveConversation | None],
        running: Callable[[str], bool],
        spawn: Callable[[Coroutine[Any, Any, Any]], None],
        undo_seconds: float,
    ) -> None:
        self._store = store
        self._live = live
        self._running = running
        self._spawn = spawn
        self.undo_seconds = undo_seconds
        self._pending: dict[tuple[str, str], _PendingDelete] = {}

    # -- delete and undo ----------------------------------------------------------------

    async def delete_message(self, session_id: str, message_id: str) -> None:
        """Take ``message_id`` and its subtree out of the chat now; stored rows go later."""
        live = self._idle(session_id, BUSY_DELETE)
        tree = live.conversation.tree
        if message_id not in tree:
            raise MessageGoneError()
        branch = tree.remove_subtree(message_id)
        try:
            if tree.active_leaf != branch.active_leaf:
                await self._store.set_active_leaf(session_id, tree.active_leaf)
        except BaseException:
            tree.restore_subtree(branch)
            raise
        key = (session_id, message_id)
        timer = asyncio.get_running_loop().call_later(self.undo_seconds, self._purge_later, key)
        self._pending[key] = _PendingDelete(branch, timer)
        live.emit(MessagesRemoved(session_id, message_id, tuple(m.id for m in branch.messages)))
        live.emit(ActivePathChanged(session_id, tree.active_leaf))

    async def undo_delete_message(self, session_id: str, message_id: str) -> bool:
        """Put a deleted message back as it was; False when too late (purged, or its parent is gone).

        During a running turn the branch comes back beside it but the turn keeps its path.
        """
        pending = self._pending.pop((session_id, message_id), None)
        live = self._live(session_id)
        if pending is None or live is None:
            return False
        pending.timer.cancel()
        tree = live.conversation.tree
        idle = not self._running(session_id) and live.conversation.ready_for_input
        try:
            tree.restore_subtree(pending.branch, activate=idle)
        except TreeError:
            log.info(
                "session %s: message %s cannot come back (its parent was deleted)", session_id, message_id
            )
            return False  # the parent's own delete removes these rows with it
        if idle and tree.active_leaf is not None:
            await self._store.set_active_leaf(session_id, tree.active_leaf)
        live.emit(MessagesRestored(session_id, message_id))
        live.emit(ActivePathChanged(session_id, tree.active_leaf))
        return True

    def pending(self, session_id: str) -> list[str]:
        """The deleted messages of a session that can still be brought back."""
        return [mid for sid, mid in self._pending if sid == session_id]

    def hidden(self) -> set[str]:
        """Every message taken out by a pending delete (search leaves them out)."""
        return {m.id for p in self._pending.values() for m in p.branch.messages}

    async def purge(self, session_id: str | None = None) -> None:
        """Carry out the pending deletes (of one session, or all) now; failures are logged."""
        for key in [k for k in self._pending if session_id is None or k[0] == session_id]:
            try:
                await self._purge(key)
            except Exception:
                log.exception("could not delete message %s of session %s", key[1], key[0])

    def _purge_later(self, key: tuple[str, str]) -> None:
        if key in self._pending:
            self._spawn(self._purge(key))

    async def _purge(self, key: tuple[str, str]) -> None:
        pending = self._pending.pop(key, None)
        if pending is None:
            return
        pending.timer.cancel()
        session_id, message_id = key
        live = self._live(session_id)
        leaf = live.conversation.tree.active_leaf if live is not None else None
        await self._store.delete_subtree(session_id, message_id, leaf)

    # -- editing a reply -----------------------------------------------------------------

    async def edit_reply(self, session_id: str, message_id: str, text: str) -> Message:
        """Store ``text`` as a new version of a reply and show it; the original stays as it was."""
        live = self._idle(session_id, BUSY_EDIT)
        tree = live.conversation.tree
        if message_id not in tree:
            raise MessageGoneError()
        original = tree.get(message_id)
        if not original.is_assistant or original.tool_calls or original.status is MessageStatus.STREAMING:
            raise NotEditableError()
        meta = original.metadata
        metadata = replace(meta, edited=True, error="") if meta else RequestMetadata(edited=True)
        version = original.copy(
            id=new_id(), text=text, status=MessageStatus.COMPLETE, metadata=metadata, created_at=utcnow()
        )
        before = tree.active_leaf
        tree.add(version)
        try:
            await self._store.append_message(session_id, version)
        except BaseException:
            tree.remove_leaf(version.id)
            tree.set_active_leaf(before)
            raise
        live.emit(MessageAdded(session_id, version))
        live.emit(ActivePathChanged(session_id, version.id))
        return version

    # -- internals ---------------------------------------------------------------------------

    def _idle(self, session_id: str, busy_message: str) -> LiveConversation:
        live = self._live(session_id)
        if live is None:
            raise SessionClosedError()
        if self._running(session_id) or not live.conversation.ready_for_input:
            raise SessionBusyError(busy_message)
        return live
