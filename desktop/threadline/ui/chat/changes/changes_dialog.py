"""A turn's changes on disk: the changed files at the left, the selected file's diff at the right.

The dialog is given the changes as plain values and asks for each diff through
``diffRequested(FileChange)``: whoever opened it reads the snapshots (off the UI thread)
and answers with :meth:`TurnChangesDialog.show_diff`. An answer for a file that is no
longer selected is kept for when it is picked again, never shown over another file's
name. "Undo these changes…" only says the user asked (``undoRequested``); the restore
preview decides what happens (``restore_dialog.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from threadline.core.file_changes import ChangeSet, FileChange, FileDiff, TurnChanges, change_summary
from threadline.ui.chat.changes.change_colours import change_colours
from threadline.ui.chat.changes.diff_pane import DiffPane
from threadline.ui.chat.changes.file_list import ChangedFileList
from threadline.ui.chat.changes.shown_paths import printable
from threadline.ui.chat.changes.turn_files import changes_of
from threadline.ui.common.theme import ThemeColors

Changes = TurnChanges | ChangeSet | Sequence[FileChange]


def dialog_title(source: Changes) -> str:
    if isinstance(source, TurnChanges):
        return f"Changes in turn {source.number}"
    return "File changes"


def skipped_of(source: Changes) -> list[str]:
    """What the scans did not look at, named so nothing is left out in silence."""
    if isinstance(source, TurnChanges):
        return [s for change_set in source.change_sets for s in change_set.skipped]
    if isinstance(source, ChangeSet):
        return list(source.skipped)
    return []


class TurnChangesDialog(QDialog):
    """The file list and the diff of the selected file, with "Undo these changes…" and Close."""

    diffRequested = Signal(object)  # FileChange
    undoRequested = Signal()

    def __init__(
        self,
        source: Changes,
        colors: ThemeColors,
        *,
        root: str | None = None,
        can_undo: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("TurnChangesDialog")
        self.setWindowTitle(dialog_title(source))
        self.resize(1000, 640)
        self._colors = colors
        self._diffs: dict[str, FileDiff] = {}
        self.changes = changes_of(source)
        self.summary = QLabel(self)
        self.summary.setObjectName("ChangesSummary")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.files = ChangedFileList(colors, root, self)
        self.files.set_changes(self.changes)
        self.skipped = QLabel(self)
        self.skipped.setObjectName("ChangesSkipped")
        self.skipped.setWordWrap(True)
        skipped = skipped_of(source)
        self.skipped.setText("Not checked: " + "; ".join(printable(s) for s in skipped) if skipped else "")
        self.skipped.setVisible(bool(skipped))
        left = QFrame(self)
        left.setObjectName("ChangesLeft")
        left_column = QVBoxLayout(left)
        left_column.setContentsMargins(0, 0, 0, 0)
        left_column.setSpacing(0)
        left_column.addWidget(self.summary)
        left_column.addWidget(self.files, 1)
        left_column.addWidget(self.skipped)
        self.pane = DiffPane(colors, root, self)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("ChangesSplitter")
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.pane)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([300, 700])
        self.splitter.setChildrenCollapsible(False)
        self.undo_button = QPushButton("Undo these changes\u2026", self)
        self.undo_button.setObjectName("SecondaryButton")
        self.undo_button.setToolTip("Shows which files would be put back before anything is touched.")
        self.undo_button.setVisible(can_undo)
        self.undo_button.clicked.connect(self.undoRequested)
        self.close_button = QPushButton("Close", self)
        self.close_button.setObjectName("PrimaryButton")
        self.close_button.setDefault(True)
        self.close_button.clicked.connect(self.accept)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(12, 10, 12, 12)
        buttons.addWidget(self.undo_button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        frame = QFrame(self)
        frame.setObjectName("ChangesFrame")
        inner = QVBoxLayout(frame)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addWidget(self.splitter)
        column = QVBoxLayout(self)
        column.setContentsMargins(12, 12, 12, 0)
        column.setSpacing(0)
        column.addWidget(frame, 1)
        column.addLayout(buttons)
        self.files.changeSelected.connect(self._selected)
        self.set_colors(colors)
        self.files.setFocus()

    @property
    def selected(self) -> FileChange | None:
        return self.pane.change

    def select(self, path: str) -> bool:
        """Select the file at ``path`` (as the status line's totals ask); False when it is not listed."""
        for row, change in enumerate(self.changes):
            if change.path == path:
                self.files.setCurrentRow(row)
                return True
        return False

    def show_diff(self, diff: FileDiff) -> None:
        """The diff ``diffRequested`` asked for; shown if its file is still the selected one."""
        self._diffs[diff.path] = diff
        change = self.pane.change
        if change is not None and change.path == diff.path:
            self.pane.show_diff(change, diff)

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        self.files.set_colors(colors)
        self.pane.set_colors(colors)
        c = colors
        added = sum(ch.added for ch in self.changes)
        removed = sum(ch.removed for ch in self.changes)
        colours = change_colours(c, c.surface)
        plus, minus, *rest = change_summary(added, removed, len(self.changes)).split(" ")
        self.summary.setText(
            f'<span style="color:{colours.added}; font-weight:600">{plus}</span>&nbsp;'
            f'<span style="color:{colours.removed}; font-weight:600">{minus}</span>&nbsp;'
            f'<span style="color:{c.muted}">{" ".join(rest)}</span>'
        )
        self.setStyleSheet(
            f"#ChangesFrame {{ border: 1px solid {c.border}; border-radius: 6px; background: {c.base}; }}"
            f"#ChangesLeft {{ background: {c.base}; border-top-left-radius: 6px; }}"
            f"#ChangesSummary {{ background: {c.surface}; border-bottom: 1px solid {c.border};"
            f" padding: 8px 12px; }}"
            f"#ChangesSkipped {{ color: {c.warning}; padding: 6px 12px; border-top: 1px solid {c.border}; }}"
            f"#ChangesSplitter::handle {{ background: {c.border}; width: 1px; }}"
        )

    def showEvent(self, event: QShowEvent) -> None:
        """Select the first file once shown: its ``diffRequested`` then reaches whoever connected."""
        super().showEvent(event)
        if self.changes and self.files.currentRow() < 0:
            self.files.setCurrentRow(0)

    def _selected(self, change: FileChange) -> None:
        known = self._diffs.get(change.path)
        if known is not None:
            self.pane.show_diff(change, known)
            return
        self.pane.show_loading(change)
        self.diffRequested.emit(change)
