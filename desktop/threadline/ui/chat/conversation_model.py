"""A Qt list model over one live conversation's active path.

The model is the adapter between the engine's typed events and Qt's row signals
(docs/design.md §2): a new message is ``rowsInserted``, a streamed token is one row's
``dataChanged`` — coalesced to at most one per frame, because a provider can
deliver hundreds of deltas a second and the view only needs the latest text when
it paints. A moved active leaf (version switch, edit, regenerate) is handled as a
diff of the old and new paths: the common prefix stays, the tail is removed and
the new tail inserted, so even that never resets the model.

Rows hold message ids; the message itself is always read from the live
conversation's tree, the one copy of the history (tabs hold references, not copies).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)

from threadline.core.messages import RECORD_KINDS, Message, MessageStatus, TextShape, TextShapes, text_shape
from threadline.core.tree import TreeError, Version
from threadline.core.turn import TurnState
from threadline.engine.api import LiveConversationApi
from threadline.engine.events import (
    ActivePathChanged,
    ConversationEvent,
    MessageAdded,
    MessageChanged,
    ReasoningDelta,
    RetryScheduled,
    SessionUpdated,
    TextDelta,
    TurnFailed,
    TurnStateChanged,
)
from threadline.ui.chat.context_marks import first_sent_row, named_checkpoints

log = logging.getLogger("threadline.ui.chat.conversation_model")

FRAME_MS = 16

MessageRole = Qt.ItemDataRole.UserRole + 1
MessageIdRole = Qt.ItemDataRole.UserRole + 2
StatusRole = Qt.ItemDataRole.UserRole + 3
VersionRole = Qt.ItemDataRole.UserRole + 4
RevisionRole = Qt.ItemDataRole.UserRole + 5
"""An integer that changes whenever the row's content changes (the view's cache key)."""
IsLastRole = Qt.ItemDataRole.UserRole + 6

AnyIndex = QModelIndex | QPersistentModelIndex


_RECENT_ROWS = 64


class ConversationModel(QAbstractListModel):
    """Rows = messages on the active path of one live conversation."""

    turnStateChanged = Signal(object)  # TurnState
    turnFailed = Signal(object)  # UserFacingError
    promptUnsent = Signal(object)  # Message: a prompt the store refused, so it was never sent
    retryScheduled = Signal(object)  # RetryScheduled
    sessionUpdated = Signal(object)  # SessionInfo
    messageFinished = Signal(str)  # message id of a reply that stopped streaming

    def __init__(self, live: LiveConversationApi, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._live = live
        self._ids: list[str] = live.conversation.path_ids()
        self._revision: dict[str, int] = {}
        self._fallback: dict[str, Message] = {}
        self._dirty: set[str] = set()
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FRAME_MS)
        self._flush_timer.timeout.connect(self.flush)
        self._unsubscribe: Callable[[], None] | None = live.subscribe(self._on_event)
        self._first_sent: tuple[str | None, int] = ("", 0)

    # -- lifetime -------------------------------------------------------------------

    @property
    def live(self) -> LiveConversationApi:
        return self._live

    @property
    def session_id(self) -> str:
        return self._live.session_id

    def detach(self) -> None:
        """Stop listening to the conversation (the tab is closing)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._flush_timer.stop()

    # -- Qt model interface -------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._ids)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._ids) or index.column() != 0:
            return None
        mid = self._ids[index.row()]
        if role == MessageIdRole:
            return mid
        message = self.message(mid)
        if message is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return message.text
        if role == MessageRole:
            return message
        if role == StatusRole:
            return message.status.value
        if role == VersionRole:
            return self.version(mid)
        if role == RevisionRole:
            return self._revision.get(mid, 0)
        if role == IsLastRole:
            return index.row() == len(self._ids) - 1
        return None

    def roleNames(self) -> dict[int, QByteArray]:
        names = dict(super().roleNames())
        names.update(
            {
                MessageRole: QByteArray(b"message"),
                MessageIdRole: QByteArray(b"messageId"),
                StatusRole: QByteArray(b"status"),
                VersionRole: QByteArray(b"version"),
                RevisionRole: QByteArray(b"revision"),
            }
        )
        return names

    # -- queries --------------------------------------------------------------------------

    def message(self, message_id: str) -> Message | None:
        try:
            return self._live.conversation.tree.get(message_id)
        except TreeError:
            return self._fallback.get(message_id)

    def message_at(self, row: int) -> Message | None:
        if 0 <= row < len(self._ids):
            return self.message(self._ids[row])
        return None

    def text_shapes(self, first: int, last: int) -> TextShapes:
        """``text_shape_at`` of rows ``first`` to ``last``, in columns; all rows at once when they
        are the conversation's path (an open), read in one walk of the tree."""
        if first == 0 and last == len(self._ids) - 1:
            ids, shapes = self._live.conversation.tree.path_text_shapes()
            if ids == self._ids:
                return shapes
        shapes = TextShapes()
        for row in range(first, last + 1):
            shape = self.text_shape_at(row)
            if shape is None:
                shapes.add(None)
            else:
                shapes.add(*shape)
        return shapes

    def text_shape_at(self, row: int) -> TextShape | None:
        """What a guessed row height needs (``core/messages.py``), without making the message."""
        if 0 <= row < len(self._ids):
            message_id = self._ids[row]
            try:
                return self._live.conversation.tree.text_shape(message_id)
            except TreeError:
                fallback = self._fallback.get(message_id)
                return None if fallback is None else text_shape(fallback)
        return None

    def _divider_at(self, row: int) -> Message | None:
        """The message at ``row`` if it is a summary or a marker, else ``None``, reading only the
        kind of the others: all ``first_sent_row`` looks for, without making a long chat's
        packed messages (``core/packed_history.py``)."""
        if 0 <= row < len(self._ids):
            try:
                kind = self._live.conversation.tree.kind(self._ids[row])
            except TreeError:
                return self.message_at(row)
            return self.message_at(row) if kind in RECORD_KINDS else None
        return None

    def row_of(self, message_id: str) -> int:
        """The row showing ``message_id`` (-1: none).

        Searched, newest rows first, rather than kept in a map: what asks is nearly always a
        recent row (a reply growing, a turn ending), and a map of a 10,000-message chat was
        10,000 ``int`` objects among its memory (docs/performance.md)."""
        ids = self._ids
        for row in range(len(ids) - 1, max(-1, len(ids) - 1 - _RECENT_ROWS), -1):
            if ids[row] == message_id:
                return row
        try:
            return ids.index(message_id, 0, max(0, len(ids) - _RECENT_ROWS))
        except ValueError:
            return -1

    def version(self, message_id: str) -> Version:
        try:
            return self._live.conversation.tree.version(message_id)
        except (TreeError, KeyError, ValueError):
            return Version(1, 1)

    def first_sent_row(self) -> int:
        """The first row later requests carry (rows above: summarised or cleared; see ``context_marks``).

        Cached by the last row's id: the path is the one leading to it.
        """
        last = self._ids[-1] if self._ids else None
        if self._first_sent[0] != last:
            divider_at = self._divider_at
            ids, kinds = self._live.conversation.tree.path_kinds()
            if ids == self._ids:  # the rows are the path: read its kinds at once

                def divider_at(row: int) -> Message | None:
                    return self.message_at(row) if kinds[row] in RECORD_KINDS else None

            self._first_sent = (last, first_sent_row(len(self._ids), divider_at, self.row_of))
        return self._first_sent[1]

    def named_checkpoints(self) -> Mapping[str, str]:
        """The user's checkpoints (name → message id), without the tangent's own return point."""
        return named_checkpoints(self._live.conversation.tree)

    def revision(self, message_id: str) -> int:
        return self._revision.get(message_id, 0)

    @property
    def state(self) -> TurnState:
        return self._live.conversation.state

    # -- events -------------------------------------------------------------------------

    def _on_event(self, event: ConversationEvent) -> None:
        try:
            self._dispatch(event)
        except Exception:  # an observer must never break the engine's loop
            log.exception("conversation model failed on %r", type(event).__name__)

    def _dispatch(self, event: ConversationEvent) -> None:
        if isinstance(event, TextDelta | ReasoningDelta):
            self._bump(event.message_id)
            if self.row_of(event.message_id) >= 0:
                self._dirty.add(event.message_id)
                if not self._flush_timer.isActive():
                    self._flush_timer.start()
        elif isinstance(event, MessageAdded):
            self._fallback[event.message.id] = event.message
            self._message_added(event.message)
        elif isinstance(event, MessageChanged):
            self._fallback[event.message.id] = event.message
            self._bump(event.message.id)
            unseen = self.row_of(event.message.id) < 0
            if unseen and self._ids and event.message.parent_id == self._ids[-1]:
                # A message never announced as added: a tool round's answer is announced when
                # its tools finish, so a Stop while one runs changes it before it has a row.
                self._message_added(event.message)
            self._dirty.discard(event.message.id)
            self._emit_row_changed(event.message.id)
            if event.message.is_assistant and event.message.status is not MessageStatus.STREAMING:
                self.messageFinished.emit(event.message.id)
        elif isinstance(event, ActivePathChanged):
            self.sync_path()
        elif isinstance(event, TurnStateChanged):
            self.flush()
            self._refresh_last_rows()
            self.turnStateChanged.emit(event.state)
        elif isinstance(event, TurnFailed):
            self.flush()
            self.turnFailed.emit(event.error)
            if event.unsent_prompt is not None:
                self.promptUnsent.emit(event.unsent_prompt)
        elif isinstance(event, RetryScheduled):
            self.retryScheduled.emit(event)
        elif isinstance(event, SessionUpdated):
            self.sessionUpdated.emit(event.session)

    def _bump(self, message_id: str) -> None:
        self._revision[message_id] = self._revision.get(message_id, 0) + 1

    def _message_added(self, message: Message) -> None:
        last = self._ids[-1] if self._ids else None
        if self.row_of(message.id) >= 0:
            self._emit_row_changed(message.id)
            return
        if message.parent_id == last:
            row = len(self._ids)
            self.beginInsertRows(QModelIndex(), row, row)
            self._ids.append(message.id)
            self.endInsertRows()
            if row > 0:  # the previous last row loses its "last" actions
                self._emit_row_changed(self._ids[row - 1])
            self._refresh_versions_near(row)
        else:
            self.sync_path()

    def _refresh_versions_near(self, row: int) -> None:
        """A new sibling changes the "n / m" of the message it sits beside."""
        mid = self._ids[row]
        if self.version(mid).count > 1:
            self._bump(mid)
            self._emit_row_changed(mid)

    def sync_path(self) -> None:
        """Bring the rows to the conversation's current active path with minimal signals."""
        self.flush()
        new_ids = self._live.conversation.path_ids()
        common = 0
        for old, new in zip(self._ids, new_ids, strict=False):
            if old != new:
                break
            common += 1
        if common < len(self._ids):
            self.beginRemoveRows(QModelIndex(), common, len(self._ids) - 1)
            del self._ids[common:]
            self.endRemoveRows()
        if common < len(new_ids):
            self.beginInsertRows(QModelIndex(), common, len(new_ids) - 1)
            self._ids.extend(new_ids[common:])
            self.endInsertRows()
        for mid in self._ids[max(0, common - 1) : common + 1]:
            self._bump(mid)
            self._emit_row_changed(mid)

    def _refresh_last_rows(self) -> None:
        # Actions like "continue" and "regenerate" depend on the turn state.
        for mid in self._ids[-2:]:
            self._bump(mid)
            self._emit_row_changed(mid)

    def flush(self) -> None:
        """Emit the pending coalesced ``dataChanged`` signals now (one per dirty row)."""
        self._flush_timer.stop()
        dirty, self._dirty = self._dirty, set()
        for mid in dirty:
            self._emit_row_changed(mid)

    def _emit_row_changed(self, message_id: str) -> None:
        row = self.row_of(message_id)
        if row < 0:
            return
        idx = self.index(row, 0)
        self.dataChanged.emit(idx, idx)
