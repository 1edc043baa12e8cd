"""The sidebar: new chat, a filter box that searches titles and message text, the session list.

Keys on the list: open (Enter), rename inline (F2), delete (Delete). What can be done to
chats (the context menu, several selected, the undo bar) is ``session_actions``; how a
row looks is ``session_rows``. Choosing a search hit opens its session at that message.

Archived sessions leave the list; "Archived" at the foot of the sidebar switches to
a list of them (loaded when first shown), where a session can be opened,
unarchived or deleted (with the same undo).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from threadline.core.session import SearchHit, SessionInfo
from threadline.ui.common.tasks import spawn
from threadline.ui.common.theme import LIGHT, ThemeColors
from threadline.ui.sessions.project_scope import ProjectScope
from threadline.ui.sessions.search_results_model import (
    ResultRole,
    SearchResultsModel,
)
from threadline.ui.sessions.session_actions import SessionActions
from threadline.ui.sessions.session_list_model import (
    PageSource,
    SessionIdRole,
    SessionListModel,
)
from threadline.ui.sessions.session_rows import HitDelegate, SessionDelegate, SessionListView
from threadline.ui.sessions.session_selection import (
    selected_sessions,
)

if TYPE_CHECKING:  # the engine's modules load after the first paint
    from threadline.engine.api import EngineApi
    from threadline.engine.events import SessionEvent

log = logging.getLogger("threadline.ui.sessions.session_sidebar")

_Page = TypeVar("_Page", bound=QWidget)
"""A page of the sidebar's stack made on first use (``SessionSidebar._page``)."""

SEARCH_DELAY_MS = 180
SEARCH_LIMIT = 50
"""Title matches and text hits each (the newest first)."""


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
        self._unsubscribe: Any = None
        self._search_task: Any = None

        self.model = SessionListModel(self)
        self.archived_model = SessionListModel(self, archived=True)
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

        self.chat_actions = SessionActions(self, self)
        """Rename, pin, duplicate, archive, delete, their menus and the undo bar."""
        self.chat_actions.openRequested.connect(self.openRequested)
        self.chat_actions.archiveUndone.connect(self.archiveUndone)
        self.chat_actions.errorMessage.connect(self.errorMessage)
        self.chat_actions.exportRequested.connect(self.exportRequested)
        self.model.renameRequested.connect(self.chat_actions.rename)
        self.archived_model.renameRequested.connect(self.chat_actions.rename)
        self.undo_bar = self.chat_actions.undo_bar
        layout.addWidget(self.undo_bar)

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
    def archived_list(self) -> SessionListView:
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

    def _make_archived_list(self) -> SessionListView:
        view = self._session_list(self.archived_model)
        view.setObjectName("ArchivedList")
        return view

    def _make_hits(self) -> QListView:
        view = QListView()
        view.setModel(self.results)
        view.setItemDelegate(HitDelegate(self, self))
        view.setMouseTracking(True)
        view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        view.clicked.connect(self._hit_activated)
        view.activated.connect(self._hit_activated)
        return view

    def _session_list(self, model: SessionListModel) -> SessionListView:
        view = SessionListView()
        view.setAccessibleName("Chats")
        view.setModel(model)
        view.setItemDelegate(SessionDelegate(self, self))
        view.setMouseTracking(True)
        view.setUniformItemSizes(True)
        view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        view.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)
        view.setDragEnabled(True)  # chats are dragged onto a project
        view.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(lambda pos, v=view: self.chat_actions.context_menu(v, pos))
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
        spawn(self.model.start(self._pages(archived=False)), tell=self)
        if self._archived_loaded:
            spawn(self.archived_model.start(self._pages(archived=True)), tell=self)
        if self.filter.text().strip():
            self._run_search()

    def _page_loaded(self, _added: int) -> None:
        """After a page, fetch the next at once if the rows still do not fill the view
        (the view asks only when it is scrolled, and there is nothing to scroll yet)."""
        view = self.list
        if view.verticalScrollBar().maximum() == 0 and self.model.canFetchMore(QModelIndex()):
            self.model.fetchMore(QModelIndex())

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
            spawn(self.load_archived(), tell=self)

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

    def selected_ids(self) -> list[str]:
        """The chats selected in the list shown (main or archived), in list order."""
        view = self.archived_list if self.showing_archived else self.list
        return [info.id for info in selected_sessions(view)]

    def rename_inline(self, session_id: str) -> None:
        idx = self.model.index_of(session_id)
        if idx.isValid():
            self.list.setCurrentIndex(idx)
            self.list.edit(idx)

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
                self.chat_actions.delete_many([info.id for info in chosen])
            else:
                self.chat_actions.delete(sid)

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

        self._search_task = spawn(
            find(), tell=self, on_done=show, on_failed=lambda _err: show(([], [])), context="Search failed"
        )

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


def _hint_label(text: str) -> QLabel:
    """A page of the sidebar's stack that says there is nothing to list."""
    label = QLabel(text)
    label.setObjectName("Hint")
    label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
    label.setContentsMargins(0, 20, 0, 0)
    return label
