"""The list of changed files: a kind badge, the file's name and folder, and its +/− counts.

Drawn like the changes list of GitHub Desktop or VS Code's Source Control: the name reads
first and the folder after it, quieter; a rename shows "old → new"; the line counts stand
at the right in green and red. Each row carries its ``FileChange``; the delegate paints from
the row's data, so the list stays one cheap ``QListWidget``.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPainterPath
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from threadline.core.file_changes import ChangeKind, FileChange
from threadline.ui.chat.changes.change_colours import KIND_LETTERS, KIND_WORDS, change_colours
from threadline.ui.chat.changes.shown_paths import shown_path, split_name
from threadline.ui.common.theme import ThemeColors, mix

CHANGE_ROLE = Qt.ItemDataRole.UserRole + 1
"""The row's ``FileChange``."""
ROW_ROLE = Qt.ItemDataRole.UserRole + 2
"""The row's :class:`FileRow`: what the delegate paints."""
PAD = 8
BADGE = 18


@dataclass(frozen=True, slots=True)
class FileRow:
    """One painted row: the kind's badge, the words, and the counts ("bin" for a binary file).

    A dataclass, not a tuple: Qt would turn a tuple stored in an item into a list."""

    kind: ChangeKind
    name: str
    """Drawn first and stronger: the file's name."""
    detail: str
    """Drawn after it, quieter: its folder, or where a renamed file came from ("← util.py")."""
    added: str
    removed: str


def path_row(kind: ChangeKind, path: str, root: str | None, added: str, removed: str) -> FileRow:
    folder, name = split_name(shown_path(path, root))
    return FileRow(kind, name, folder.rstrip("/\\"), added, removed)


def change_row(change: FileChange, root: str | None) -> FileRow:
    """A change's row; a rename names its old path (only the old name when the folder is the same)."""
    added, removed = counts_text(change)
    row = path_row(change.kind, change.path, root, added, removed)
    if change.kind is ChangeKind.RENAMED and change.renamed_from:
        old_folder, old_name = split_name(shown_path(change.renamed_from, root))
        same = old_folder.rstrip("/\\") == row.detail
        return FileRow(
            change.kind, row.name, "\u2190 " + (old_name if same else old_folder + old_name), added, removed
        )
    return row


def file_label(change: FileChange, root: str | None) -> str:
    """The row's words: the path inside ``root``, a rename as "old → new"."""
    shown = shown_path(change.path, root)
    if change.kind is ChangeKind.RENAMED and change.renamed_from:
        return f"{shown_path(change.renamed_from, root)} \u2192 {shown}"
    return shown


def counts_text(change: FileChange) -> tuple[str, str]:
    """("+3", "−1") for a text change; ("bin", "") for a binary one (no lines to count)."""
    if change.binary:
        return "bin", ""
    if change.kind is ChangeKind.RENAMED and not (change.added or change.removed):
        return "", ""
    return f"+{change.added}", f"\u2212{change.removed}"


class ChangedFileList(QListWidget):
    """One row per changed file; ``changeSelected`` says which one the user picked."""

    changeSelected = Signal(object)  # FileChange

    def __init__(self, colors: ThemeColors, root: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChangedFileList")
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setUniformItemSizes(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._root = root
        self._delegate = FileRowDelegate(colors)
        self.setItemDelegate(self._delegate)
        self.currentItemChanged.connect(self._current_changed)
        self.set_colors(colors)

    def set_colors(self, colors: ThemeColors) -> None:
        self._delegate.colors = colors
        self.setStyleSheet(f"#ChangedFileList {{ background: {colors.base}; border: none; outline: none; }}")
        self.viewport().update()

    def set_changes(self, changes: list[FileChange]) -> None:
        self.clear()
        for change in changes:
            label = file_label(change, self._root)
            item = QListWidgetItem(label)
            item.setData(CHANGE_ROLE, change)
            added, removed = counts_text(change)
            item.setData(ROW_ROLE, change_row(change, self._root))
            item.setToolTip(
                f"{shown_path(change.path)}\n{KIND_WORDS[change.kind]}, {added} {removed}".rstrip()
            )
            item.setData(
                Qt.ItemDataRole.AccessibleTextRole, f"{label}, {KIND_WORDS[change.kind]}, {added} {removed}"
            )
            self.addItem(item)

    def change_at(self, row: int) -> FileChange:
        change = self.item(row).data(CHANGE_ROLE)
        assert isinstance(change, FileChange)
        return change

    def _current_changed(self, current: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        if current is not None:
            self.changeSelected.emit(current.data(CHANGE_ROLE))


class FileRowDelegate(QStyledItemDelegate):
    """Paints a :class:`FileRow` (``ROW_ROLE``): badge, name, quieter folder, counts at the right."""

    def __init__(self, colors: ThemeColors) -> None:
        super().__init__()
        self.colors = colors

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return QSize(200, QFontMetrics(option.font).height() + 14)

    def paint(
        self, p: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        change = index.data(ROW_ROLE)
        if not isinstance(change, FileRow):
            return
        c = self.colors
        rect: QRect = option.rect
        state = option.state
        selected = bool(state & QStyle.StateFlag.State_Selected)
        background = c.base
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        if selected:
            background = c.selection
            p.fillRect(rect, QColor(background))
        elif state & QStyle.StateFlag.State_MouseOver:
            background = c.hover
            p.fillRect(rect, QColor(background))
        colours = change_colours(c, background)
        font: QFont = option.font
        fm = QFontMetrics(font)
        # The kind badge: a letter in a rounded square of its colour.
        kind_colour = colours.kinds[change.kind]
        badge = QRect(rect.left() + PAD, rect.center().y() - BADGE // 2 + 1, BADGE, BADGE)
        path = QPainterPath()
        path.addRoundedRect(badge.adjusted(0, 0, -1, -1), 4, 4)
        p.fillPath(path, mix(kind_colour, background, 0.16))
        bold = QFont(font)
        bold.setWeight(QFont.Weight.Bold)
        bold.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        p.setFont(bold)
        p.setPen(QColor(kind_colour))
        p.drawText(badge, Qt.AlignmentFlag.AlignCenter, KIND_LETTERS[change.kind])
        # The counts at the right.
        p.setFont(font)
        added, removed = change.added, change.removed
        right = rect.right() - PAD
        for text, colour in ((removed, colours.removed), (added, colours.added if removed else c.muted)):
            if not text:
                continue
            width = fm.horizontalAdvance(text)
            p.setPen(QColor(colour))
            p.drawText(
                QRect(right - width, rect.top(), width, rect.height()), Qt.AlignmentFlag.AlignVCenter, text
            )
            right -= width + 6
        # The name, then its folder (quieter), elided in the middle when long.
        x = badge.right() + PAD
        room = max(0, right - x - PAD)
        name, folder = change.name, change.detail
        name_font = QFont(font)
        name_font.setWeight(QFont.Weight.DemiBold)
        name_fm = QFontMetrics(name_font)
        shown_name = name_fm.elidedText(name, Qt.TextElideMode.ElideMiddle, room)
        p.setFont(name_font)
        p.setPen(QColor(c.text))
        if change.kind is ChangeKind.DELETED:
            p.setPen(QColor(c.muted))
        p.drawText(QRect(x, rect.top(), room, rect.height()), Qt.AlignmentFlag.AlignVCenter, shown_name)
        used = name_fm.horizontalAdvance(shown_name) + 8
        if folder and used < room:
            p.setFont(font)
            p.setPen(QColor(c.muted))
            shown_folder = fm.elidedText(folder, Qt.TextElideMode.ElideLeft, room - used)
            p.drawText(
                QRect(x + used, rect.top(), room - used, rect.height()),
                Qt.AlignmentFlag.AlignVCenter,
                shown_folder,
            )
        p.restore()
