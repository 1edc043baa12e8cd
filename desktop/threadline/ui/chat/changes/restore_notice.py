"""The bar that says what a file restore did, with "Undo restore" (docs/file-changes-ui.md).

It stays until the user closes it or another restore replaces it: undoing a restore is the
way back from a mistake, so it is not taken away after a few seconds as the message undo
is. The same undo is offered later from the chat's file changes (the status line's totals).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from threadline.core.file_changes import ChangeSet
from threadline.ui.common.announce import announce


def restore_result(result: ChangeSet, asked: int) -> str:
    """ "Restored 3 files." / "Restored 2 of 3 files; 1 had changed meanwhile and was left alone." """
    done = len(result.changes)
    noun = "file" if done == 1 else "files"
    if done >= asked:
        return f"Restored {done} {noun}."
    left = asked - done
    return (
        f"Restored {done} of {asked} files; {left} changed on disk meanwhile and "
        f"{'was' if left == 1 else 'were'} left alone."
    )


class RestoreNotice(QFrame):
    """ "Restored 3 files. Undo restore ×": ``undoRequested`` carries the restore's change set."""

    undoRequested = Signal(object)  # ChangeSet

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("UndoBar")
        self.setAccessibleName("Files restored")
        self.result: ChangeSet | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 4, 4)
        self.label = QLabel()
        self.label.setWordWrap(True)
        layout.addWidget(self.label, 1)
        self.undo_button = QPushButton("Undo restore")
        self.undo_button.setObjectName("UndoRestoreButton")
        self.undo_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.undo_button.setAccessibleDescription("Put the files back as they were before this restore")
        self.undo_button.clicked.connect(self._undo)
        layout.addWidget(self.undo_button)
        self.close_button = QPushButton("\u00d7")
        self.close_button.setObjectName("UndoRestoreClose")
        self.close_button.setAccessibleName("Close")
        self.close_button.clicked.connect(self.withdraw)
        layout.addWidget(self.close_button)
        self.hide()

    def offer(self, result: ChangeSet, text: str) -> None:
        self.result = result
        self.label.setText(text)
        self.undo_button.setVisible(bool(result.changes))
        self.show()
        announce(self, text)

    def withdraw(self) -> None:
        self.result = None
        self.hide()

    def _undo(self) -> None:
        result = self.result
        self.withdraw()
        if result is not None:
            self.undoRequested.emit(result)
