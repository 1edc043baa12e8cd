"""The right side of the changes dialog: the selected file's name, and its diff or why there is none.

The diff arrives later than the click (the engine reads two snapshots and diffs them), so the
pane shows "Loading the diff…" until :meth:`DiffPane.show_diff` brings it. A binary file, a
content that was not kept or a rename without a content change has no lines to show: the
pane says so in place of the diff (the ``FileDiff``'s note), never an empty box.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QStackedWidget, QVBoxLayout, QWidget

from threadline.core.file_changes import ChangeKind, FileChange, FileDiff
from threadline.core.sizes import readable_size
from threadline.ui.chat.changes.change_colours import KIND_WORDS, change_colours
from threadline.ui.chat.changes.diff_view import DiffView
from threadline.ui.chat.changes.file_list import counts_text
from threadline.ui.chat.changes.shown_paths import printable, shown_path
from threadline.ui.common.theme import ThemeColors

LOADING = "Loading the diff\u2026"
BINARY = "Binary file changed"
NO_LINES = "No lines changed"


def sizes_of(change: FileChange) -> str:
    """The file's size before and after ("12 KB → 14 KB"), for a change shown without a diff."""
    before, after = change.before, change.after
    if before.exists and after.exists and not (before.unknown or after.unknown):
        return f"{readable_size(before.size)} → {readable_size(after.size)}"
    if after.exists and not after.unknown:
        return readable_size(after.size)
    if before.exists and not before.unknown:
        return f"was {readable_size(before.size)}"
    return ""


def note_for(change: FileChange, diff: FileDiff) -> str:
    """What to say in place of a diff that has no text (empty when there is text to show)."""
    if diff.text:
        return ""
    if diff.note:
        return printable(diff.note)
    if change.binary:
        return BINARY
    if change.kind is ChangeKind.RENAMED:
        return f"Renamed from {shown_path(change.renamed_from)}, content unchanged"
    return NO_LINES


class DiffPane(QWidget):
    """The header (path, kind, counts) over a stack: loading, a note, or the diff."""

    def __init__(self, colors: ThemeColors, root: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DiffPane")
        self._colors = colors
        self._root = root
        self.change: FileChange | None = None
        header = QFrame(self)
        header.setObjectName("DiffPaneHeader")
        self.title = QLabel(header)
        self.title.setObjectName("DiffPaneTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bold = QFont(self.title.font())
        bold.setWeight(QFont.Weight.DemiBold)
        self.title.setFont(bold)
        self.kind = QLabel(header)
        self.kind.setObjectName("DiffPaneKind")
        self.counts = QLabel(header)
        self.counts.setObjectName("DiffPaneCounts")
        self.counts.setTextFormat(Qt.TextFormat.RichText)
        row = QHBoxLayout(header)
        row.setContentsMargins(12, 8, 12, 8)
        row.setSpacing(10)
        row.addWidget(self.title, 1)
        row.addWidget(self.kind)
        row.addWidget(self.counts)
        self.stack = QStackedWidget(self)
        self.message = QLabel(self.stack)
        self.message.setObjectName("DiffPaneMessage")
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.view = DiffView(colors, self.stack)
        self.stack.addWidget(self.message)
        self.stack.addWidget(self.view)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(header)
        column.addWidget(self.stack, 1)
        self._apply_colors()
        self.show_nothing()

    @property
    def note(self) -> str:
        """The sentence shown in place of a diff ("" while a diff is shown)."""
        return self.message.text() if self.stack.currentWidget() is self.message else ""

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        self.view.set_colors(colors)
        self._apply_colors()
        if self.change is not None:
            self._set_header(self.change)

    def show_nothing(self) -> None:
        self.change = None
        self.title.setText("")
        self.kind.setText("")
        self.counts.setText("")
        self._say("Pick a file to see its changes.")

    def show_loading(self, change: FileChange) -> None:
        self.change = change
        self._set_header(change)
        self._say(LOADING)

    def show_diff(self, change: FileChange, diff: FileDiff) -> None:
        self.change = change
        self._set_header(change)
        note = note_for(change, diff)
        if note:
            sizes = sizes_of(change)
            self._say(f"{note}\n{sizes}" if sizes else note)
            return
        self.view.show_diff(diff.text, change.path)
        self.stack.setCurrentWidget(self.view)

    def _say(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    def _set_header(self, change: FileChange) -> None:
        c = self._colors
        colours = change_colours(c, c.surface)
        if change.kind is ChangeKind.RENAMED and change.renamed_from:
            title = (
                f"{shown_path(change.renamed_from, self._root)} \u2192 {shown_path(change.path, self._root)}"
            )
        else:
            title = shown_path(change.path, self._root)
        self.title.setText(title)
        self.title.setToolTip(shown_path(change.path))
        self.kind.setText(KIND_WORDS[change.kind])
        self.kind.setStyleSheet(f"color: {colours.kinds[change.kind]};")
        added, removed = counts_text(change)
        if removed:
            self.counts.setText(
                f'<span style="color:{colours.added}">{added}</span>&nbsp;'
                f'<span style="color:{colours.removed}">{removed}</span>'
            )
        else:
            self.counts.setText(f'<span style="color:{c.muted}">binary</span>')

    def _apply_colors(self) -> None:
        c = self._colors
        self.setStyleSheet(
            f"#DiffPaneHeader {{ background: {c.surface}; border-bottom: 1px solid {c.border}; }}"
            f"#DiffPaneTitle {{ color: {c.text}; }}"
            f"#DiffPaneMessage {{ background: {c.code_bg}; color: {c.muted}; padding: 24px; }}"
        )
