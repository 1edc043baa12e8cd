"""The "⤢ Open table" dialog: one Markdown table of a message, at full size, with both scroll bars.

A table wider than the chat column is drawn at its natural width and cut at the column's
edge (``wide_tables``); this dialog shows all of it in a resizable window, lets a person
select cells (Ctrl+C copies them as tab-separated text, as spreadsheets paste), and copies
the whole table as Markdown or CSV. It is not modal: several tables can stay open beside
the chat.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from threadline.core.messages import Message
from threadline.ui.chat.view.wide_tables import TableData, find_table

ALIGNMENTS = {
    "center": Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter,
    "right": Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
}
MAX_COLUMN_PX = 480
"""A column is at most this wide at first (a long cell wraps; the person can widen it)."""


class TableDialog(QDialog):
    """One table in a grid of its cells, with Copy as Markdown / Copy as CSV."""

    def __init__(self, table: TableData, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("TableDialog")
        self.setWindowTitle(f"Table — {table.column_count} columns, {len(table.rows)} rows")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setSizeGripEnabled(True)
        self.table = table
        width = table.column_count
        self.grid = QTableWidget(len(table.rows), width)
        self.grid.setObjectName("TableGrid")
        self.grid.setAccessibleName("Table")
        self.grid.setHorizontalHeaderLabels([*table.header, *[""] * (width - len(table.header))])
        self.grid.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.grid.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.grid.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.grid.setWordWrap(True)
        self.grid.setAlternatingRowColors(True)
        for r, row in enumerate(table.rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                if c < len(table.aligns) and table.aligns[c] in ALIGNMENTS:
                    item.setTextAlignment(ALIGNMENTS[table.aligns[c]])
                self.grid.setItem(r, c, item)
        self.grid.resizeColumnsToContents()
        for c in range(width):
            self.grid.setColumnWidth(c, min(self.grid.columnWidth(c), MAX_COLUMN_PX))
        self.grid.resizeRowsToContents()
        self.grid.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.grid.installEventFilter(self)

        self.status = QLabel("")
        self.status.setObjectName("TableCopied")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_markdown = QPushButton("Copy as Markdown")
        self.copy_csv = QPushButton("Copy as CSV")
        buttons.addButton(self.copy_markdown, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.copy_csv, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.close)
        self.copy_markdown.clicked.connect(lambda: self._copy(table.to_markdown(), "Copied as Markdown."))
        self.copy_csv.clicked.connect(lambda: self._copy(table.to_csv(), "Copied as CSV."))

        layout = QVBoxLayout(self)
        layout.addWidget(self.grid, 1)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        self._size_to_table()

    def _size_to_table(self) -> None:
        """As large as the table, up to most of the screen; the scroll bars do the rest."""
        grid = self.grid
        want_w = grid.verticalHeader().width() + sum(grid.columnWidth(c) for c in range(grid.columnCount()))
        want_h = grid.horizontalHeader().height() + sum(grid.rowHeight(r) for r in range(grid.rowCount()))
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        max_w = int(screen.width() * 0.85) if screen is not None else 1200
        max_h = int(screen.height() * 0.75) if screen is not None else 800
        self.resize(max(420, min(want_w + 60, max_w)), max(240, min(want_h + 110, max_h)))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        """Ctrl+C in the grid copies every selected cell (the view alone copies one)."""
        if (
            obj is self.grid
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.matches(QKeySequence.StandardKey.Copy)
        ):
            self.copy_selection()
            return True
        return super().eventFilter(obj, event)

    def _copy(self, text: str, said: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.status.setText(said)

    def copy_selection(self) -> None:
        """The selected cells as tab-separated rows (what spreadsheets paste)."""
        ranges = self.grid.selectedRanges()
        if not ranges:
            return
        chosen = ranges[0]
        lines = []
        for r in range(chosen.topRow(), chosen.bottomRow() + 1):
            cells = []
            for c in range(chosen.leftColumn(), chosen.rightColumn() + 1):
                item = self.grid.item(r, c)
                cells.append(item.text() if item is not None else "")
            lines.append("\t".join(cells))
        self._copy("\n".join(lines), "Copied the selected cells.")


def open_table(parent: QWidget, message: Message | None, href: str) -> TableDialog | None:
    """Open the table an ``open-table:<key>`` link names, if the message still has it."""
    table = find_table(message.text, href) if message is not None else None
    if table is None:
        return None
    dialog = TableDialog(table, parent)
    dialog.show()
    dialog.raise_()
    return dialog
