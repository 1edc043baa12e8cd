"""How the sidebar's rows look and answer keys: a chat's row, a search hit's row, the list view.

The delegates paint from the row's data and ask their sidebar (``RowsHost``) only what the
row does not hold: the theme's colours, which chats are open in a tab, the projects'
colours and whether a project is chosen.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeyEvent, QPainter, QPainterPath
from PySide6.QtWidgets import QLineEdit, QListView, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from threadline.core.session import SessionInfo
from threadline.ui.common.theme import ThemeColors
from threadline.ui.sessions.project_scope import ProjectScope
from threadline.ui.sessions.search_results_model import ResultRole, SearchResult, centre_on_hit, split_snippet
from threadline.ui.sessions.session_list_model import HEADER, KindRole, SessionRole

AnyIndex = QModelIndex | QPersistentModelIndex


class RowsHost(Protocol):
    """What the row delegates need of their sidebar."""

    colors: ThemeColors
    project_scope: ProjectScope

    def is_open(self, session_id: str) -> bool: ...


class SessionDelegate(QStyledItemDelegate):
    def __init__(self, sidebar: RowsHost, parent: QObject) -> None:
        super().__init__(parent)
        self.sidebar = sidebar

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:
        """One height for every row, headers included: the view then lays out 100,000 rows
        without asking each one (``setUniformItemSizes``); a header's text sits at the
        bottom of its row, the space above it separating the groups."""
        return QSize(100, option.fontMetrics.height() * 2 + 16)

    def paint(self, p: QPainter, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        c = self.sidebar.colors
        r: QRect = option.rect
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        if index.data(KindRole) == HEADER:
            f = QFont(option.font)
            f.setPointSizeF(f.pointSizeF() * 0.85)
            f.setWeight(QFont.Weight.DemiBold)
            p.setFont(f)
            p.setPen(QColor(c.muted))
            p.drawText(
                r.adjusted(14, 6, -8, -4),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom,
                str(index.data()),
            )
            p.restore()
            return
        info: SessionInfo = index.data(SessionRole)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        box = r.adjusted(6, 1, -6, -1)
        if selected or hovered:
            path = QPainterPath()
            path.addRoundedRect(box, 6, 6)
            p.fillPath(path, QColor(c.selection if selected else c.hover))
        colour = self.sidebar.project_scope.view.colour_of(info.project_id)
        if colour is not None and self.sidebar.project_scope.project_id is None:
            mark = QPainterPath()  # which project the chat is in, when all chats are listed
            mark.addRoundedRect(QRect(box.left() + 2, box.top() + 8, 3, box.height() - 16), 1.5, 1.5)
            p.fillPath(mark, QColor(colour))
        fm = option.fontMetrics
        text_rect = box.adjusted(10, 6, -10, -6)
        title_font = QFont(option.font)
        title_font.setWeight(QFont.Weight.Medium)
        p.setFont(title_font)
        p.setPen(QColor(c.text))
        tf = QFontMetrics(title_font)
        title = info.display_title
        if self.sidebar.is_open(info.id):
            title_w = text_rect.width() - 12
        else:
            title_w = text_rect.width()
        p.drawText(
            QRect(text_rect.left(), text_rect.top(), title_w, fm.height()),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            tf.elidedText(title, Qt.TextElideMode.ElideRight, title_w),
        )
        if self.sidebar.is_open(info.id):
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(c.accent))
            cy = text_rect.top() + fm.height() / 2
            p.drawEllipse(QRect(text_rect.right() - 6, int(cy - 3), 6, 6))
        small = QFont(option.font)
        small.setPointSizeF(small.pointSizeF() * 0.9)
        p.setFont(small)
        p.setPen(QColor(c.muted))
        sf = QFontMetrics(small)
        preview = str(index.data(Qt.ItemDataRole.AccessibleDescriptionRole))
        p.drawText(
            QRect(text_rect.left(), text_rect.top() + fm.height() + 2, text_rect.width(), sf.height()),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            sf.elidedText(preview, Qt.TextElideMode.ElideRight, text_rect.width()),
        )
        p.restore()

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: AnyIndex) -> QWidget:
        editor = QLineEdit(parent)
        editor.setObjectName("RenameEditor")
        editor.setFrame(True)
        return editor

    def setEditorData(self, editor: QWidget, index: AnyIndex) -> None:
        assert isinstance(editor, QLineEdit)
        editor.setText(str(index.data(Qt.ItemDataRole.EditRole)))
        editor.selectAll()

    def updateEditorGeometry(self, editor: QWidget, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        r = option.rect.adjusted(10, 4, -10, 0)
        editor.setGeometry(QRect(r.left(), r.top(), r.width(), option.fontMetrics.height() + 8))


class HitDelegate(QStyledItemDelegate):
    def __init__(self, sidebar: RowsHost, parent: QObject) -> None:
        super().__init__(parent)
        self.sidebar = sidebar

    @staticmethod
    def shown_pieces(result: SearchResult, font: QFont, width: int) -> list[tuple[str, bool]]:
        """The snippet line's pieces as drawn in ``width``: cut so that the first hit shows."""
        snippet = result.snippet if result.message_id else ""
        if not snippet:
            return [("Title matches", False)]
        small = QFont(font)
        small.setPointSizeF(small.pointSizeF() * 0.9)
        bold = QFont(small)
        bold.setWeight(QFont.Weight.Bold)
        metrics = (QFontMetrics(small), QFontMetrics(bold))
        pieces = split_snippet(" ".join(snippet.split()))
        return centre_on_hit(pieces, width, lambda text, hit: metrics[hit].horizontalAdvance(text))

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:
        return QSize(100, option.fontMetrics.height() * 2 + 18)

    def paint(self, p: QPainter, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        c = self.sidebar.colors
        result = index.data(ResultRole)
        r = option.rect.adjusted(6, 1, -6, -1)
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        if option.state & (QStyle.StateFlag.State_Selected | QStyle.StateFlag.State_MouseOver):
            path = QPainterPath()
            path.addRoundedRect(r, 6, 6)
            selected = option.state & QStyle.StateFlag.State_Selected
            p.fillPath(path, QColor(c.selection if selected else c.hover))
        inner = r.adjusted(10, 6, -10, -6)
        fm = option.fontMetrics
        title_font = QFont(option.font)
        title_font.setWeight(QFont.Weight.Medium)
        p.setFont(title_font)
        p.setPen(QColor(c.text))
        p.drawText(
            QRect(inner.left(), inner.top(), inner.width(), fm.height()),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            QFontMetrics(title_font).elidedText(result.title, Qt.TextElideMode.ElideRight, inner.width()),
        )
        small = QFont(option.font)
        small.setPointSizeF(small.pointSizeF() * 0.9)
        sf = QFontMetrics(small)
        bold = QFont(small)
        bold.setWeight(QFont.Weight.Bold)
        bf = QFontMetrics(bold)
        x = inner.left()
        y = inner.top() + fm.height() + 2
        right = inner.right()
        for text, hit in self.shown_pieces(result, option.font, right - x):
            f, m = (bold, bf) if hit else (small, sf)
            avail = right - x
            if avail <= 8:
                break
            shown = m.elidedText(text, Qt.TextElideMode.ElideRight, avail)
            w = m.horizontalAdvance(shown)
            if hit:
                path = QPainterPath()
                path.addRoundedRect(QRect(x - 1, y, w + 2, sf.height()), 3, 3)
                p.fillPath(path, QColor(c.selection))
            p.setFont(f)
            p.setPen(QColor(c.text if hit else c.muted))
            p.drawText(QRect(x, y, w + 1, sf.height()), Qt.AlignmentFlag.AlignVCenter, shown)
            x += w
            if shown != text:
                break
        p.restore()


class SessionListView(QListView):
    """The list with the sidebar's keys: Enter opens, F2 renames, Delete deletes."""

    keyAction = Signal(str)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.state() != self.State.EditingState:
            self.keyAction.emit("open")
            return
        if event.key() == Qt.Key.Key_Delete and self.state() != self.State.EditingState:
            self.keyAction.emit("delete")
            return
        super().keyPressEvent(event)
