"""An inline banner in a tab: what went wrong, and buttons for what to do about it.

Built from the engine's ``UserFacingError`` — never from a traceback. The same
widget, in its quiet variant, tells about a scheduled retry ("Retrying in 4 s").
"""

from __future__ import annotations

import re

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from threadline.engine.events import ErrorAction, UserFacingError
from threadline.ui.common.announce import announce

ACTION_TEXT = {
    ErrorAction.RETRY: "Retry",
    ErrorAction.ADD_KEY: "Add API key…",
    ErrorAction.PICK_MODEL: "Choose another model",
    ErrorAction.COMPACT: "Compact conversation",
    ErrorAction.NEW_SESSION: "Start a new chat",
    ErrorAction.SETTINGS: "Open Settings…",
    ErrorAction.SET_CONTEXT_WINDOW: "Set the context window…",
    ErrorAction.RERUN_TOOLS: "Run again",
    ErrorAction.SKIP_TOOLS: "Skip",
}


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z“\"'(])")


def first_sentence(text: str) -> str:
    """``text`` up to the end of its first sentence (all of it when it is one sentence)."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


class ErrorBanner(QFrame):
    actionChosen = Signal(object)  # ErrorAction
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ErrorBanner")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(12, 8, 8, 8)
        self._layout.setSpacing(8)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._layout.addWidget(self.label, 1)
        self._buttons: list[QPushButton] = []
        self.close_button = QToolButton()
        self.close_button.setText("×")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Dismiss")
        self.close_button.setAccessibleName("Dismiss message")
        self.close_button.clicked.connect(self.dismiss)
        self._layout.addWidget(self.close_button)
        self.error: UserFacingError | None = None
        self.hide()

    def show_error(self, error: UserFacingError, text: str = "") -> None:
        """Show ``error`` with its buttons; ``text``, when given, is what the banner says instead
        of the whole message (a failed reply already shows the whole explanation)."""
        self.setObjectName("ErrorBanner")
        self._restyle()
        self.error = error
        said = text or error.message
        self.label.setText(said)
        self.label.setToolTip(error.message if said != error.message else "")
        self._set_buttons(error.actions)
        self.show()
        announce(self, self._spoken(said), assertive=True)

    def show_info(self, text: str) -> None:
        """A quiet note; announced when it appears, not on each update (a retry counts down each second)."""
        appearing = self.isHidden() or self.objectName() != "InfoBanner"
        self.setObjectName("InfoBanner")
        self._restyle()
        self.error = None
        self.label.setText(text)
        self._set_buttons(())
        self.show()
        if appearing:
            announce(self, text)

    def _spoken(self, message: str) -> str:
        """The message and the names of its buttons, so a listener knows what can be done."""
        choices = [b.text().replace("&", "") for b in self._buttons]
        return f"{message} Choices: {', '.join(choices)}." if choices else message

    def dismiss(self) -> None:
        self.error = None
        self.hide()
        self.dismissed.emit()

    def button(self, action: ErrorAction) -> QPushButton | None:
        return next((b for b in self._buttons if b.property("action") == action.value), None)

    def _set_buttons(self, actions: tuple[ErrorAction, ...]) -> None:
        for b in self._buttons:
            self._layout.removeWidget(b)
            b.deleteLater()
        self._buttons = []
        for i, action in enumerate(actions):
            b = QPushButton(ACTION_TEXT.get(action, str(action).replace("_", " ").capitalize()))
            b.setProperty("action", action.value)
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            b.clicked.connect(lambda _=False, a=action: self.actionChosen.emit(a))
            self._layout.insertWidget(1 + i, b)
            self._buttons.append(b)

    def _restyle(self) -> None:
        self.style().unpolish(self)
        self.style().polish(self)
        for child in self.findChildren(QLabel):
            child.style().unpolish(child)
            child.style().polish(child)
