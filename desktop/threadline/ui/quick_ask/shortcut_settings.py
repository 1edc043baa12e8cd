"""Settings → Quick ask: the global shortcut (a key sequence editor), whether it works here, and the command.

The window adds this page to its Settings dialog (the settings room does not know Quick
ask). A change is stored through ``engine.settings`` and bound at once.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from threadline.ui.quick_ask.global_hotkey import QuickAskShortcut
from threadline.ui.quick_ask.shortcuts.base import COMMAND, DEFAULT_SHORTCUT


class QuickAskSettings(QWidget):
    """The shortcut row, its state line, the command and buttons to open Quick ask now."""

    def __init__(
        self,
        shortcut: QuickAskShortcut,
        store: Callable[[str], None],
        open_quick_ask: Callable[[bool], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("QuickAskSettings")
        self._shortcut = shortcut
        self._store = store
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        intro = QLabel(
            "Quick ask is a small window above all others: ask a question from any application, "
            "and continue the chat in the main window when you want to."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        form = QFormLayout()
        row = QHBoxLayout()
        self.editor = QKeySequenceEdit(shortcut.sequence)
        self.editor.setAccessibleName("Quick ask shortcut")
        self.editor.setMaximumSequenceLength(1)
        self.editor.setClearButtonEnabled(True)
        self.editor.editingFinished.connect(self._edited)
        self.editor.keySequenceChanged.connect(self._maybe_cleared)
        self.editor.installEventFilter(self)
        row.addWidget(self.editor, 1)
        self.default_button = QPushButton("Default")
        self.default_button.setToolTip(f"Use {DEFAULT_SHORTCUT}")
        self.default_button.clicked.connect(lambda: self._choose(QKeySequence(DEFAULT_SHORTCUT)))
        row.addWidget(self.default_button)
        form.addRow("Global shortcut:", row)
        self.state = QLabel(shortcut.status)
        self.state.setObjectName("QuickAskShortcutState")
        self.state.setWordWrap(True)
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self.state)
        self.command = QLineEdit(COMMAND)
        self.command.setReadOnly(True)
        self.command.setAccessibleName("Command that opens Quick ask")
        self.command.setToolTip(
            "Bind this command in your desktop's keyboard settings to open Quick ask from there"
        )
        form.addRow("Command:", self.command)
        layout.addLayout(form)
        buttons = QHBoxLayout()
        self.open_button = QPushButton("Open Quick ask")
        self.open_button.clicked.connect(lambda: open_quick_ask(False))
        self.selection_button = QPushButton("Ask about the selection")
        self.selection_button.setToolTip("Quick ask with the selected text (or the clipboard's) quoted")
        self.selection_button.clicked.connect(lambda: open_quick_ask(True))
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.selection_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addStretch(1)
        shortcut.statusChanged.connect(self.state.setText)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """While the editor has the focus the shortcut is let go, so that pressing it records it."""
        if watched is self.editor and event.type() == QEvent.Type.FocusIn:
            self._shortcut.suspend()
        elif watched is self.editor and event.type() == QEvent.Type.FocusOut:
            self._shortcut.resume()
        return False

    def _maybe_cleared(self, sequence: QKeySequence) -> None:
        if sequence.isEmpty() and not self._shortcut.sequence.isEmpty():
            self._choose(sequence)  # the clear button: no shortcut

    def _edited(self) -> None:
        self._choose(self.editor.keySequence())

    def _choose(self, sequence: QKeySequence) -> None:
        if self.editor.keySequence() != sequence:
            self.editor.setKeySequence(sequence)
        if sequence == self._shortcut.sequence:
            return
        text = sequence.toString(QKeySequence.SequenceFormat.PortableText)
        self._shortcut.apply(text)
        self._store(text)
