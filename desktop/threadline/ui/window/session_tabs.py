"""The window's chat tabs for sessions: opening one, and following the engine's session events.

Tabs follow the engine's session events, whoever caused them (this window's sidebar,
another window, the command line): a deleted or archived session's tab closes at once,
and its place is remembered so that an undo (``SessionRestored``, or the sidebar's undo
of an archive) reopens it there; a fork opens the copy in a tab beside its source. A
closed tab's idle conversation leaves the engine's memory (``release_session``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QTimer

from threadline.ui.common.heap import BIG_CHAT, release_freed_memory
from threadline.ui.common.tasks import LogOnly, spawn

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi
    from threadline.engine.events import SessionEvent
    from threadline.ui.chat.chat_tab import ChatTab
    from threadline.ui.chat.composer.model_catalog import ModelCatalog
    from threadline.ui.common.message_bridge import MessageBridge
    from threadline.ui.common.theme import TextZoom, ThemeManager
    from threadline.ui.sessions.session_sidebar import SessionSidebar
    from threadline.ui.window.tab_container import TabContainer

log = logging.getLogger("threadline.ui.window.session_tabs")


class TabsHost(Protocol):
    """What the session tabs need of their window."""

    engine: EngineApi | None
    bridge: MessageBridge
    zoom: TextZoom
    theme: ThemeManager

    @property
    def tabs(self) -> TabContainer: ...
    @property
    def sidebar(self) -> SessionSidebar: ...
    @property
    def catalog(self) -> ModelCatalog: ...
    @property
    def closing(self) -> bool: ...
    def branch_map_shown(self) -> bool: ...
    def toggle_branch_map(self, visible: bool | None = None) -> None: ...
    def refresh_models(self) -> None: ...
    def update_right(self) -> None: ...


class SessionTabs:
    """Opens sessions in the window's tabs and keeps the tabs in step with the sessions."""

    def __init__(self, host: TabsHost) -> None:
        self.host = host
        self._opening: set[str] = set()
        self._closed_for_undo: dict[str, tuple[int, bool]] = {}
        """Tabs closed because their session was deleted or archived: index, was current."""

    def open_session(self, session_id: str, message_id: str | None = None) -> None:
        tab = self.host.tabs.focus_tab(session_id)
        if tab is not None:
            if message_id:
                self._jump(tab, message_id)
            tab.focus_composer()
            return
        if self.host.engine is None or session_id in self._opening:
            return

        def opened(tab: ChatTab | None) -> None:
            if tab is not None and message_id:
                QTimer.singleShot(0, lambda: self._jump(tab, message_id))

        spawn(
            self.open(session_id, focus=True),
            on_done=opened,
            tell=self.host.bridge,
            context="Could not open the chat",
        )

    async def open(self, session_id: str, *, focus: bool, index: int | None = None) -> ChatTab | None:
        assert self.host.engine is not None
        existing = self.host.tabs.tab_for(session_id)
        if existing is not None:
            if focus:
                self.host.tabs.setCurrentWidget(existing)
            return existing
        # Imported with the first tab: the chat view brings Markdown and the composer, which
        # an empty window does not need before its first frame (docs/design.md §5). Before
        # the tree is read, so that these modules (kept for the rest of the run) are not made
        # among the tree's objects, where they would keep its memory after the chat closes.
        from threadline.ui.chat.chat_tab import ChatTab

        self._opening.add(session_id)
        try:
            live = await self.host.engine.sessions.open_session(session_id)
        finally:
            self._opening.discard(session_id)
        existing = self.host.tabs.tab_for(session_id)
        if existing is not None:
            return existing
        tab = ChatTab(
            self.host.engine, live, self.host.catalog, self.host.theme.colors, bridge=self.host.bridge
        )
        self.host.zoom.attach(tab.view, tab.composer.edit)
        tab.composer.modelListWanted.connect(self.host.refresh_models)
        tab.set_branch_map_visible(self.host.branch_map_shown())
        tab.branchMapCloseRequested.connect(lambda: self.host.toggle_branch_map(False))
        self.host.tabs.add_tab(tab, focus=focus, index=index)
        self.host.update_right()
        if focus:
            tab.focus_composer()
        return tab

    def _jump(self, tab: ChatTab, message_id: str) -> None:
        if tab.scroll_to_message(message_id):
            return
        # The hit is on another branch: make it the active path, then show it.
        if self.host.engine is None or message_id not in tab.live.conversation.tree:
            return
        leaf = tab.live.conversation.tree.newest_leaf_under(message_id)

        def show(_moved: None) -> None:
            tab.scroll_to_message(message_id)

        spawn(
            self.host.engine.controls.set_active_leaf(tab.session_id, leaf),
            on_done=show,
            tell=self.host.bridge,
        )

    # -- the engine's session events -------------------------------------------------------

    def session_event(self, event: SessionEvent) -> None:
        from threadline.engine.events import SessionForked, SessionRemoved, SessionRestored, SessionUpdated

        if isinstance(event, SessionRemoved):
            self._close_for_undo(event.session_id)
        elif isinstance(event, SessionRestored):
            self.reopen_closed_tab(event.session.id)
        elif isinstance(event, SessionForked):
            source = self.host.tabs.tab_for(event.source_id)
            index = self.host.tabs.indexOf(source) + 1 if source is not None else None
            self._spawn_open(event.session.id, index=index)
        elif isinstance(event, SessionUpdated) and event.session.archived:
            self._close_for_undo(event.session.id)

    def _close_for_undo(self, session_id: str) -> None:
        """Close the session's tab now (no question: the session is gone), remembering its place."""
        tab = self.host.tabs.tab_for(session_id)
        if tab is None:
            return
        self._closed_for_undo[session_id] = (self.host.tabs.indexOf(tab), tab is self.host.tabs.current_tab())
        self.host.tabs.close_tab(tab)

    def release_session(self, session_id: str) -> None:
        """A closed tab's idle conversation leaves the engine's memory (a 10,000-message tree
        held its memory for the rest of the run otherwise). One still replying stays live: its reply goes on
        without the tab (docs/performance.md). A big one's memory is given back at once, once
        the tab's deferred deletion has run: SQLite's page cache, which its tree's rows had
        filled (``release_caches``), then the freed heap (``heap.release_freed_memory``)."""
        live = self.host.engine.sessions.live(session_id) if self.host.engine is not None else None
        if self.host.engine is None or live is None or not live.conversation.ready_for_input:
            return
        big = len(live.conversation.tree) >= BIG_CHAT

        engine = self.host.engine

        def released(_closed: None) -> None:
            if big:  # the tree's pages in SQLite's cache first, then the heap they leave free
                spawn(
                    engine.release_caches(),
                    on_done=lambda _none: QTimer.singleShot(0, release_freed_memory),
                    tell=LogOnly("could not release the page cache"),
                )

        spawn(engine.sessions.close_session(session_id), on_done=released, tell=self.host.bridge)

    def reopen_closed_tab(self, session_id: str) -> None:
        place = self._closed_for_undo.pop(session_id, None)
        if place is not None:
            self._spawn_open(session_id, index=place[0], focus=place[1])

    def _spawn_open(self, session_id: str, *, index: int | None, focus: bool = True) -> None:
        if self.host.engine is None or self.host.closing:
            return
        spawn(
            self.open(session_id, focus=focus, index=index),
            tell=self.host.bridge,
            context="Could not open the chat",
        )

    def new_chat(self) -> None:
        if self.host.engine is None:
            return

        async def create() -> None:
            assert self.host.engine is not None
            info = await self.host.engine.sessions.new_session(
                project_id=self.host.sidebar.project_scope.project_id
            )
            self.host.sidebar.model.upsert(info)
            await self.open(info.id, focus=True)
            self.host.sidebar.select_session(info.id)

        spawn(create(), tell=self.host.bridge, context="Could not start a chat")
