"""The strip above the composer while this chat replies in another instance.

One turn runs in a chat at a time across windows, processes and machines (the
session lease). While another instance holds it, the tab shows "Replying on
<host>" with a "Stop it" button that asks that instance to stop (it stops at its
next heartbeat, keeping its partial reply). The engine's ``SessionBusyElsewhere``
events drive it: a host shows the strip, an empty host hides it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from threadline.engine.events import SessionBusyElsewhere
from threadline.ui.common.announce import announce
from threadline.ui.common.tasks import spawn

StopElsewhere = Callable[[], Coroutine[Any, Any, bool]]


class BusyElsewhereStrip(QFrame):
    """ "Replying on <host>" and "Stop it"; hidden while the chat is free or busy here."""

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
        self.hide()

    def on_event(self, event: SessionBusyElsewhere) -> None:
        if not event.host:
            if self.host:
                announce(self, f"The reply on {self.host} ended.")
            self.host = ""
            self.hide()
            return
        first = self.host != event.host
        self.host = event.host
        if event.stop_requested:
            self.label.setText(f"Replying on {event.host} — asked to stop…")
            self.button.setEnabled(False)
        else:
            self.label.setText(f"Replying on {event.host}. This chat runs one reply at a time.")
            self.button.setEnabled(True)
        self.show()
        if first:
            announce(self, f"This chat is replying on {event.host}.")

    def _stop_clicked(self) -> None:
        self.button.setEnabled(False)
        self.label.setText(f"Replying on {self.host} — asking it to stop…")
        spawn(self._stop(), on_done=self._asked, on_error=lambda _err: self._failed())

    def _asked(self, running: bool) -> None:
        if not running:  # it had ended meanwhile
            self.host = ""
            self.hide()

    def _failed(self) -> None:
        self.button.setEnabled(True)
        self.label.setText(f"Replying on {self.host}. Asking it to stop failed; try again.")
