"""Naming a checkpoint, and the list of a chat's checkpoints (restore, remove).

A checkpoint names a point of the conversation; restoring it moves the shown path back
to that message (the branch that followed stays in the tree, nothing is deleted). The
list is a popup like the context meter's breakdown: each checkpoint with a line of the
message it names, and its Restore and Remove buttons; it reports what was chosen and the
tab asks the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from PySide6.QtCore import QPoint, Qt, Signal, SignalInstance
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from threadline.core.conversation import MAX_CHECKPOINT_NAME
from threadline.core.messages import Message
from threadline.ui.chat.view.context_marks import excerpt

MAX_NAME = MAX_CHECKPOINT_NAME


class CheckpointNameDialog(QDialog):
    """Asks for a checkpoint's name; an existing name is moved to the new place (said so)."""

    def __init__(self, taken: Mapping[str, str], about: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CheckpointNameDialog")
        self.setWindowTitle("Set checkpoint")
        self.setMinimumWidth(380)
        self._taken = taken
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 16, 18, 14)
        layout.setSpacing(10)
        where = QLabel(f"Name this point to come back to it later:<br><i>{_html(about)}</i>")
        where.setWordWrap(True)
        layout.addWidget(where)
        self.name = QLineEdit()
        self.name.setObjectName("CheckpointName")
        self.name.setMaxLength(MAX_NAME)
        self.name.setPlaceholderText("e.g. before-refactor")
        self.name.setAccessibleName("Checkpoint name")
        self.name.textChanged.connect(self._check)
        layout.addWidget(self.name)
        self.note = QLabel()
        self.note.setObjectName("CheckpointNote")
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok = buttons.addButton("Set checkpoint", QDialogButtonBox.ButtonRole.AcceptRole)
        self.ok.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._check("")

    def checkpoint_name(self) -> str:
        return " ".join(self.name.text().split())

    def _check(self, _text: str) -> None:
        name = self.checkpoint_name()
        self.ok.setEnabled(bool(name))
        self.note.setText(
            f"“{name}” already names another point; it will move here." if name in self._taken else ""
        )
        self.note.setVisible(bool(self.note.text()))


def in_conversation_order(named: Mapping[str, str], message_of: Callable[[str], Message | None]) -> list[str]:
    """Checkpoint names in the order of the messages they mark (oldest first), then by name.

    Not the stored order: a server database keeps the names in a JSON object with no order.
    A checkpoint whose message is gone comes last.
    """

    def key(name: str) -> tuple[bool, float, str]:
        message = message_of(named[name])
        when = message.created_at.timestamp() if message is not None else 0.0
        return (message is None, when, name.casefold())

    return sorted(named, key=key)


class CheckpointList(QFrame):
    """A popup listing the checkpoints; ``restoreRequested`` / ``removeRequested`` carry a name."""

    restoreRequested = Signal(str)
    removeRequested = Signal(str)

    def __init__(
        self,
        named: Mapping[str, str],
        message_of: Callable[[str], Message | None],
        parent: QWidget,
        *,
        muted: str = "#5c6168",
    ) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setObjectName("CheckpointList")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Checkpoints")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 12, 14, 12)
        layout.setSpacing(8)
        title = QLabel("<b>Checkpoints</b>")
        layout.addWidget(title)
        self.restore_buttons: dict[str, QPushButton] = {}
        self.remove_buttons: dict[str, QPushButton] = {}
        if not named:
            empty = QLabel(
                "None yet. “Set checkpoint…” names the point you are at;\n"
                "a message's menu names that message."
            )
            empty.setObjectName("CheckpointEmpty")
            layout.addWidget(empty)
            return
        grid = QGridLayout()
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(6)
        for row, name in enumerate(in_conversation_order(named, message_of)):
            message = message_of(named[name])
            line = excerpt(message, 56) if message is not None else "(message no longer in this chat)"
            label = QLabel(f"<b>⚑ {_html(name)}</b><br><span style='color:{muted};'>{_html(line)}</span>")
            label.setTextFormat(Qt.TextFormat.RichText)
            grid.addWidget(label, row, 0)
            restore = QPushButton("Restore")
            restore.setObjectName(f"checkpoint-restore-{name}")
            restore.setAccessibleName(f"Restore {name}")
            restore.setEnabled(message is not None)
            restore.clicked.connect(self._emit(self.restoreRequested, name))
            grid.addWidget(restore, row, 1)
            remove = QPushButton("Remove")
            remove.setObjectName(f"checkpoint-remove-{name}")
            remove.setAccessibleName(f"Remove {name}")
            remove.clicked.connect(self._emit(self.removeRequested, name))
            grid.addWidget(remove, row, 2)
            self.restore_buttons[name] = restore
            self.remove_buttons[name] = remove
        grid.setColumnStretch(0, 1)
        layout.addLayout(grid)
        first = next(iter(self.restore_buttons.values()))
        first.setFocus(Qt.FocusReason.PopupFocusReason)

    def _emit(self, signal: SignalInstance, name: str) -> Callable[[], None]:
        def chosen() -> None:
            self.close()
            signal.emit(name)

        return chosen

    def show_above(self, widget: QWidget) -> None:
        """Open above ``widget``'s right end (the conversation menu's button)."""
        self.adjustSize()
        size = self.sizeHint()
        corner = widget.mapToGlobal(QPoint(widget.width() - size.width(), -size.height() - 4))
        self.move(corner)
        self.show()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close()
            return
        super().keyPressEvent(event)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
