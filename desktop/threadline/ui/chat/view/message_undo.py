"""The "Message deleted — Undo" notice of a chat tab.

Deleting a message takes it (and what follows it) out of the chat at once; the engine
keeps the stored rows for its undo window. This bar, styled like the sidebar's undo
bar, offers the undo for a little less time than the engine keeps them, so Undo never
promises what can no longer be done. One delete at a time is offered (a newer one
replaces the offer), as mail clients do; the older one simply happens.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from threadline.engine.api import EngineApi
from threadline.engine.events import ConversationEvent, MessagesRemoved, MessagesRestored
from threadline.ui.common.tasks import spawn

OFFER_SECONDS = 8.0
"""How long Undo is offered; the engine keeps deleted messages restorable for 10 s."""


class MessageUndoBar(QFrame):
    """Shows after a delete in this tab's chat; Undo asks the engine to put the messages back."""

    restored = Signal(str)  # message id, back in the chat
    failed = Signal(str)  # what to tell the user

    def __init__(self, engine: EngineApi, session_id: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("UndoBar")
        self.setAccessibleName("Message deleted")
        self._engine = engine
        self._session_id = session_id
        self._message_id: str | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 4, 4)
        self.label = QLabel()
        layout.addWidget(self.label, 1)
        self.button = QPushButton("Undo")
        self.button.setObjectName("MessageUndoButton")
        self.button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.button.setAccessibleDescription("Put the deleted message back")
        self.button.clicked.connect(self.undo)
        layout.addWidget(self.button)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(int(OFFER_SECONDS * 1000))
        self._timer.timeout.connect(self._expire)
        self.hide()

    @property
    def message_id(self) -> str | None:
        """The deleted message Undo would bring back (None when nothing is offered)."""
        return self._message_id

    def on_event(self, event: ConversationEvent) -> None:
        """Offer Undo for a delete; withdraw it when the message came back some other way."""
        if isinstance(event, MessagesRemoved):
            below = len(event.ids) - 1
            self.label.setText("Message deleted" if below == 0 else f"Message and {below} below it deleted")
            self._message_id = event.message_id
            self.show()
            self._timer.start()
        elif isinstance(event, MessagesRestored) and event.message_id == self._message_id:
            self._expire()

    def undo(self) -> None:
        message_id = self._message_id
        if message_id is None:
            return
        self._expire()
        spawn(
            self._engine.messages.undo_delete_message(self._session_id, message_id),
            on_done=self._undone(message_id),
            tell=self,
            context="Could not undo the delete",
            session_id=self._session_id,
        )

    def _undone(self, message_id: str) -> Callable[[bool], None]:
        def done(back: bool) -> None:
            if back:
                self.restored.emit(message_id)
            else:
                self.failed.emit("Too late to undo: the message has been deleted for good.")

        return done

    def _expire(self) -> None:
        self._timer.stop()
        self._message_id = None
        self.hide()
