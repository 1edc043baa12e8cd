"""Clear, tangents, checkpoints and version switches of an open chat: change the tree, store it,
tell the tab.

Each control is a step of the live ``Conversation`` (``core/conversation.py``) between
turns; this module makes it durable and visible. Markers (clear, tangent) are stored
as messages; checkpoints and the tangent's return point are stored with the session
(``sessions.checkpoints``), the active leaf with it too, so all of it survives a
restart and shows in any window. A refusal (a turn running, an unknown checkpoint)
raises an ``EngineError`` whose message the tab or ``ask`` shows as it is.

The rules themselves (what a request sends after a clear or in a tangent) are in
``docs/conversation-controls.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from threadline.core.messages import Message
from threadline.core.tree import TANGENT_CHECKPOINT, TreeError
from threadline.engine.errors import EngineError
from threadline.engine.events import ActivePathChanged, CheckpointsChanged, MessageAdded
from threadline.engine.live import LiveConversation
from threadline.store.repository import Store

T = TypeVar("T")


class ControlRefusedError(EngineError):
    """A control that does not apply now (not in a tangent, no such checkpoint, a taken name)."""


class ConversationControls:
    """Clear, tangent, checkpoint and branch steps of open chats; ``ready`` finds an idle one or raises."""

    def __init__(self, store: Store, ready: Callable[[str], LiveConversation]) -> None:
        self._store = store
        self._ready = ready

    async def clear_context(self, session_id: str) -> Message:
        live = self._ready(session_id)
        marker = _refusing(lambda: live.conversation.clear_context())
        await self._store_added(live, [marker])
        return marker

    async def start_tangent(self, session_id: str, from_message_id: str | None = None) -> Message:
        live = self._ready(session_id)
        marker = _refusing(lambda: live.conversation.start_tangent(from_message_id))
        try:
            await self._store_added(live, [marker])
        except BaseException:
            live.conversation.tree.checkpoints.pop(TANGENT_CHECKPOINT, None)
            raise
        await self._store_checkpoints(live)
        return marker

    async def end_tangent(self, session_id: str, *, bring_last_exchange: bool = False) -> None:
        live = self._ready(session_id)
        brought = _refusing(lambda: live.conversation.end_tangent(bring_last_exchange=bring_last_exchange))
        if brought:
            await self._store_added(live, brought)
        else:
            await self._moved(live)
        await self._store_checkpoints(live)

    async def set_checkpoint(self, session_id: str, name: str, message_id: str | None = None) -> None:
        live = self._ready(session_id)
        _refusing(lambda: live.conversation.set_checkpoint(name, message_id))
        await self._store_checkpoints(live)

    async def restore_checkpoint(self, session_id: str, name: str) -> None:
        """Move the path back to the checkpoint; a restore out of an open tangent leaves it."""
        live = self._ready(session_id)
        origin = live.conversation.tree.tangent_origin
        _refusing(lambda: live.conversation.restore_checkpoint(name))
        await self._moved(live)
        await self.store_tangent_if_left(live, origin)

    async def switch_version(self, session_id: str, message_id: str, offset: int) -> None:
        """Show the previous or next version (``offset``) of a message, and the branch below it."""
        live = self._ready(session_id)
        origin = live.conversation.tree.tangent_origin
        leaf = live.conversation.switch_version(message_id, offset)
        await self._store.set_active_leaf(session_id, leaf)
        live.emit(ActivePathChanged(session_id, leaf))
        await self.store_tangent_if_left(live, origin)

    async def set_active_leaf(self, session_id: str, leaf_id: str) -> None:
        """Show the path ending at ``leaf_id`` (a search hit on an older version, a picked reply)."""
        live = self._ready(session_id)
        origin = live.conversation.tree.tangent_origin
        live.conversation.set_active_leaf(leaf_id)
        await self._store.set_active_leaf(session_id, leaf_id)
        live.emit(ActivePathChanged(session_id, leaf_id))
        await self.store_tangent_if_left(live, origin)

    async def store_tangent_if_left(self, live: LiveConversation, origin: str | None) -> None:
        """After the path moved: when that left the tangent (its return point ``origin`` is
        gone), store the session's checkpoints and tell the tab, so the strip goes away here
        and in every other window."""
        if live.conversation.tree.tangent_origin != origin:
            await self._store_checkpoints(live)

    async def remove_checkpoint(self, session_id: str, name: str) -> None:
        live = self._ready(session_id)
        _refusing(lambda: live.conversation.remove_checkpoint(name))
        await self._store_checkpoints(live)

    # -- storing and telling ------------------------------------------------------------------

    async def _store_added(self, live: LiveConversation, messages: list[Message]) -> None:
        """Store new messages (the tree already holds them; on failure they leave it again)."""
        try:
            await self._store.append_messages(live.session_id, messages)
        except BaseException:
            for message in reversed(messages):
                live.conversation.tree.remove_leaf(message.id)
            raise
        for message in messages:
            live.emit(MessageAdded(live.session_id, message))
        await self._moved(live)

    async def _moved(self, live: LiveConversation) -> None:
        leaf = live.conversation.tree.active_leaf
        await self._store.set_active_leaf(live.session_id, leaf)
        live.emit(ActivePathChanged(live.session_id, leaf))

    async def _store_checkpoints(self, live: LiveConversation) -> None:
        tree = live.conversation.tree
        info = await self._store.update_session(live.session_id, checkpoints=dict(tree.checkpoints))
        live.info = info
        live.emit(CheckpointsChanged(live.session_id, dict(tree.named_checkpoints), tree.tangent_origin))


def _refusing(step: Callable[[], T]) -> T:
    """Run a tree step; its refusal becomes a message for the person."""
    try:
        return step()
    except TreeError as err:
        raise ControlRefusedError(str(err)) from None
