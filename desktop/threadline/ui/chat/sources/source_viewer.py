"""A read-only window on a source: the file at the passage's lines, or the passage itself.

A text file is shown whole with the passage's lines highlighted and scrolled to the middle
(the lines are counted in the file as it is now: a file changed since indexing shows the
lines that are there now). "Open in app" hands the file to the system's app. A source
with no file to read shows the passage that was sent (``source_opening``).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from threadline.core.sources import Source


class SourceViewer(QDialog):
    openInAppRequested = Signal()

    def __init__(self, source: Source, number: int, text: str, parent: QWidget, *, whole_file: bool) -> None:
        super().__init__(parent)
        self.setObjectName("SourceViewer")
        where = source.locator
        self.setWindowTitle(where.describe())
        self.resize(720, 520)
        layout = QVBoxLayout(self)
        title = QLabel(source.heading_line(number))
        title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        title.setWordWrap(True)
        layout.addWidget(title)
        if where.path:
            path = QLabel(where.path)
            path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            path.setStyleSheet("color: palette(placeholder-text);")
            layout.addWidget(path)
        self.text = QPlainTextEdit(text)
        self.text.setReadOnly(True)
        if whole_file:
            self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        if where.path:
            in_app = buttons.addButton("Open in app", QDialogButtonBox.ButtonRole.ActionRole)
            in_app.clicked.connect(self.openInAppRequested)
        layout.addWidget(buttons)
        self.first_line = 1
        self.last_line = 1
        if whole_file and where.line_start is not None:
            self.show_lines(where.line_start, where.line_end or where.line_start)

    def show_lines(self, first: int, last: int) -> None:
        """Highlight lines ``first``…``last`` (from 1) and put them in the middle of the view."""
        doc = self.text.document()
        count = doc.blockCount()
        self.first_line = max(1, min(first, count))
        self.last_line = max(self.first_line, min(last, count))
        colour = QColor(self.palette().highlight().color())
        colour.setAlpha(110)
        selections = []
        for number in range(self.first_line, self.last_line + 1):  # a full-width band per line
            selection = QTextEdit.ExtraSelection()
            selection.cursor = QTextCursor(doc.findBlockByNumber(number - 1))
            selection.format.setBackground(colour)
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selections.append(selection)
        self.text.setExtraSelections(selections)
        caret = QTextCursor(doc.findBlockByNumber(self.first_line - 1))
        self.text.setTextCursor(caret)
        self.text.centerCursor()

    def highlighted_text(self) -> str:
        """The text of the lines shown highlighted (tests read it)."""
        return "\n".join(selection.cursor.block().text() for selection in self.text.extraSelections())
