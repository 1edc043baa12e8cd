"""The strip at the top of a chat tab while it is in a tangent.

A tangent is a side conversation started from some message; the main line is kept where it
was. While one is open the tab must say so at a glance — in its own hue, apart from the
accent, errors and warnings — and offer the way back, optionally bringing the tangent's
last exchange along to the main line. The strip follows the conversation's
``tangent_origin`` (shown after a restart or a restore that lands in a tangent, hidden
when there is none); the tab tells it via :meth:`TangentBanner.follow`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from threadline.ui.chat.view.context_marks import mark_colours
from threadline.ui.common.announce import announce
from threadline.ui.common.theme import ThemeColors

BANNER_TEXT = "<b>Tangent</b> — a side conversation; the main line waits where you left it."


class TangentBanner(QFrame):
    """Shown while in a tangent; ``returnRequested(bring_last_exchange)`` when the user leaves it."""

    returnRequested = Signal(bool)

    def __init__(self, colors: ThemeColors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("TangentBanner")
        self.setAccessibleName("Tangent")
        self.setAccessibleDescription("This chat is in a side conversation; Return to main line leaves it.")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(14, 6, 10, 6)
        layout.setSpacing(12)
        self.mark = QLabel("⤷")
        self.mark.setObjectName("TangentMark")
        self.mark.setAccessibleName("")
        layout.addWidget(self.mark)
        self.label = QLabel(BANNER_TEXT)
        self.label.setWordWrap(True)
        self.label.setMinimumWidth(
            self.label.fontMetrics().horizontalAdvance("Tangent — a side conversation; the main")
        )
        layout.addWidget(self.label, 1)
        self.bring = QCheckBox("Bring the last exchange")
        self.bring.setObjectName("TangentBringLast")
        self.bring.setToolTip("Copy the tangent's last question and answer to the main line when you return")
        layout.addWidget(self.bring)
        self.return_button = QPushButton("Return to main line")
        self.return_button.setObjectName("TangentReturn")
        self.return_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.return_button.clicked.connect(self._return)
        layout.addWidget(self.return_button)
        self._origin: str | None = None
        self._colors = colors
        self._styled = False
        """Whether the style sheet was set: only once the strip is first shown, since a widget's
        own style sheet makes Qt build styling state for it and its children, and most chats
        are never in a tangent."""
        self.hide()

    @property
    def origin(self) -> str | None:
        """The main-line message the open tangent returns to (None: not in a tangent)."""
        return self._origin

    def follow(self, origin: str | None) -> None:
        """Show the strip for a tangent returning to ``origin``, or hide it (``None``)."""
        if origin == self._origin:
            return
        was_shown = self._origin is not None
        self._origin = origin
        if origin is None:
            self.hide()
            self.bring.setChecked(False)
            return
        if not self._styled:
            self._styled = True
            self._apply_style()
        self.show()
        if not was_shown:
            announce(self, "In a tangent: a side conversation. Return to main line leaves it.")

    def _return(self) -> None:
        self.returnRequested.emit(self.bring.isChecked())

    def set_colors(self, c: ThemeColors) -> None:
        self._colors = c
        if self._styled:
            self._apply_style()

    def _apply_style(self) -> None:
        c = self._colors
        hue = mark_colours(c)
        self.setStyleSheet(
            f"#TangentBanner {{ background: {hue.tangent_bg}; border-bottom: 1px solid {hue.tangent};"
            f" border-left: 4px solid {hue.tangent}; }}"
            f"#TangentBanner QLabel {{ color: {c.text}; background: transparent; }}"
            f"#TangentBanner QLabel#TangentMark {{ color: {hue.tangent}; font-size: 15px;"
            " font-weight: 600; }"
            f"#TangentBanner QCheckBox {{ color: {c.text}; background: transparent; }}"
            f"#TangentBanner QPushButton {{ background: {hue.tangent}; color: {c.base};"
            f" border: none; border-radius: 6px; padding: 4px 12px; font-weight: 600; }}"
            f"#TangentBanner QPushButton:hover {{ background: {c.text}; }}"
            f"#TangentBanner QPushButton:focus {{ outline: 2px solid {c.accent}; }}"
        )
