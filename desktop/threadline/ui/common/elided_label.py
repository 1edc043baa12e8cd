"""A one-line label that ends in "…" when it is narrower than its text.

A plain ``QLabel`` too narrow for its text cuts it at the edge, often through a letter,
with nothing to say that more follows (the undo bar's "Deleted “A long chat title”" in a
narrow sidebar). This one keeps the whole text as its ``text()`` (and so for assistive
tools and its tooltip) and paints as much as fits, elided at the end.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """A label whose text is elided with "…" when it does not fit (its full text is the tooltip)."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)

    def shown_text(self) -> str:
        """What is painted at the current width (tests read it)."""
        return self.fontMetrics().elidedText(
            self.text(), Qt.TextElideMode.ElideRight, self.contentsRect().width()
        )

    def minimumSizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance("…") * 4, super().minimumSizeHint().height())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            painter.setPen(self.palette().color(self.foregroundRole()))
            painter.setFont(self.font())
            flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
            painter.drawText(self.contentsRect(), int(flags), self.shown_text())
        finally:
            painter.end()
