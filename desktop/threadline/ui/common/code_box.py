"""A read-only monospace box sized to its text: a command line, JSON arguments or a diff.

Used by the approval bar. It grows with its text up to ``max_lines`` and scrolls
beyond that. With ``diff=True`` each line of a unified diff gets a full-width
background (additions green, removals red, hunk headers in the accent colour),
set as block formats so even a long diff is coloured once, not on every paint.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextOption,
)
from PySide6.QtWidgets import QFrame, QPlainTextEdit, QSizePolicy, QWidget

from threadline.ui.common.theme_colors import ThemeColors, mix

MAX_DIFF_LINES = 3000


class CodeBox(QPlainTextEdit):
    def __init__(
        self,
        text: str,
        colors: ThemeColors,
        *,
        diff: bool = False,
        wrap: bool = True,
        max_lines: int = 12,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("CodeBox")
        self.setReadOnly(True)
        self.setTabChangesFocus(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(
            QPlainTextEdit.LineWrapMode.WidgetWidth if wrap else QPlainTextEdit.LineWrapMode.NoWrap
        )
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().setDocumentMargin(6)
        self._text = text
        self._diff = diff
        self._max_lines = max_lines
        self._colors = colors
        self._fill()

    @property
    def text(self) -> str:
        return self._text

    def set_colors(self, colors: ThemeColors) -> None:
        if colors != self._colors:
            self._colors = colors
            if self._diff:
                self._fill()

    def _fill(self) -> None:
        if not self._diff:
            self.setPlainText(self._text)
        else:
            self._fill_diff()
        self._fit()

    def _fit(self) -> None:
        """As tall as the text (wrapped lines counted at the current width), up to ``max_lines``."""
        metrics = self.fontMetrics()
        lines = self._text.splitlines() or [""]
        wrap = self.lineWrapMode() is not QPlainTextEdit.LineWrapMode.NoWrap
        room = self.viewport().width() - 2 * int(self.document().documentMargin()) - 2
        count = 0
        for line in lines:
            if wrap and room > 40:
                count += max(1, -(-metrics.horizontalAdvance(line) // room))
            else:
                count += 1
            if count >= self._max_lines:
                break
        count = max(1, min(self._max_lines, count))
        frame = 2 * self.frameWidth()
        height = count * metrics.lineSpacing() + 2 * int(self.document().documentMargin()) + frame + 2
        if height != self.height() or self.minimumHeight() != height:
            self.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if not self._diff:
            self._fit()

    def _fill_diff(self) -> None:
        c = self._colors
        strength = 0.20 if c.dark else 0.13
        added_bg = mix(c.success, c.code_bg, strength)
        removed_bg = mix("#d1242f", c.code_bg, strength)
        styles: dict[str, tuple[QColor | None, str]] = {
            "+": (added_bg, c.success),
            "-": (removed_bg, c.error_text if c.dark else "#b42318"),
            "@": (None, c.accent),
            "h": (None, c.muted),
            " ": (None, c.text),
        }
        self.clear()
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        lines = self._text.splitlines()
        shown = lines[:MAX_DIFF_LINES]
        for i, line in enumerate(shown):
            if line.startswith(("+++", "---")) or line.startswith("\\"):
                key = "h"
            else:
                key = line[:1] if line[:1] in "+-@" else " "
            bg, fg = styles[key]
            block = QTextBlockFormat()
            if bg is not None:
                block.setBackground(bg)
            char = QTextCharFormat()
            char.setForeground(QColor(fg))
            if key == "h":
                char.setFontWeight(600)
            if i:
                cursor.insertBlock(block, char)
            else:
                cursor.setBlockFormat(block)
                cursor.setBlockCharFormat(char)
            cursor.insertText(line, char)
        if len(lines) > MAX_DIFF_LINES:
            char = QTextCharFormat()
            char.setForeground(QColor(c.muted))
            cursor.insertBlock(QTextBlockFormat(), char)
            cursor.insertText(f"… {len(lines) - MAX_DIFF_LINES} more lines", char)
        cursor.endEditBlock()
        self.moveCursor(QTextCursor.MoveOperation.Start)

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.height())
