"""The sidebar: new chat, a filter box that searches titles and message text, the session list.

Actions on a session (context menu and keys): open (Enter), rename inline (F2),
pin, duplicate (fork), archive, delete (Delete). Each goes to the engine, which owns
the session's state: the row changes when the engine's session event arrives, in
this window and in any other. Delete and archive show an undo bar for a few
seconds; its Undo asks the engine to restore the session (``restore_session``, a
pending delete is the engine's, not the sidebar's) or to unarchive it, and the
window reopens the tab it closed. Choosing a search hit opens its session at that
message.

Archived sessions leave the list; "Archived" at the foot of the sidebar switches to
a list of them (loaded when first shown), where a session can be opened,
unarchived or deleted (with the same undo).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeyEvent, QKeySequence, QPainter, QPainterPath
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from threadline.core.session import SearchHit, SessionInfo
from threadline.ui.common.elided_label import ElidedLabel
from threadline.ui.common.tasks import describe, spawn
from threadline.ui.common.theme import LIGHT, ThemeColors
from threadline.ui.sessions.project_scope import ProjectScope
from threadline.ui.sessions.search_results_model import (
    ResultRole,
    SearchResult,
    SearchResultsModel,
    centre_on_hit,
    split_snippet,
)
from threadline.ui.sessions.session_list_model import (
    HEADER,
    KindRole,
    PageSource,
    SessionIdRole,
    SessionListModel,
    SessionRole,
)
from threadline.ui.sessions.session_selection import (
    SelectionCommands,
    build_selection_menu,
    selected_sessions,
)

if TYPE_CHECKING:  # the engine's modules load after the first paint
    from threadline.engine.api import EngineApi
    from threadline.engine.events import SessionEvent

log = logging.getLogger("threadline.ui.sessions.session_sidebar")

_Page = TypeVar("_Page", bound=QWidget)
"""A page of the sidebar's stack made on first use (``SessionSidebar._page``)."""

UNDO_SECONDS = 6
"""How long the undo bar stays; the engine keeps a deleted session restorable a little longer."""
SEARCH_DELAY_MS = 180
SEARCH_LIMIT = 50
"""Title matches and text hits each (the newest first)."""
AnyIndex = QModelIndex | QPersistentModelIndex


class _SessionDelegate(QStyledItemDelegate):
    def __init__(self, sidebar: SessionSidebar) -> None:
        super().__init__(sidebar)
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


class _HitDelegate(QStyledItemDelegate):
    def __init__(self, sidebar: SessionSidebar) -> None:
        super().__init__(sidebar)
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


class UndoBar(QFrame):
    undo = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("UndoBar")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 4, 4)
        self.label = ElidedLabel()  # a long title ends in "…" in a narrow sidebar, not mid-letter
        layout.addWidget(self.label, 1)
        self.button = QPushButton("Undo")
        self.button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.button.clicked.connect(self.undo)
        layout.addWidget(self.button)
        self.hide()


class _SessionList(QListView):
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


class SessionSidebar(QWidget):
    openRequested = Signal(str, object)  # session id, message id or None
    newRequested = Signal()
    archiveUndone = Signal(str)
    """Undo of an archive: the session is back in the list, the window reopens its tab."""
    errorMessage = Signal(str)
    searchFinished = Signal(str)
    exportRequested = Signal(list)
    """Export… on selected chats: their ids, in list order (the window opens the export dialog)."""
    """The filter's results for this query are shown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.engine: EngineApi | None = None
        self.colors: ThemeColors = LIGHT
        self._open_ids: set[str] = set()
        self._undo: tuple[str, tuple[str, ...]] | None = None  # ("delete" | "archive", session ids)
        self._unsubscribe: Any = None
        self._search_task: Any = None

        self.model = SessionListModel(self)
        self.model.renameRequested.connect(self._rename)
        self.model.fetchFailed.connect(self._page_failed)
        self.archived_model = SessionListModel(self, archived=True)
        self.archived_model.renameRequested.connect(self._rename)
        self.archived_model.fetchFailed.connect(self._page_failed)
        self._archived_loaded = False
        self.showing_archived = False
        self.results = SearchResultsModel(self)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 10, 8, 8)
        layout.setSpacing(8)
        top = QHBoxLayout()
        top.setSpacing(6)
        self.filter = QLineEdit()
        self.filter.setObjectName("SidebarFilter")
        self.filter.setAccessibleName("Search chats")
        self.filter.setPlaceholderText("Search chats  (Ctrl+K)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter_changed)
        self.filter.installEventFilter(self)
        top.addWidget(self.filter, 1)
        self.new_button = QPushButton("New")
        self.new_button.setObjectName("NewChatButton")
        self.new_button.setToolTip(f"New chat ({QKeySequence(QKeySequence.StandardKey.New).toString()})")
        self.new_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.new_button.clicked.connect(self.newRequested)
        top.addWidget(self.new_button)
        layout.addLayout(top)
        self.project_scope = ProjectScope(self)
        """Projects: the section under the filter, and choosing one scopes the list and search."""
        self.project_scope.scopeChanged.connect(self._scope_changed)
        self.project_scope.errorMessage.connect(self.errorMessage)
        layout.addWidget(self.project_scope.view)

        self.stack = QStackedWidget()
        self.list = self._session_list(self.model)
        self.stack.addWidget(self.list)
        self._built_pages: dict[str, QWidget] = {}
        """The stack's other pages (archived list, search hits, their empty notes), made on first use."""
        layout.addWidget(self.stack, 1)

        self.archive_toggle = QPushButton("Archived")
        self.archive_toggle.setObjectName("FlatButton")
        self.archive_toggle.setCheckable(True)
        self.archive_toggle.setCursor(Qt.CursorShape.PointingHandCursor)
        self.archive_toggle.setToolTip("Show the archived chats")
        self.archive_toggle.toggled.connect(self.show_archived)
        layout.addWidget(self.archive_toggle, 0, Qt.AlignmentFlag.AlignLeft)

        self.undo_bar = UndoBar()
        self.undo_bar.undo.connect(self.undo)
        layout.addWidget(self.undo_bar)
        self._undo_timer = QTimer(self)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.setInterval(UNDO_SECONDS * 1000)
        self._undo_timer.timeout.connect(self._undo_expired)

        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._run_search)

    # -- the stack's pages made on first use -------------------------------------------------------
    # The archived list, the search hits and their "nothing here" notes are hidden until the
    # archive is opened or a search is typed. Made at start they cost part of the first frame
    # (two list views, their delegates, the first wrap of their types by PySide6), so each is
    # made, and added to the stack, the first time it is asked for (docs/performance.md).

    def _page(self, name: str, make: Callable[[], _Page]) -> _Page:
        """The stack's page ``name``, made by ``make`` and added the first time it is asked for."""
        page = self._built_pages.get(name)
        if page is None:
            page = self._built_pages[name] = make()
            self.stack.addWidget(page)
        return cast("_Page", page)  # the one ``make`` of this name made it

    def _built_lists(self) -> list[QListView]:
        """The list views made so far (the chats' list always; the others once used)."""
        made = [self._built_pages.get("archived_list"), self._built_pages.get("hits")]
        return [self.list, *(view for view in made if isinstance(view, QListView))]

    @property
    def archived_list(self) -> _SessionList:
        return self._page("archived_list", self._make_archived_list)

    @property
    def archived_empty(self) -> QLabel:
        return self._page("archived_empty", lambda: _hint_label("No archived chats"))

    @property
    def hits(self) -> QListView:
        return self._page("hits", self._make_hits)

    @property
    def no_results(self) -> QLabel:
        return self._page("no_results", lambda: _hint_label("No matches"))

    def _make_archived_list(self) -> _SessionList:
        view = self._session_list(self.archived_model)
        view.setObjectName("ArchivedList")
        return view

    def _make_hits(self) -> QListView:
        view = QListView()
        view.setModel(self.results)
        view.setItemDelegate(_HitDelegate(self))
        view.setMouseTracking(True)
        view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        view.clicked.connect(self._hit_activated)
        view.activated.connect(self._hit_activated)
        return view

    def _session_list(self, model: SessionListModel) -> _SessionList:
        view = _SessionList()
        view.setAccessibleName("Chats")
        view.setModel(model)
        view.setItemDelegate(_SessionDelegate(self))
        view.setMouseTracking(True)
        view.setUniformItemSizes(True)
        view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        view.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)
        view.setDragEnabled(True)  # chats are dragged onto a project
        view.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(lambda pos, v=view: self._context_menu(v, pos))
        view.clicked.connect(self._activated)
        view.keyAction.connect(lambda action, v=view: self._key_action(v, action))
        return view

    # -- engine ------------------------------------------------------------------------------------

    def set_engine(self, engine: EngineApi) -> None:
        self.engine = engine
        self.project_scope.set_engine(engine)
        self._unsubscribe = engine.sessions.subscribe_sessions(self._session_event)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    async def load(self) -> None:
        """Show the first page of chats; the list fetches more as it is scrolled."""
        self.model.pageLoaded.connect(self._page_loaded, Qt.ConnectionType.UniqueConnection)
        await self.model.start(self._pages(archived=False))
        await self.project_scope.load()

    def _pages(self, *, archived: bool) -> PageSource:
        engine = self.engine
        assert engine is not None
        project_id = self.project_scope.project_id

        async def page(after: SessionInfo | None, limit: int) -> list[SessionInfo]:
            return await engine.sessions.list_sessions(
                archived=archived, limit=limit, after=after, project_id=project_id
            )

        return page

    def _scope_changed(self, project_id: str | None) -> None:
        """A project (or all chats) was chosen: list and search only its chats from now on."""
        self.model.project_id = project_id
        self.archived_model.project_id = project_id
        if self.engine is None:
            return
        spawn(self.model.start(self._pages(archived=False)), on_error=self._error)
        if self._archived_loaded:
            spawn(self.archived_model.start(self._pages(archived=True)), on_error=self._error)
        if self.filter.text().strip():
            self._run_search()

    def _page_loaded(self, _added: int) -> None:
        """After a page, fetch the next at once if the rows still do not fill the view
        (the view asks only when it is scrolled, and there is nothing to scroll yet)."""
        view = self.list
        if view.verticalScrollBar().maximum() == 0 and self.model.canFetchMore(QModelIndex()):
            self.model.fetchMore(QModelIndex())

    def _page_failed(self, message: str) -> None:
        self.errorMessage.emit(f"Could not load more chats: {message}")

    def _session_event(self, event: SessionEvent) -> None:
        from threadline.engine.events import ProjectsChanged, SessionRemoved, SessionRestored, SessionUpdated

        if isinstance(event, ProjectsChanged):
            self.project_scope.projects_changed(event.projects)
            self.list.viewport().update()  # the colour marks of chats in a project
            return
        self.project_scope.chats_changed()
        if isinstance(event, SessionUpdated | SessionRestored):
            self.model.upsert(event.session)
            if self._archived_loaded:
                self.archived_model.upsert(event.session)
            if isinstance(event, SessionRestored):
                self.select_session(event.session.id)
        elif isinstance(event, SessionRemoved):
            self.model.remove(event.session_id)
            self.archived_model.remove(event.session_id)
        else:
            return  # a fork: its row comes with its SessionUpdated
        if self.showing_archived and not self.filter.text():
            self.stack.setCurrentWidget(self._session_view())  # the list, or "No archived chats"

    # -- archived view ----------------------------------------------------------------------------

    def show_archived(self, show: bool) -> None:
        """Switch between the chats and the archived chats (loaded the first time)."""
        self.showing_archived = bool(show)
        if self.archive_toggle.isChecked() != self.showing_archived:
            self.archive_toggle.setChecked(self.showing_archived)  # re-enters through toggled
            return
        self.archive_toggle.setText("Back to Chats" if show else "Archived")
        self.archive_toggle.setToolTip("Show the chats" if show else "Show the archived chats")
        if self.filter.text():
            self.filter.clear()  # also shows the list
        else:
            self.stack.setCurrentWidget(self._session_view())
        if show and not self._archived_loaded and self.engine is not None:
            spawn(self.load_archived(), on_error=self._error)

    async def load_archived(self) -> None:
        assert self.engine is not None
        await self.archived_model.start(self._pages(archived=True))
        self._archived_loaded = True
        if self.showing_archived and not self.filter.text():
            self.stack.setCurrentWidget(self._session_view())

    def _session_view(self) -> QWidget:
        if not self.showing_archived:
            return self.list
        return (
            self.archived_list
            if self.archived_model.rowCount() or not self._archived_loaded
            else self.archived_empty
        )

    def set_colors(self, colors: ThemeColors) -> None:
        self.colors = colors
        self.project_scope.view.set_colors(colors)
        if not self.isVisible():
            return  # painted in the new colours when shown; the first viewport() is costly at start
        for view in self._built_lists():
            view.viewport().update()

    def set_open_sessions(self, ids: set[str]) -> None:
        self._open_ids = set(ids)
        for view in self._built_lists():
            if view is not self._built_pages.get("hits"):
                view.viewport().update()  # the open-chat dots

    def is_open(self, session_id: str) -> bool:
        return session_id in self._open_ids

    def select_session(self, session_id: str) -> None:
        """Make the chat the current and only selected row (the window calls this for the tab in view).

        Not ``setCurrentIndex`` on the view: in an extended-selection list that reads the
        modifiers held right now, so a tab switched with Ctrl+Tab or Ctrl+PgDn counted as a
        Ctrl+click and added each chat to the selection, which Delete then removed.
        """
        idx = self.model.index_of(session_id)
        if idx.isValid():
            flags = QItemSelectionModel.SelectionFlag
            self.list.selectionModel().setCurrentIndex(idx, flags.ClearAndSelect | flags.Rows)

    def focus_filter(self) -> None:
        self.filter.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter.selectAll()

    # -- opening ---------------------------------------------------------------------------------------

    def _activated(self, index: QModelIndex) -> None:
        held = QApplication.keyboardModifiers()
        if held & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier):
            return  # Ctrl/Shift+click selects several chats; it does not open one
        sid = index.data(SessionIdRole)
        if sid:
            self.openRequested.emit(sid, None)

    def _hit_activated(self, index: QModelIndex) -> None:
        result = index.data(ResultRole)
        if result is not None:
            self.openRequested.emit(result.session_id, result.message_id)

    def _key_action(self, view: QListView, action: str) -> None:
        index = view.currentIndex()
        sid = index.data(SessionIdRole) if index.isValid() else None
        if not sid:
            return
        if action == "open":
            self.openRequested.emit(sid, None)
        elif action == "delete":
            chosen = selected_sessions(view)
            if len(chosen) > 1:
                self.delete_many([info.id for info in chosen])
            else:
                self.delete(sid)

    # -- filter ------------------------------------------------------------------------------------------

    def _filter_changed(self, text: str) -> None:
        if not text.strip():
            self._search_timer.stop()
            self.results.clear()
            self.stack.setCurrentWidget(self._session_view())
            return
        self._search_timer.start()

    def _run_search(self) -> None:
        query = self.filter.text().strip()
        if not query or self.engine is None:
            return
        engine = self.engine
        archived = self.showing_archived
        project_id = self.project_scope.project_id

        async def find() -> tuple[list[SessionInfo], list[SearchHit]]:
            """Titles and message text, both from the store: every chat, not only the loaded rows
            (of the chosen project only, when one is chosen)."""
            titles = await engine.sessions.search_sessions(
                query, limit=SEARCH_LIMIT, archived=archived, project_id=project_id
            )
            hits = await engine.library.search(query, limit=SEARCH_LIMIT, project_id=project_id)
            return titles, hits

        def show(found: tuple[list[SessionInfo], list[SearchHit]]) -> None:
            if self.filter.text().strip() != query:
                return  # a newer query is on its way
            self.results.set_results(query, *found)
            self.stack.setCurrentWidget(self.hits if self.results.rowCount() else self.no_results)
            self.searchFinished.emit(query)

        def failed(err: BaseException) -> None:
            show(([], []))
            self.errorMessage.emit(f"Search failed: {describe(err)}")

        self._search_task = spawn(find(), on_done=show, on_error=failed)

    def eventFilter(self, obj: Any, event: QEvent) -> bool:
        if obj is self.filter and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.key() == Qt.Key.Key_Escape:
                self.filter.clear()
                return True
            if event.key() == Qt.Key.Key_Down:
                current = self.stack.currentWidget()
                view = current if isinstance(current, QListView) else self.list
                view.setFocus()
                if not view.currentIndex().isValid() and view.model().rowCount():
                    in_hits = view is self._built_pages.get("hits")
                    first = 1 if not in_hits and view.model().rowCount() > 1 else 0
                    view.setCurrentIndex(view.model().index(first, 0))
                return True
            enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            if enter and self.stack.currentWidget() is self._built_pages.get("hits"):
                if self.results.rowCount():
                    self._hit_activated(self.results.index(0, 0))
                return True
        return super().eventFilter(obj, event)

    # -- session actions -----------------------------------------------------------------------------------

    def _context_menu(self, view: QListView, pos: QPoint) -> None:
        index = view.indexAt(pos)
        info: SessionInfo | None = index.data(SessionRole) if index.isValid() else None
        if info is None:
            return
        chosen = selected_sessions(view)
        if len(chosen) > 1 and info.id in {c.id for c in chosen}:
            menu = build_selection_menu(self, chosen, self.selection_commands())
            if not info.archived:
                self.project_scope.move_menu(menu, [c.id for c in chosen], None)
        else:
            menu = self.build_menu(info)
        menu.exec(view.viewport().mapToGlobal(pos))

    def selected_ids(self) -> list[str]:
        """The chats selected in the list shown (main or archived), in list order."""
        view = self.archived_list if self.showing_archived else self.list
        return [info.id for info in selected_sessions(view)]

    def selection_commands(self) -> SelectionCommands:
        return SelectionCommands(
            export=lambda ids: self.exportRequested.emit(list(ids)),
            pin=self.pin_many,
            archive=self.archive_many,
            unarchive=self.unarchive_many,
            delete=self.delete_many,
        )

    def pin_many(self, session_ids: Sequence[str], pinned: bool) -> None:
        """Pin (or unpin) each chat not already so; the others are left untouched."""
        for sid in session_ids:
            info = self.model.session(sid)
            if info is not None and info.pinned != pinned:
                self.set_pinned(sid, pinned)

    def unarchive_many(self, session_ids: Sequence[str]) -> None:
        for sid in session_ids:
            self.unarchive(sid)

    def archive_many(self, session_ids: Sequence[str]) -> None:
        """Archive every chat given; one Undo brings them all back."""
        if self.engine is None or not session_ids:
            return
        for sid in session_ids:
            spawn(self.engine.sessions.archive_session(sid, True), on_error=self._error)
        self._offer_undo("archive", tuple(session_ids), f"Archived {len(session_ids)} chats")

    def delete_many(self, session_ids: Sequence[str]) -> None:
        """Delete every chat given; one Undo restores them all."""
        if self.engine is None or not session_ids:
            return
        for sid in session_ids:
            spawn(self.engine.sessions.delete_session(sid), on_error=self._error)
        self._offer_undo("delete", tuple(session_ids), f"Deleted {len(session_ids)} chats")

    def build_menu(self, info: SessionInfo) -> QMenu:
        menu = QMenu(self)
        if info.archived:
            menu.addAction("Open", lambda: self.openRequested.emit(info.id, None))
            menu.addAction("Unarchive", lambda: self.unarchive(info.id))
            menu.addSeparator()
            delete = menu.addAction("Delete", lambda: self.delete(info.id))
            delete.setShortcut(QKeySequence(Qt.Key.Key_Delete))
            return menu
        menu.addAction("Open", lambda: self.openRequested.emit(info.id, None))
        # The editor opens once the menu has closed: opened while it closes, it loses focus and shuts.
        rename = menu.addAction("Rename", lambda: QTimer.singleShot(0, lambda: self.rename_inline(info.id)))
        rename.setShortcut(QKeySequence(Qt.Key.Key_F2))
        menu.addAction("Unpin" if info.pinned else "Pin", lambda: self.set_pinned(info.id, not info.pinned))
        menu.addAction("Duplicate", lambda: self.fork(info.id))
        self.project_scope.move_menu(menu, [info.id], info.project_id)
        menu.addSeparator()
        menu.addAction("Archive", lambda: self.archive(info.id))
        menu.addAction("Delete", lambda: self.delete(info.id)).setShortcut(QKeySequence(Qt.Key.Key_Delete))
        return menu

    def rename_inline(self, session_id: str) -> None:
        idx = self.model.index_of(session_id)
        if idx.isValid():
            self.list.setCurrentIndex(idx)
            self.list.edit(idx)

    def _rename(self, session_id: str, title: str) -> None:
        if self.engine is not None:
            spawn(self.engine.sessions.rename_session(session_id, title), on_error=self._error)

    def set_pinned(self, session_id: str, pinned: bool) -> None:
        if self.engine is not None:
            spawn(self.engine.sessions.pin_session(session_id, pinned), on_error=self._error)

    def archive(self, session_id: str) -> None:
        """Archive through the engine (the window closes an open tab); Undo brings it back."""
        if self.engine is None:
            return
        info = self.model.session(session_id)
        spawn(self.engine.sessions.archive_session(session_id, True), on_error=self._error)
        self._offer_undo("archive", session_id, f"Archived “{_short(info.display_title if info else '')}”")

    def unarchive(self, session_id: str) -> None:
        if self.engine is not None:
            spawn(self.engine.sessions.archive_session(session_id, False), on_error=self._error)

    def fork(self, session_id: str) -> None:
        """Duplicate through the engine; the window opens the copy on ``SessionForked``."""
        if self.engine is not None:
            spawn(self.engine.sessions.fork_session(session_id), on_error=self._error)

    def delete(self, session_id: str) -> None:
        """Delete through the engine (the row and an open tab go at once); Undo restores it."""
        if self.engine is None:
            return
        info = self.model.session(session_id) or self.archived_model.session(session_id)
        if info is None:
            return
        spawn(self.engine.sessions.delete_session(session_id), on_error=self._error)
        self._offer_undo("delete", session_id, f"Deleted “{_short(info.display_title)}”")

    def _offer_undo(self, kind: str, session_ids: str | tuple[str, ...], text: str) -> None:
        ids = (session_ids,) if isinstance(session_ids, str) else session_ids
        self._undo = (kind, ids)  # one undo at a time (for one chat or several), like mail clients
        self.undo_bar.label.setText(text)
        self.undo_bar.show()
        self._undo_timer.start()

    def undo(self) -> None:
        """The undo bar's button: restore the deleted session, or unarchive the archived one."""
        undo, self._undo = self._undo, None
        self._undo_timer.stop()
        self.undo_bar.hide()
        if undo is None or self.engine is None:
            return
        kind, session_ids = undo
        for session_id in session_ids:
            if kind == "delete":
                spawn(
                    self.engine.sessions.restore_session(session_id),
                    on_done=self._restored,
                    on_error=self._error,
                )
            else:
                spawn(
                    self.engine.sessions.archive_session(session_id, False),
                    on_done=self._archive_undone(session_id),
                    on_error=self._error,
                )

    def _archive_undone(self, session_id: str) -> Callable[[object], None]:
        return lambda _none: self.archiveUndone.emit(session_id)

    def _restored(self, info: SessionInfo | None) -> None:
        if info is None:
            self.errorMessage.emit("That chat was already deleted; it cannot be brought back.")

    def _undo_expired(self) -> None:
        self._undo = None
        self.undo_bar.hide()

    def _error(self, err: BaseException) -> None:
        self.errorMessage.emit(describe(err))


def _hint_label(text: str) -> QLabel:
    """A page of the sidebar's stack that says there is nothing to list."""
    label = QLabel(text)
    label.setObjectName("Hint")
    label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
    label.setContentsMargins(0, 20, 0, 0)
    return label


def _short(text: str, limit: int = 32) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
