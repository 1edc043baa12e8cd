"""The session's totals on the tab's status line: "4 files changed +40 −12", a click lists the files.

The window's status bar holds the tab's status text at the left (``QStatusBar QLabel``, in
the muted colour); this button is meant for its right end
(``statusBar().addPermanentWidget``), drawn as quietly as that text with only the counts in
green and red. A click opens a popup with one row per file (``FileTotal``: the net kind,
the path, the lines added and removed over the session); picking a row emits
``fileClicked(path)`` so the window can open the changes with that file selected.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QPoint, QSize, Qt, Signal
from PySide6.QtGui import QColor, QEnterEvent, QKeyEvent, QPainter, QPainterPath, QPaintEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QFrame,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from threadline.core.file_changes import FileTotal
from threadline.ui.chat.changes.change_colours import KIND_WORDS, change_colours
from threadline.ui.chat.changes.file_list import ROW_ROLE, FileRowDelegate, path_row
from threadline.ui.chat.changes.shown_paths import shown_path
from threadline.ui.common.theme import ThemeColors

PAD_X = 6
GAP = 6
POPUP_ROWS = 14
"""Rows the popup shows before it scrolls."""


RESTORED_TEXT = "Files back as they were"
"""What the status line says when a restore put every changed file back."""


def totals_parts(totals: Sequence[FileTotal], c: ThemeColors) -> list[tuple[str, str]]:
    """("4 files changed", muted), ("+40", green), ("−12", red) for the status line."""
    colours = change_colours(c, c.window)
    files = len(totals)
    noun = "file" if files == 1 else "files"
    added = sum(t.added for t in totals)
    removed = sum(t.removed for t in totals)
    return [
        (f"{files} {noun} changed", c.muted),
        (f"+{added}", colours.added),
        (f"\u2212{removed}", colours.removed),
    ]


class SessionTotalsButton(QAbstractButton):
    """The status line's totals; hidden while the session changed no file.

    When every file is back as it began and the last change was a restore, it reads "Files
    back as they were" instead of hiding: a click then opens the chat's changes, where the
    restore can be undone (also after a restart, when no undo bar is left).
    """

    fileClicked = Signal(object)  # str: the path on disk (a QString would drop surrogate escapes)

    def __init__(self, colors: ThemeColors, root: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SessionTotalsButton")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
        self._colors = colors
        self._root = root
        self._hovered = False
        self.totals: list[FileTotal] = []
        self.restored = False
        self.popup = TotalsPopup(colors, root, self)
        self.popup.fileClicked.connect(self.fileClicked)
        self.clicked.connect(self.show_popup)
        self.hide()

    def set_root(self, root: str | None) -> None:
        """The folder the popup's paths are shown in (the chat's files change with the tab)."""
        self._root = root
        self.popup.set_root(root)

    def set_totals(self, totals: Sequence[FileTotal], *, restored: bool = False) -> None:
        self.totals = list(totals)
        self.restored = restored and not self.totals
        if not self.totals and not self.restored:
            self.setText("")
            self.hide()
            return
        text = " ".join(t for t, _ in self._parts())
        self.setText(text)
        if self.restored:
            self.setAccessibleName(f"{text}: the last restore put the files back")
            self.setToolTip(
                "The last restore put the files back. Click to see the changes or undo the restore."
            )
        else:
            self.setAccessibleName(f"Files changed in this chat: {text}")
            self.setToolTip("Files the tools changed in this chat. Click to list them.")
        self.popup.set_totals(self.totals)
        self.updateGeometry()
        self.show()
        self.update()

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        self.popup.set_colors(colors)
        self.update()

    def _parts(self) -> list[tuple[str, str]]:
        if self.restored:
            return [(RESTORED_TEXT, self._colors.muted)]
        return totals_parts(self.totals, self._colors) if self.totals else []

    def show_popup(self) -> None:
        if self.restored:
            self.fileClicked.emit("")  # no file to pick: the chat's changes, with the undo
            return
        if not self.totals:
            return
        self.popup.adjustSize()
        size = self.popup.sizeHint()
        below = self.mapToGlobal(QPoint(self.width() - size.width(), 0))
        self.popup.move(below.x(), below.y() - size.height() - 4)  # above: the status line is at the bottom
        self.popup.show()
        self.popup.list.setFocus()

    def sizeHint(self) -> QSize:
        fm = self.fontMetrics()
        parts = self._parts()
        width = sum(fm.horizontalAdvance(t) for t, _ in parts) + GAP * max(0, len(parts) - 1) + 2 * PAD_X
        return QSize(width, fm.height() + 6)

    def enterEvent(self, event: QEnterEvent) -> None:
        self._hovered = True
        self.update()
        super().enterEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        self._hovered = False
        self.update()
        super().leaveEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        if not self.totals and not self.restored:
            return
        c = self._colors
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        if self._hovered or self.isDown() or self.hasFocus():
            path = QPainterPath()
            path.addRoundedRect(self.rect().adjusted(0, 1, 0, -1).toRectF(), 4, 4)
            p.fillPath(path, QColor(c.hover))
            if self.hasFocus():
                p.setPen(QColor(c.accent))
                p.drawPath(path)
        fm = self.fontMetrics()
        x = PAD_X
        for text, colour in self._parts():
            p.setPen(QColor(c.text if colour == c.muted and self._hovered else colour))
            width = fm.horizontalAdvance(text)
            p.drawText(x, 0, width + 1, self.height(), Qt.AlignmentFlag.AlignVCenter, text)
            x += width + GAP
        p.end()


class TotalsPopup(QFrame):
    """The per-file totals of the session, one row a file; Enter or a click picks one."""

    fileClicked = Signal(object)  # str: the path on disk (a QString would drop surrogate escapes)

    def __init__(self, colors: ThemeColors, root: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setObjectName("TotalsPopup")
        self._root = root
        self._paths: list[str] = []
        """The rows' paths, kept in Python: a ``QString`` would drop the surrogate escapes of a
        name that is not UTF-8, and the path picked must be the one on disk."""
        self.title = QLabel(self)
        self.title.setObjectName("TotalsTitle")
        self.list = QListWidget(self)
        self.list.setObjectName("TotalsList")
        self.list.setUniformItemSizes(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._delegate = FileRowDelegate(colors)
        self.list.setItemDelegate(self._delegate)
        self.list.itemClicked.connect(self._picked)
        self.list.itemActivated.connect(self._picked)
        column = QVBoxLayout(self)
        column.setContentsMargins(1, 1, 1, 1)
        column.setSpacing(0)
        column.addWidget(self.title)
        column.addWidget(self.list)
        self.set_colors(colors)

    def set_colors(self, colors: ThemeColors) -> None:
        c = colors
        self._delegate.colors = colors
        self.setStyleSheet(
            f"#TotalsPopup {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 6px; }}"
            f"#TotalsTitle {{ color: {c.muted}; padding: 8px 12px 4px 12px; }}"
            f"#TotalsList {{ background: {c.base}; border: none; outline: none; }}"
        )

    def set_root(self, root: str | None) -> None:
        self._root = root

    def set_totals(self, totals: Sequence[FileTotal]) -> None:
        self.list.clear()
        self._paths = [total.path for total in totals]
        self.title.setText("Files changed in this chat (click one to see its changes)")
        for total in totals:
            label = shown_path(total.path, self._root)
            row = path_row(total.kind, total.path, self._root, f"+{total.added}", f"\u2212{total.removed}")
            item = QListWidgetItem(label)
            item.setData(ROW_ROLE, row)
            times = "once" if total.changes == 1 else f"{total.changes} times"
            item.setToolTip(f"{shown_path(total.path)}\n{KIND_WORDS[total.kind]}, changed {times}")
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)

    def sizeHint(self) -> QSize:
        rows = min(POPUP_ROWS, max(1, self.list.count()))
        row_height = self.list.sizeHintForRow(0) if self.list.count() else 24
        return QSize(460, self.title.sizeHint().height() + rows * row_height + 8)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close()
            return
        super().keyPressEvent(event)

    def _picked(self, item: QListWidgetItem) -> None:
        row = self.list.row(item)
        self.close()
        if 0 <= row < len(self._paths):
            self.fileClicked.emit(self._paths[row])
