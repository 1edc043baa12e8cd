"""The strip above the composer while this chat replies in another instance.

One turn runs in a chat at a time across windows, processes and machines (the
session lease). While another instance holds it, the tab shows "Replying on
<host>" with a "Stop it" button that asks that instance to stop (it stops at its
next heartbeat, keeping its partial reply). The engine's ``SessionBusyElsewhere``
events drive it: a host shows the strip, an empty host hides it.

It also says when this window does not hear other instances at all (the change
feed lost the database: ``ChangesReceiving``): "Not receiving other windows'
changes — reconnecting…", gone once the feed is back.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from threadline.engine.events import ChangesReceiving, SessionBusyElsewhere
from threadline.ui.common.announce import announce
from threadline.ui.common.tasks import spawn

StopElsewhere = Callable[[], Coroutine[Any, Any, bool]]


class BusyElsewhereStrip(QFrame):
    """ "Replying on <host>" and "Stop it"; hidden while the chat is free or busy here."""

    dontSend = Signal()
    """ "Don't send" was pressed on a message waiting for the other reply (``waiting_send``)."""

    def __init__(self, stop: StopElsewhere, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("InfoBanner")
        self.setAccessibleName("Replying elsewhere")
        self._stop = stop
        self.host = ""
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 6, 6)
        self.label = QLabel()
        self.label.setWordWrap(True)
        layout.addWidget(self.label, 1)
        self.button = QPushButton("Stop it")
        self.button.setObjectName("SecondaryButton")
        self.button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.button.setAccessibleDescription("Ask the other window or computer to stop its reply")
        self.button.clicked.connect(self._stop_clicked)
        layout.addWidget(self.button)
        self.dont_send = QPushButton("Don't send")
        self.dont_send.setObjectName("SecondaryButton")
        self.dont_send.setCursor(Qt.CursorShape.PointingHandCursor)
        self.dont_send.setAccessibleDescription("Keep your message in the box instead of sending it later")
        self.dont_send.clicked.connect(self.dontSend)
        self.dont_send.hide()
        layout.addWidget(self.dont_send)
        self.waiting = False
        self.not_receiving = False
        """Other instances' changes do not arrive (the change feed is reconnecting)."""
        self._stop_asked = False
        self.hide()

    def set_waiting(self, waiting: bool) -> None:
        """A message of this window waits for the other reply to end (or no longer does)."""
        self.waiting = waiting
        self.dont_send.setVisible(waiting)
        if self.host:
            self._show_text()

    def on_event(self, event: SessionBusyElsewhere) -> None:
        if not event.host:
            if self.host:
                announce(self, f"The reply on {self.host} ended.")
            self.host = ""
            self._show_text()
            return
        first = self.host != event.host
        self.host = event.host
        self._stop_asked = event.stop_requested
        self.button.setEnabled(not event.stop_requested)
        self._show_text()
        if first:
            announce(self, f"This chat is replying on {event.host}.")

    def on_changes(self, event: ChangesReceiving) -> None:
        """Other windows' changes stopped arriving, or arrive again."""
        if self.not_receiving == (not event.receiving):
            return
        self.not_receiving = not event.receiving
        self._show_text()
        if self.not_receiving:
            announce(self, "Not receiving other windows' changes; reconnecting.")
        else:
            announce(self, "Receiving other windows' changes again.")

    def _show_text(self) -> None:
        """The strip's sentence for what it knows now; hidden when there is nothing to say."""
        parts: list[str] = []
        if self.host and self._stop_asked:
            parts.append(f"Replying on {self.host} — asked to stop…")
        elif self.host:
            parts.append(f"Replying on {self.host}. This chat runs one reply at a time.")
        if self.host and self.waiting:
            parts.append("Your message is sent when it ends.")
        if self.not_receiving:
            parts.append("Not receiving other windows' changes — reconnecting…")
        self.label.setText(" ".join(parts))
        self.button.setVisible(bool(self.host))
        self.setVisible(bool(parts))

    def _stop_clicked(self) -> None:
        self.button.setEnabled(False)
        self.label.setText(f"Replying on {self.host} — asking it to stop…")
        spawn(
            self._stop(),
            tell=self,
            on_done=self._asked,
            on_failed=lambda _err: self._failed(),
            context="Could not ask the other window to stop; try again",
        )

    def _asked(self, running: bool) -> None:
        if not running:  # it had ended meanwhile
            self.host = ""
            self._show_text()

    def _failed(self) -> None:
        """The strip as before the click (the bridge says why it failed)."""
        self.button.setEnabled(True)
        self._show_text()
