"""What the right side shows when no tab is open: a calm start page.

With no provider configured it leads to setting one up, offering any local server
found on its default port (Ollama, LM Studio, llama.cpp…) as a one-click choice;
otherwise it offers a new chat. Browsing, searching and exporting old sessions work
either way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from threadline.core.config import ProviderConfig


class EmptyState(QWidget):
    newChatRequested = Signal()
    addProviderRequested = Signal()
    useDetectedRequested = Signal(object)  # ProviderConfig

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("EmptyState")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        outer = QVBoxLayout(self)
        outer.addStretch(2)
        column = QVBoxLayout()
        column.setSpacing(10)
        self.title = QLabel("Threadline")
        self.title.setObjectName("EmptyTitle")
        self.title.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        column.addWidget(self.title)
        self.text = QLabel("Loading your conversations…")
        self.text.setObjectName("EmptyText")
        self.text.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.text.setWordWrap(True)
        self.text.setFixedWidth(440)
        row_text = QHBoxLayout()
        row_text.addStretch(1)
        row_text.addWidget(self.text)
        row_text.addStretch(1)
        column.addLayout(row_text)
        self.buttons = QHBoxLayout()
        self.buttons.setSpacing(8)
        self.buttons.addStretch(1)
        self.new_button = QPushButton("New chat")
        self.new_button.setObjectName("PrimaryButton")
        self.new_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.new_button.clicked.connect(self.newChatRequested)
        self.buttons.addWidget(self.new_button)
        self.provider_button = QPushButton("Add a provider…")
        self.provider_button.setObjectName("SecondaryButton")
        self.provider_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.provider_button.clicked.connect(self.addProviderRequested)
        self.buttons.addWidget(self.provider_button)
        self.buttons.addStretch(1)
        column.addSpacing(6)
        column.addLayout(self.buttons)
        self.detected_box = QVBoxLayout()
        self.detected_box.setSpacing(6)
        column.addLayout(self.detected_box)
        outer.addLayout(column)
        outer.addStretch(3)
        self._detected_buttons: list[QPushButton] = []
        self.new_button.hide()
        self.provider_button.hide()

    def show_ready(self, *, has_provider: bool, session_count: int) -> None:
        self.title.setText("Start a conversation" if has_provider else "Welcome to Threadline")
        if has_provider:
            self.text.setText(
                "Press Ctrl+N for a new chat, or pick a conversation on the left."
                if session_count
                else "Press Ctrl+N or the button below to start your first chat."
            )
            self.new_button.show()
            self.provider_button.hide()
            self.new_button.setObjectName("PrimaryButton")
        else:
            self.text.setText(
                "To chat, connect a model: a local server such as Ollama or LM Studio, or a cloud "
                "provider with an API key. Your saved conversations can be browsed, searched and "
                "exported without one."
            )
            self.new_button.hide()
            self.provider_button.show()
            self.provider_button.setObjectName("PrimaryButton")
        for w in (self.new_button, self.provider_button):
            w.style().unpolish(w)
            w.style().polish(w)
        if has_provider:
            self.show_detected([])

    def show_detected(self, found: list[ProviderConfig]) -> None:
        for b in self._detected_buttons:
            self.detected_box.removeWidget(b)
            b.deleteLater()
        self._detected_buttons = []
        for config in found:
            b = QPushButton(f"Use {config.name} at {config.base_url}")
            b.setObjectName("SecondaryButton")
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            b.clicked.connect(lambda _=False, c=config: self.useDetectedRequested.emit(c))
            row = QHBoxLayout()
            self.detected_box.addWidget(b, 0, Qt.AlignmentFlag.AlignHCenter)
            self._detected_buttons.append(b)
            del row
        if found:
            self.text.setText(self.text.text() + "\n\nFound on this computer:")

    def detected_buttons(self) -> list[QPushButton]:
        return list(self._detected_buttons)
