"""The status bar's "5 files changed +40 −12", following the window's current tab.

The window has one status bar and many tabs: this holds the one
:class:`SessionTotalsButton` (a permanent widget at the bar's right) and shows the totals
of whichever tab is current, following tab switches and each tab's new change sets. A
file picked in its list opens that tab's changes at the file (docs/file-changes-ui.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import shiboken6
from PySide6.QtCore import QObject, SignalInstance
from PySide6.QtWidgets import QStatusBar

from threadline.core.file_changes import ChangeSet, ChangeSource, FileTotal
from threadline.ui.chat.changes.session_totals import SessionTotalsButton
from threadline.ui.common.theme import ThemeColors

if TYPE_CHECKING:  # the dialog (and its diff highlighting) is loaded when a chat opens
    from threadline.ui.chat.changes.changes_dialog import TurnChangesDialog


class TabChanges(Protocol):
    """A tab's file changes (``FileChangesWiring``)."""

    @property
    def totalsChanged(self) -> SignalInstance: ...
    @property
    def totals(self) -> list[FileTotal]: ...
    @property
    def root(self) -> str | None: ...
    @property
    def change_sets(self) -> list[ChangeSet]: ...
    def open_session_file(self, path: str) -> TurnChangesDialog | None: ...


class TabWithChanges(Protocol):
    @property
    def file_changes(self) -> TabChanges: ...


class StatusTotals(QObject):
    """The status bar's session totals for the current tab."""

    def __init__(self, bar: QStatusBar, colors: ThemeColors) -> None:
        super().__init__(bar)
        self.button = SessionTotalsButton(colors, parent=bar)
        bar.addPermanentWidget(self.button)
        self.button.fileClicked.connect(self._file_clicked)
        self._shown: TabChanges | None = None

    def follow(self, tab: TabWithChanges | None) -> None:
        """The current tab changed (``None``: no tab is open)."""
        shown = self._shown
        if isinstance(shown, QObject) and shiboken6.isValid(shown):  # a closed tab's may be gone
            shown.totalsChanged.disconnect(self._totals)
        self._shown = tab.file_changes if tab is not None else None
        if self._shown is None:
            self._totals([])
            return
        self._shown.totalsChanged.connect(self._totals)
        self._totals(self._shown.totals)

    def set_colors(self, colors: ThemeColors) -> None:
        self.button.set_colors(colors)

    def _totals(self, totals: Sequence[FileTotal]) -> None:
        self.button.popup.hide()
        self.button.set_root(self._shown.root if self._shown is not None else None)
        change_sets = self._shown.change_sets if self._shown is not None else []
        restored = bool(change_sets) and change_sets[-1].source is ChangeSource.RESTORE
        self.button.set_totals(totals, restored=restored)

    def _file_clicked(self, path: str) -> None:
        self.button.popup.hide()
        if self._shown is not None:
            self._shown.open_session_file(path)
