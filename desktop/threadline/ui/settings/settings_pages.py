"""The settings dialog's pages, chosen from a list down its left side.

Settings has grown to more pages than a row of tabs can show in the dialog's width (a tab row
scrolled with arrows hides half of them, and a person cannot see what there is to set). A
list at the left shows every page at once, as the system settings of the desktops do. It
stays a ``QTabWidget`` underneath with its tab row hidden, so pages are added, named and
chosen as before (``addTab``, ``setCurrentWidget``, ``tabText``), also by the window adding
its own (Quick ask).
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QAbstractItemView, QListWidget, QTabWidget, QWidget

LIST_WIDTH = 168


class SettingsPages(QTabWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tabBar().hide()
        self.list = QListWidget(parent)
        self.list.setObjectName("SettingsPageList")
        self.list.setAccessibleName("Settings pages")
        self.list.setFixedWidth(LIST_WIDTH)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setUniformItemSizes(True)
        self.list.setIconSize(QSize(0, 0))
        self.list.currentRowChanged.connect(self._row_chosen)
        self.currentChanged.connect(self._page_shown)
        # A tab widget hands its focus to its tab row; the row is hidden, so the list takes it
        # (the dialog opens with the keyboard on the pages, Up/Down choosing one).
        self.setFocusProxy(self.list)

    def tabInserted(self, index: int) -> None:
        super().tabInserted(index)
        self.list.insertItem(index, self.tabText(index).replace("&&", "&"))
        self._page_shown(self.currentIndex())

    def tabRemoved(self, index: int) -> None:
        super().tabRemoved(index)
        self.list.takeItem(index)
        self._page_shown(self.currentIndex())

    def _row_chosen(self, row: int) -> None:
        if 0 <= row < self.count() and row != self.currentIndex():
            self.setCurrentIndex(row)

    def _page_shown(self, index: int) -> None:
        if self.list.currentRow() != index:
            self.list.blockSignals(True)
            self.list.setCurrentRow(index)
            self.list.blockSignals(False)
