"""The sidebar's projects: "All chats" and each project, with its colour and how many chats it holds.

Choosing a row scopes the chat list and the search below it to that project (or to
every chat). Chats dragged from the list onto a row move into that project ("All
chats" takes them out of any). The section stays short: it grows with its rows up to
``MAX_VISIBLE_ROWS`` and scrolls after that, so the chat list keeps the room.
"""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QFont,
    QFontMetrics,
    QKeySequence,
    QPainter,
    QPainterPath,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from threadline.core.project import Project
from threadline.ui.common.theme import LIGHT, ThemeColors
from threadline.ui.sessions.session_list_model import SESSION_IDS_MIME

MAX_VISIBLE_ROWS = 5
ProjectIdRole = Qt.ItemDataRole.UserRole + 1
ColourRole = Qt.ItemDataRole.UserRole + 2
CountRole = Qt.ItemDataRole.UserRole + 3
AnyIndex = QModelIndex | QPersistentModelIndex


def session_ids_from(mime: QMimeData) -> list[str]:
    """The chat ids a drag carries (``[]`` for anything else)."""
    if not mime.hasFormat(SESSION_IDS_MIME):
        return []
    raw = bytes(mime.data(SESSION_IDS_MIME).data()).decode("utf-8", "replace")
    return [line for line in raw.splitlines() if line]


class _ProjectDelegate(QStyledItemDelegate):
    def __init__(self, owner: ProjectList) -> None:
        super().__init__(owner)
        self.owner = owner

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:
        return QSize(100, option.fontMetrics.height() + 12)

    def paint(self, p: QPainter, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        c = self.owner.colors
        box = option.rect.adjusted(6, 1, -6, -1)
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        dropping = index.row() == self.owner.drop_row
        if selected or hovered or dropping:
            path = QPainterPath()
            path.addRoundedRect(box, 6, 6)
            p.fillPath(path, QColor(c.selection if selected or dropping else c.hover))
            if dropping:
                p.setPen(QColor(c.accent))
                p.drawPath(path)
        colour = index.data(ColourRole)
        x = box.left() + 10
        cy = box.center().y()
        if colour:
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(str(colour)))
            p.drawEllipse(QRect(x, cy - 4, 9, 9))
        else:  # "All chats": a hollow ring
            p.setPen(QColor(c.muted))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawEllipse(QRect(x, cy - 4, 9, 9))
        x += 18
        count = index.data(CountRole)
        count_text = str(count) if isinstance(count, int) else ""
        small = QFont(option.font)
        small.setPointSizeF(small.pointSizeF() * 0.9)
        count_w = QFontMetrics(small).horizontalAdvance(count_text) + 4 if count_text else 0
        font = QFont(option.font)
        font.setWeight(QFont.Weight.DemiBold if selected else QFont.Weight.Normal)
        p.setFont(font)
        p.setPen(QColor(c.text))
        name_w = box.right() - 10 - count_w - x
        p.drawText(
            QRect(x, box.top(), name_w, box.height()),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            QFontMetrics(font).elidedText(str(index.data()), Qt.TextElideMode.ElideRight, name_w),
        )
        if count_text:
            p.setFont(small)
            p.setPen(QColor(c.muted))
            p.drawText(
                QRect(box.right() - 10 - count_w, box.top(), count_w, box.height()),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                count_text,
            )
        p.restore()


class _ProjectRows(QListWidget):
    """The rows, as a drop target for chats dragged from the sidebar's list."""

    dropped = Signal(object, list)  # project id or None, chat ids

    def __init__(self, owner: ProjectList) -> None:
        super().__init__(owner)
        self.owner = owner
        self.setAcceptDrops(True)
        self.setDropIndicatorShown(False)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DropOnly)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if session_ids_from(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        item = self.itemAt(event.position().toPoint())
        if item is None or not session_ids_from(event.mimeData()):
            self._mark_drop(-1)
            event.ignore()
            return
        self._mark_drop(self.row(item))
        event.acceptProposedAction()

    def dragLeaveEvent(self, event: object) -> None:
        self._mark_drop(-1)

    def dropEvent(self, event: QDropEvent) -> None:
        item = self.itemAt(event.position().toPoint())
        ids = session_ids_from(event.mimeData())
        self._mark_drop(-1)
        if item is None or not ids:
            event.ignore()
            return
        event.acceptProposedAction()
        self.dropped.emit(item.data(ProjectIdRole), ids)

    def _mark_drop(self, row: int) -> None:
        if self.owner.drop_row != row:
            self.owner.drop_row = row
            self.viewport().update()


class ProjectList(QWidget):
    """The projects section of the sidebar (see the module doc)."""

    projectChosen = Signal(object)
    """A project id, or ``None`` for all chats."""
    newProjectRequested = Signal()
    editRequested = Signal(str)
    deleteRequested = Signal(str)
    chatsDropped = Signal(object, list)
    """Chats dropped on a row: the project id (``None``: out of any project) and their ids."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ProjectList")
        self.colors: ThemeColors = LIGHT
        self.drop_row = -1
        self.projects: list[Project] = []
        self.counts: dict[str, int] = {}
        self.current: str | None = None
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(2)
        head = QHBoxLayout()
        head.setContentsMargins(14, 0, 4, 0)
        self.title = QLabel("Projects")
        self.title.setObjectName("SidebarSectionTitle")
        head.addWidget(self.title, 1)
        self.add_button = QToolButton()
        self.add_button.setObjectName("FlatButton")
        self.add_button.setText("+")
        self.add_button.setToolTip("New project")
        self.add_button.setAccessibleName("New project")
        self.add_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.add_button.clicked.connect(self.newProjectRequested)
        head.addWidget(self.add_button)
        v.addLayout(head)
        self.rows = _ProjectRows(self)
        self.rows.setObjectName("ProjectRows")
        self.rows.setAccessibleName("Projects")
        self.rows.setItemDelegate(_ProjectDelegate(self))
        self.rows.setMouseTracking(True)
        self.rows.setFrameShape(QListWidget.Shape.NoFrame)
        self.rows.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.rows.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.rows.customContextMenuRequested.connect(self._context_menu)
        self.rows.currentItemChanged.connect(self._current_changed)
        self.rows.dropped.connect(self.chatsDropped)
        v.addWidget(self.rows)
        self._rebuild()

    # -- contents -----------------------------------------------------------------------

    def set_projects(self, projects: list[Project], counts: dict[str, int] | None = None) -> None:
        """Show ``projects``; the chosen one stays chosen, or "All chats" when it is gone."""
        self.projects = list(projects)
        if counts is not None:
            self.counts = dict(counts)
        if self.current is not None and all(p.id != self.current for p in self.projects):
            self.current = None
            self.projectChosen.emit(None)
        self._rebuild()

    def set_counts(self, counts: dict[str, int]) -> None:
        self.counts = dict(counts)
        for i in range(self.rows.count()):
            item = self.rows.item(i)
            pid = item.data(ProjectIdRole)
            if pid is not None:
                item.setData(CountRole, self.counts.get(pid, 0))
                item.setData(Qt.ItemDataRole.AccessibleTextRole, self._accessible(item.text(), pid))

    def project(self, project_id: str | None) -> Project | None:
        return next((p for p in self.projects if p.id == project_id), None)

    def colour_of(self, project_id: str | None) -> str | None:
        project = self.project(project_id)
        return project.colour if project is not None else None

    def choose(self, project_id: str | None) -> None:
        """Select a project's row (``None``: all chats), as a click would."""
        for i in range(self.rows.count()):
            if self.rows.item(i).data(ProjectIdRole) == project_id:
                self.rows.setCurrentRow(i)
                return

    def set_colors(self, colors: ThemeColors) -> None:
        self.colors = colors
        if self.isVisible():  # hidden (at start): painted in these colours when shown
            self.rows.viewport().update()  # the first viewport() is costly (docs/performance.md)

    # -- internals ---------------------------------------------------------------------------

    def _rebuild(self) -> None:
        blocked = self.rows.blockSignals(True)
        try:
            self.rows.clear()
            if self.projects:
                self._add_row("All chats", None, None)
                for project in self.projects:
                    self._add_row(project.name, project.id, project.colour)
            current = next(
                (
                    i
                    for i in range(self.rows.count())
                    if self.rows.item(i).data(ProjectIdRole) == self.current
                ),
                0,
            )
            if self.rows.count():
                self.rows.setCurrentRow(current)
        finally:
            self.rows.blockSignals(blocked)
        shown = min(self.rows.count(), MAX_VISIBLE_ROWS)
        row_height = self.rows.fontMetrics().height() + 12
        self.rows.setFixedHeight(shown * row_height + (row_height // 2 if self.rows.count() > shown else 0))
        self.rows.setVisible(bool(self.projects))

    def _add_row(self, name: str, project_id: str | None, colour: str | None) -> None:
        item = QListWidgetItem(name)
        item.setData(ProjectIdRole, project_id)
        item.setData(ColourRole, colour)
        item.setData(CountRole, self.counts.get(project_id, 0) if project_id else None)
        item.setData(Qt.ItemDataRole.AccessibleTextRole, self._accessible(name, project_id))
        item.setToolTip(self._tooltip(project_id))
        self.rows.addItem(item)

    def _accessible(self, name: str, project_id: str | None) -> str:
        if project_id is None:
            return "All chats"
        count = self.counts.get(project_id, 0)
        return f"Project {name}, {count} chat{'s' if count != 1 else ''}"

    def _tooltip(self, project_id: str | None) -> str:
        project = self.project(project_id)
        if project is None:
            return "Every chat, in any project or none"
        if project.instructions:
            first = project.instructions.splitlines()[0]
            return f"{project.name} — instructions: {first[:80]}"
        return f"{project.name} — drop chats here to move them into this project"

    def _current_changed(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        project_id = item.data(ProjectIdRole) if item is not None else None
        if project_id != self.current:
            self.current = project_id
            self.projectChosen.emit(project_id)

    def _context_menu(self, pos: QPoint) -> None:
        item = self.rows.itemAt(pos)
        project_id = item.data(ProjectIdRole) if item is not None else None
        menu = QMenu(self)
        if project_id is not None:
            menu.addAction("Edit project…", lambda: self.editRequested.emit(project_id))
            delete = menu.addAction("Delete project…", lambda: self.deleteRequested.emit(project_id))
            delete.setShortcut(QKeySequence(Qt.Key.Key_Delete))
            menu.addSeparator()
        menu.addAction("New project…", self.newProjectRequested.emit)
        menu.exec(self.rows.viewport().mapToGlobal(pos))
