"""A read-only unified diff: green and red line backgrounds, code colours, a line-number gutter.

Built as GitHub Desktop and VS Code show a change: the file headers are left out (the
dialog names the file), each hunk header is a quiet band, an added line has a green
background and its new line number, a removed line a red one and its old number, and the
code keeps its syntax colours on top. The backgrounds are block formats set once when the
diff is shown, so a long diff is not coloured again on every paint; the gutter paints only
the visible blocks.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QFrame, QPlainTextEdit, QWidget

from threadline.ui.chat.changes.change_colours import ChangeColours, change_colours
from threadline.ui.chat.changes.diff_lines import DiffLine, LineKind, changed_words, diff_lines
from threadline.ui.chat.changes.shown_paths import printable, printable_content
from threadline.ui.chat.changes.syntax_colours import line_spans
from threadline.ui.common.theme import ThemeColors

MAX_LINES = 3000
"""Lines shown at most; the rest is named in a last line (a diff that long is read elsewhere)."""
GUTTER_PAD = 8
TEXT_GAP = 6
"""Pixels between the gutter's edge and the text, painted in the line's colour by the gutter."""


class DiffView(QPlainTextEdit):
    """The diff of one file; ``rows`` are the lines shown, in block order."""

    def __init__(self, colors: ThemeColors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DiffView")
        self.setReadOnly(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.document().setDocumentMargin(0)
        self.rows: list[DiffLine] = []
        self.hidden_lines = 0
        """Lines past ``MAX_LINES`` that are not shown."""
        self._text = ""
        self._file_name = ""
        self._colors = colors
        self._change = change_colours(colors, colors.code_bg)
        self._gutter = _Gutter(self)
        self.updateRequest.connect(self._scroll_gutter)
        self._apply_palette()

    @property
    def colors(self) -> ThemeColors:
        return self._colors

    def set_colors(self, colors: ThemeColors) -> None:
        if colors == self._colors:
            return
        self._colors = colors
        self._change = change_colours(colors, colors.code_bg)
        self._apply_palette()
        self.show_diff(self._text, self._file_name)

    def show_diff(self, text: str, file_name: str = "") -> None:
        """Show unified diff ``text``; ``file_name`` picks the code colours (by its extension)."""
        self._text, self._file_name = text, file_name
        rows = diff_lines(printable_content(text))
        self.hidden_lines = max(0, len(rows) - MAX_LINES)
        self.rows = rows[:MAX_LINES]
        self._fill()
        self._update_gutter_width()
        self._gutter.update()

    def gutter_width(self) -> int:
        return self._gutter.width()

    def _apply_palette(self) -> None:
        c = self._colors
        self.setStyleSheet(
            f"#DiffView {{ background: {c.code_bg}; color: {c.text}; border: none;"
            f" selection-background-color: {c.selection}; selection-color: {c.text}; }}"
            f"#DiffView QScrollBar:horizontal {{ background: transparent; height: 10px; margin: 0; }}"
            f"#DiffView QScrollBar::handle:horizontal {{ background: {c.border}; border-radius: 4px;"
            f" min-width: 30px; margin: 2px; }}"
            f"#DiffView QScrollBar::handle:horizontal:hover {{ background: {c.muted}; }}"
            f"#DiffView QScrollBar::add-line:horizontal, #DiffView QScrollBar::sub-line:horizontal"
            f" {{ width: 0; }}"
            f"#DiffView QScrollBar::add-page:horizontal, #DiffView QScrollBar::sub-page:horizontal"
            f" {{ background: transparent; }}"
        )

    def _fill(self) -> None:
        c, change = self._colors, self._change
        self.clear()
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        codes = [r.text[1:] if r.kind is not LineKind.HUNK else "" for r in self.rows]
        spans = line_spans(os.path.basename(printable(self._file_name)), codes, c.pygments_style)
        for i, row in enumerate(self.rows):
            block = QTextBlockFormat()
            background = _background(row.kind, change)
            if background:
                block.setBackground(QColor(background))
            plain = QTextCharFormat()
            plain.setForeground(QColor(c.text))
            if row.kind is LineKind.HUNK:
                plain.setForeground(QColor(change.hunk_text))
            elif row.kind is LineKind.NOTE:
                plain.setForeground(QColor(c.muted))
                plain.setFontItalic(True)
            block.setProperty(QTextFormat.Property.UserProperty, row.kind.value)
            if i:
                cursor.insertBlock(block, plain)
            else:
                cursor.setBlockFormat(block)
                cursor.setBlockCharFormat(plain)
            shown = row.text
            if row.kind in (LineKind.ADDED, LineKind.REMOVED, LineKind.CONTEXT):
                marker = QTextCharFormat(plain)
                marker.setForeground(QColor(change.added if row.kind is LineKind.ADDED else change.removed))
                if row.kind is LineKind.CONTEXT:
                    marker = plain
                cursor.insertText(shown[:1], marker)
                self._insert_code(cursor, shown[1:], spans[i], plain)
            else:
                cursor.insertText(shown, plain)
        self._mark_words(cursor)
        if self.hidden_lines:
            note = QTextCharFormat()
            note.setForeground(QColor(c.muted))
            note.setFontItalic(True)
            cursor.insertBlock(QTextBlockFormat(), note)
            cursor.insertText(f"… {self.hidden_lines} more lines not shown", note)
        cursor.endEditBlock()
        self.moveCursor(QTextCursor.MoveOperation.Start)

    def _mark_words(self, cursor: QTextCursor) -> None:
        """A stronger background under the characters an edited line changed (``changed_words``)."""
        doc = self.document()
        for number, ranges in changed_words(self.rows).items():
            block = doc.findBlockByNumber(number)
            word = QTextCharFormat()
            added = self.rows[number].kind is LineKind.ADDED
            word.setBackground(QColor(self._change.added_word_bg if added else self._change.removed_word_bg))
            for start, length in ranges:
                cursor.setPosition(block.position() + 1 + start)
                cursor.setPosition(block.position() + 1 + start + length, QTextCursor.MoveMode.KeepAnchor)
                cursor.mergeCharFormat(word)
        cursor.movePosition(QTextCursor.MoveOperation.End)

    @staticmethod
    def _insert_code(
        cursor: QTextCursor, code: str, spans: list[tuple[int, int, str, bool]], plain: QTextCharFormat
    ) -> None:
        at = 0
        for start, length, colour, bold in spans:
            if start > at:
                cursor.insertText(code[at:start], plain)
            token = QTextCharFormat(plain)
            token.setForeground(QColor(colour))
            if bold:
                token.setFontWeight(QFont.Weight.DemiBold)
            cursor.insertText(code[start : start + length], token)
            at = start + length
        if at < len(code):
            cursor.insertText(code[at:], plain)

    # -- the gutter ---------------------------------------------------------------------------

    def _digits(self) -> int:
        top = max((n for r in self.rows for n in (r.old, r.new) if n is not None), default=1)
        return max(3, len(str(top)))

    def _update_gutter_width(self) -> None:
        width = 2 * (self.fontMetrics().horizontalAdvance("9") * self._digits() + 2 * GUTTER_PAD) + TEXT_GAP
        self.setViewportMargins(width, 0, 0, 0)
        self._gutter.setFixedWidth(width)
        self._place_gutter()

    def _place_gutter(self) -> None:
        rect = self.contentsRect()
        self._gutter.setGeometry(QRect(rect.left(), rect.top(), self._gutter.width(), rect.height()))

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_gutter()

    def paint_gutter(self, event: QPaintEvent) -> None:
        p = QPainter(self._gutter)
        c, change = self._colors, self._change
        p.fillRect(event.rect(), QColor(c.code_bg))
        numbers = self._gutter.width() - TEXT_GAP
        half = numbers // 2
        p.setFont(self.font())
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        while block.isValid() and top <= event.rect().bottom():
            height = round(self.blockBoundingRect(block).height())
            number = block.blockNumber()
            if block.isVisible() and number < len(self.rows):
                row = self.rows[number]
                band = _gutter_background(row.kind, change)
                if band:
                    p.fillRect(QRect(0, top, numbers, height), QColor(band))
                line = _background(row.kind, change)
                if line:
                    p.fillRect(QRect(numbers, top, TEXT_GAP, height), QColor(line))
                p.setPen(QColor(c.muted))
                for column, value in enumerate((row.old, row.new)):
                    if value is not None:
                        box = QRect(column * half, top, half - GUTTER_PAD, height)
                        p.drawText(
                            box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, str(value)
                        )
            top += height
            block = block.next()
        p.setPen(QColor(c.code_border))
        p.drawLine(numbers - 1, event.rect().top(), numbers - 1, event.rect().bottom())
        p.end()


class _Gutter(QWidget):
    """The two columns of line numbers (old, new) left of the text; painted by the view."""

    def __init__(self, view: DiffView) -> None:
        super().__init__(view)
        self._view = view

    def sizeHint(self) -> QSize:
        return QSize(self.width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._view.paint_gutter(event)


def _background(kind: LineKind, change: ChangeColours) -> str:
    return {
        LineKind.ADDED: change.added_bg,
        LineKind.REMOVED: change.removed_bg,
        LineKind.HUNK: change.hunk_bg,
    }.get(kind, "")


def _gutter_background(kind: LineKind, change: ChangeColours) -> str:
    return {
        LineKind.ADDED: change.added_gutter,
        LineKind.REMOVED: change.removed_gutter,
        LineKind.HUNK: change.hunk_bg,
    }.get(kind, "")
