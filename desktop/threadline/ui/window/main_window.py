"""The main window: sidebar | tabs, menus with standard shortcuts, status bar, saved layout.

The window paints before the engine exists (an empty sidebar and a "loading" start
page) and becomes live in ``attach_engine``; that keeps the first frame fast
(docs/design.md §5, §9). The app's first frame is even a skeleton (``skeleton=True``):
the menu bar's titles, the start page and the sidebar's slot (its width and colour); the
actions and menu items, the sidebar and the tab container are built on the next loop
turn (``finish_building``), before the engine is opened.

Window geometry, splitter sizes, the open tabs, their order and the current one are
stored through the engine's settings and restored at the next start. They are saved
whenever they change (debounced by ``SAVE_DELAY_MS``), not only on a clean close, so a
crash brings back the layout of a moment before.

Rooms of their own: the menus and actions (``window_menus``), the chat tabs that follow
the engine's session events (``session_tabs``), the F6 panes (``window_panes``), import
and export (``interchange_actions``).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QMoveEvent, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from threadline.ui.common.message_bridge import MessageBridge, UserMessage
from threadline.ui.common.tasks import LogOnly, spawn
from threadline.ui.common.theme import ZOOM_KEY, TextZoom, ThemeChoice, ThemeColors, ThemeManager
from threadline.ui.window.empty_state import EmptyState
from threadline.ui.window.extension_actions import ExtensionActions
from threadline.ui.window.interchange_actions import InterchangeActions
from threadline.ui.window.session_tabs import SessionTabs
from threadline.ui.window.sidebar_slot import SidebarSlot
from threadline.ui.window.window_menus import WindowMenus

# Imported where they are used, after the first paint, so that PySide6 makes their classes'
# enums then: the dialogs (QFileDialog, QMessageBox), the actions and the shortcuts' key
# sequences, QByteArray (the saved geometry), the pane cycler (docs/performance.md, "Window").

if TYPE_CHECKING:
    from threadline.core.config import ProviderConfig
    from threadline.engine.api import EngineApi
    from threadline.ui.chat.changes.status_totals import StatusTotals
    from threadline.ui.chat.chat_tab import ChatTab
    from threadline.ui.chat.composer.model_catalog import ModelCatalog
    from threadline.ui.knowledge.indexing_status import IndexingStatus
    from threadline.ui.quick_ask.quick_ask import QuickAsk
    from threadline.ui.sessions.session_sidebar import SessionSidebar
    from threadline.ui.window.damage_recovery import DamageBanner, DamageRecovery
    from threadline.ui.window.tab_container import TabContainer

log = logging.getLogger("threadline.ui.window.main_window")

WINDOW_STATE_KEY = "ui.window"
THEME_KEY = "ui.theme"
SAVE_DELAY_MS = 700
"""How long the layout must stay unchanged before it is saved (a drag saves once)."""


class MainWindow(QMainWindow):
    closed = Signal()
    """Emitted once the window has saved its state and may be torn down."""

    def __init__(
        self,
        theme: ThemeManager,
        data_dir: Path | None = None,
        *,
        bridge: MessageBridge | None = None,
        skeleton: bool = False,
    ) -> None:
        """``skeleton``: build only what the first frame shows (the menu bar's titles, the
        sidebar's slot, the start page, the status bar); the app calls ``finish_building``
        right after the first paint. Otherwise the whole window is built here."""
        super().__init__()
        self.bridge = bridge if bridge is not None else MessageBridge(self)
        """Where user-visible messages go; the app passes its one bridge, tests may leave it out."""
        self.bridge.intercept(self._damage_met)
        self.zoom = TextZoom(self)
        self.setWindowTitle("Threadline")
        self.resize(1180, 760)
        self.setMinimumSize(640, 420)
        self.theme = theme
        self.data_dir = data_dir
        self.engine: EngineApi | None = None
        self._catalog: ModelCatalog | None = None
        self._closing = False
        self._unsubscribe_sessions: Any = None
        self._has_provider = False
        self._restoring = False
        self._save_timer = QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(SAVE_DELAY_MS)
        self._save_timer.timeout.connect(self._save_layout_now)
        self.saves = 0
        """How many times the layout was written (tests read it)."""
        self.quick_ask: QuickAsk | None = None
        """Quick ask and its global shortcut (``ui/quick_ask``), made with the first engine."""
        self._quick_ask_wanted: bool | None = None
        self.hide_on_close: Callable[[], bool] = lambda: False
        """Whether a close only hides the window (the tray keeps the app: ``ui/desktop/citizen``)."""

        self._sidebar: SessionSidebar | None = None
        self.sidebar_slot = SidebarSlot()
        """Where the sidebar goes: its width and colour are in the first frame, its contents follow."""
        self.sidebar_slot.setMinimumWidth(200)
        self._tabs: TabContainer | None = None
        self.empty = EmptyState()
        self.right = QStackedWidget()
        """The start page, or the tabs once one is open (added by ``tabs``, made on first use)."""
        self.right.addWidget(self.empty)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setHandleWidth(1)
        self.splitter.addWidget(self.sidebar_slot)
        self.right_column = QWidget()
        """The start page or the tabs, under the damage banner when one is shown (``damage_banner``)."""
        right_layout = QVBoxLayout(self.right_column)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.setSpacing(0)
        right_layout.addWidget(self.right)
        self.splitter.addWidget(self.right_column)
        self._damage_banner: DamageBanner | None = None
        self.damage_recovery: DamageRecovery | None = None
        """Set by the app once the engine is open (``damage_recovery.install``): a damaged
        database met later shows its banner with Restore; without it, the error is a message."""
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([280, 900])
        self.setCentralWidget(self.splitter)
        self._restored_splitter: list[int] | None = None
        """The saved sidebar and chat widths, applied again on each resize until the splitter is moved."""

        self.status_label = QLabel()
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().setSizeGripEnabled(False)
        self.file_totals: StatusTotals | None = None
        """The current chat's files changed by its tools, at the status bar's right (built with
        the first tab: it needs the chat's modules, which a start without tabs does not load)."""
        self.indexing: IndexingStatus | None = None
        """Knowledge bases being indexed (its ``jobs``), told at the status bar's right."""

        self.interchange = InterchangeActions(self)
        self.extension_actions = ExtensionActions(self)
        """File → Install MCP extension… and dropped ``.mcpb`` files (``extension_actions``)."""
        self.menus = WindowMenus(self)
        """The menus and their actions (``act_*``): titles now, items in ``finish_building``."""
        self.session_tabs = SessionTabs(self)
        """Opens sessions in tabs and keeps the tabs in step with the engine's session events."""
        self._connect()
        self.set_colors(theme.colors)
        theme.changed.connect(self.set_colors)
        if not skeleton:
            self.finish_building()

    # -- what the first frame leaves out: actions, sidebar, tabs, model catalog --------------------------

    def finish_building(self) -> None:
        """Build the actions with their shortcuts and the menus' items, the sidebar into its
        slot, the tab container behind the start page and the model catalog (once).

        The app calls it on the loop turn after the first paint, before it opens the engine:
        none of it shows anything before the engine is open (the sidebar lists no chat, the
        start page hides the tabs, the menus are closed), and it was a large part of the first
        frame (docs/performance.md, "Window"). Code that needs the sidebar or the tabs
        earlier builds them through ``sidebar`` and ``tabs``. The sidebar comes before the
        tabs: Tab moves through the widgets in the order they joined the window.
        """
        self.menus.build()
        self.build_sidebar()
        self._build_tabs()
        if self._catalog is None:
            from threadline.ui.chat.composer.model_catalog import ModelCatalog

            self._catalog = ModelCatalog(self)

    @property
    def catalog(self) -> ModelCatalog:
        """The models the chats can use (``finish_building`` makes it; the engine fills it)."""
        assert self._catalog is not None, "finish_building() comes before the engine"
        return self._catalog

    @property
    def tabs(self) -> TabContainer:
        """The chat tabs; built now if they were not yet (``finish_building``)."""
        return self._build_tabs()

    def _build_tabs(self) -> TabContainer:
        if self._tabs is not None:
            return self._tabs
        from threadline.ui.window.tab_container import TabContainer

        tabs = self._tabs = TabContainer()
        tabs.set_colors(self.theme.colors)
        tabs.tab_closed.connect(self.session_tabs.release_session)
        tabs.cur_title_changed.connect(self._title_changed)
        tabs.cur_status_changed.connect(self.status_label.setText)
        tabs.export_requested.connect(self.interchange.export)
        tabs.cur_tab_changed.connect(self._current_tab_changed)
        tabs.tabs_changed.connect(self._tabs_changed)
        tabs.settings_requested.connect(self.open_settings)
        tabs.new_session_requested.connect(self.new_chat)
        self.right.addWidget(tabs)
        return tabs

    @property
    def sidebar(self) -> SessionSidebar:
        """The session sidebar; built now if it was not yet (``build_sidebar``)."""
        return self.build_sidebar()

    @property
    def sidebar_built(self) -> bool:
        return self._sidebar is not None

    @property
    def tabs_built(self) -> bool:
        return self._tabs is not None

    def build_sidebar(self) -> SessionSidebar:
        """Build the sidebar into its slot (once) and wire it to the window."""
        if self._sidebar is not None:
            return self._sidebar
        from threadline.ui.sessions.session_sidebar import SessionSidebar

        sidebar = self._sidebar = SessionSidebar()
        sidebar.set_colors(self.theme.colors)
        sidebar.new_button.setEnabled(self.engine is not None)
        sidebar.openRequested.connect(self.open_session)
        sidebar.newRequested.connect(self.new_chat)
        sidebar.archiveUndone.connect(self.session_tabs.reopen_closed_tab)
        sidebar.errorMessage.connect(self.show_message)
        sidebar.exportRequested.connect(self.interchange.export)
        self.sidebar_slot.hold(sidebar)
        return sidebar

    def _connect(self) -> None:
        self.bridge.shown.connect(self._show_in_status_bar)
        self.zoom.changed.connect(self._zoom_changed)
        self.setAcceptDrops(True)  # a chat export dropped on the window is imported
        self.splitter.splitterMoved.connect(self._splitter_moved)
        self.empty.newChatRequested.connect(self.new_chat)
        self.empty.addProviderRequested.connect(lambda: self.open_settings("providers"))
        self.empty.useDetectedRequested.connect(self._use_detected)

    # -- theme -------------------------------------------------------------------------------------

    def set_colors(self, colors: ThemeColors) -> None:
        if self.file_totals is not None:
            self.file_totals.set_colors(colors)
        if self._tabs is not None:
            self._tabs.set_colors(colors)
        if self._sidebar is not None:
            self._sidebar.set_colors(colors)

    def set_theme(self, choice: ThemeChoice) -> None:
        self.theme.set_choice(choice)
        self.menus.theme_actions[choice].setChecked(True)
        if self.engine is not None:
            spawn(self.engine.settings.set_setting(THEME_KEY, choice.value), tell=self)

    # -- engine ------------------------------------------------------------------------------------

    async def attach_engine(self, engine: EngineApi) -> None:
        """Make the painted window live: sessions, saved layout, tabs, first-run help."""
        from threadline.ui.window.approval_router import ApprovalRouter  # engine types: after the first paint

        self.engine = engine
        self.approvals = ApprovalRouter(
            engine,
            self.tabs,
            lambda sid: self.session_tabs.open(sid, focus=False),
            lambda sid: self.quick_ask.asking_tab(sid) if self.quick_ask is not None else None,
        )
        self.closed.connect(self.approvals.detach)
        from threadline.ui.window.mcp_person import WindowPerson

        self.mcp_person = WindowPerson(
            engine, self.tabs, lambda sid: self.session_tabs.open(sid, focus=False), self.theme
        )
        self.closed.connect(self.mcp_person.detach)
        from threadline.ui.voice.window_voice import WindowVoice

        self.voice = WindowVoice(engine, self.tabs, self.statusBar(), self.bridge)  # ui/voice
        self.closed.connect(self.voice.detach)
        from threadline.ui.knowledge.indexing_status import IndexingStatus

        if self.indexing is not None:
            self.indexing.deleteLater()
        self.indexing = IndexingStatus.for_window(
            self, engine.knowledge, lambda: self.open_settings("knowledge")
        )
        self.sidebar.set_engine(engine)
        self._unsubscribe_sessions = engine.sessions.subscribe_sessions(self.session_tabs.session_event)
        saved_zoom = await engine.settings.get_setting(ZOOM_KEY, 0)
        if isinstance(saved_zoom, int):
            self.zoom.set_level(saved_zoom)
        saved_theme = await engine.settings.get_setting(THEME_KEY, None)
        if saved_theme in {c.value for c in ThemeChoice} and saved_theme != self.theme.choice.value:
            self.theme.set_choice(ThemeChoice(saved_theme))
            self.menus.theme_actions[ThemeChoice(saved_theme)].setChecked(True)
        await self.sidebar.load()
        state = await engine.settings.get_setting(WINDOW_STATE_KEY, None)
        self._restoring = True
        try:
            await self._restore(state if isinstance(state, dict) else {})
        finally:
            self._restoring = False
        self.menus.set_engine_actions(True)
        providers = await engine.providers.list_providers()
        self._has_provider = bool(providers)
        self.empty.show_ready(
            has_provider=self._has_provider, session_count=len(self.sidebar.model.sessions())
        )
        self.update_right()
        spawn(self.catalog.load(engine), tell=self)
        self._start_quick_ask()
        spawn(engine.tool_servers.start_autostart(), tell=self)
        spawn(engine.settings.take_notices(), on_done=self._show_notices, tell=self)
        if not providers:
            spawn(
                engine.providers.detect_local_servers(),
                on_done=self.empty.show_detected,
                tell=LogOnly("local server detection failed", logging.INFO),
            )

    async def detach_engine(self) -> None:
        """Let go of the engine (a restore replaces the database under it): the tabs close, the
        sidebar stops listening and nothing new is asked of it; ``attach_engine`` comes next."""
        if self.engine is None:
            return
        self._save_timer.stop()
        self.engine = None
        self.menus.set_engine_actions(False)
        if self.quick_ask is not None:
            self.quick_ask.drop_chat()
        for tab in self.tabs.tabs():
            self.tabs.close_tab(tab)
        self.sidebar.detach()
        if self._unsubscribe_sessions is not None:
            self._unsubscribe_sessions()
            self._unsubscribe_sessions = None
        self.approvals.detach()
        self.update_right()

    def damage_banner(self) -> DamageBanner:
        """The banner above the chats that tells of a damaged database (made on first use)."""
        if self._damage_banner is None:
            from threadline.ui.window.damage_recovery import DamageBanner

            self._damage_banner = DamageBanner(self.right_column)
            layout = self.right_column.layout()
            assert isinstance(layout, QVBoxLayout)
            layout.insertWidget(0, self._damage_banner)
        return self._damage_banner

    async def _restore(self, state: dict[str, Any]) -> None:
        geometry = state.get("geometry")
        if isinstance(geometry, str) and geometry:
            from PySide6.QtCore import QByteArray

            self.restoreGeometry(QByteArray(base64.b64decode(geometry)))
        sizes = state.get("splitter")
        if isinstance(sizes, list) and len(sizes) == 2 and all(isinstance(s, int) for s in sizes):
            self.splitter.setSizes(sizes)
            # The restored geometry arrives with a later resize, which redistributes the
            # splitter, and on a busy machine later than any timer would guess: every resize
            # applies the restored sizes again until the person moves the splitter.
            self._restored_splitter = list(sizes)
        if state.get("sidebar_hidden"):
            self.toggle_sidebar(False)
        if state.get("branch_map"):
            self.menus.act_branch_map.setChecked(True)
        tabs = [t for t in state.get("tabs", []) if isinstance(t, str)]
        current = state.get("current")
        for sid in tabs:
            if self.sidebar.model.session(sid) is None and not await self._exists(sid):
                continue
            await self.session_tabs.open(sid, focus=False)
        if isinstance(current, str):
            self.tabs.focus_tab(current)

    async def _exists(self, session_id: str) -> bool:
        assert self.engine is not None
        try:
            await self.engine.sessions.open_session(session_id)
            return True
        except (KeyError, LookupError):
            return False

    def window_state(self) -> dict[str, Any]:
        current = self.tabs.current_tab()
        return {
            "geometry": base64.b64encode(bytes(self.saveGeometry().data())).decode("ascii"),
            "splitter": [int(s) for s in self.splitter.sizes()],
            "sidebar_hidden": not self.sidebar_slot.isVisible() and self.isVisible(),
            "branch_map": self.menus.act_branch_map.isChecked(),
            "tabs": [t.session_id for t in self.tabs.tabs()],
            "current": current.session_id if current else None,
        }

    async def save_state(self) -> None:
        if self.engine is not None:
            self._save_timer.stop()
            self.saves += 1
            await self.engine.settings.set_setting(WINDOW_STATE_KEY, self.window_state())

    def schedule_save(self) -> None:
        """Save the layout once it has been still for ``SAVE_DELAY_MS`` (tabs, splitter, geometry)."""
        if self.engine is None or self._restoring or self._closing:
            return
        self._save_timer.start()

    def _save_layout_now(self) -> None:
        if self.engine is not None and not self._closing:
            spawn(self.save_state(), tell=LogOnly("could not save the layout"))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._restored_splitter is not None and self.sidebar_slot.isVisible():
            self.splitter.setSizes(self._restored_splitter)
        self.schedule_save()

    def _splitter_moved(self, _pos: int, _index: int) -> None:
        self._restored_splitter = None  # the person's own width from now on
        self.schedule_save()

    def moveEvent(self, event: QMoveEvent) -> None:
        super().moveEvent(event)
        self.schedule_save()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.WindowStateChange:
            self.schedule_save()

    # -- sessions and tabs (``session_tabs``) ---------------------------------------------------------

    def open_session(self, session_id: str, message_id: str | None = None) -> None:
        """Show the session's tab (opening it if need be), at ``message_id`` if given."""
        self.session_tabs.open_session(session_id, message_id)

    def new_chat(self) -> None:
        self.session_tabs.new_chat()

    def open_quick_ask(self, about_selection: bool = False) -> None:
        """Quick ask (menus, the global shortcut, `--quick-ask`, a second launch), once the engine is here."""
        if self.quick_ask is None:
            self._quick_ask_wanted = about_selection
        else:
            self.quick_ask.open(about_selection=about_selection)

    def _start_quick_ask(self) -> None:
        from threadline.ui.quick_ask.quick_ask import QuickAsk

        if self.quick_ask is None:
            self.quick_ask = QuickAsk(self)
        self.quick_ask.start()
        if self._quick_ask_wanted is not None:
            self.quick_ask.open(about_selection=self._quick_ask_wanted)
            self._quick_ask_wanted = None

    @property
    def closing(self) -> bool:
        return self._closing

    def branch_map_shown(self) -> bool:
        return self.menus.act_branch_map.isChecked()

    def close_current_tab(self) -> None:
        tab = self.tabs.current_tab()
        if tab is not None:
            self.tabs.request_close(self.tabs.indexOf(tab))

    def stop_current(self) -> None:
        tab = self.tabs.current_tab()
        if tab is not None:
            tab.stop()

    def focus_composer(self) -> None:
        tab = self.tabs.current_tab()
        if tab is not None:
            tab.focus_composer()

    def show_shortcuts(self) -> None:
        """The keyboard shortcuts sheet, made from the keys bound right now."""
        from threadline.ui.window.shortcuts_sheet import ShortcutsSheet, sheet_entries, widget_keys

        sheet = ShortcutsSheet(sheet_entries(self, self.menuBar(), widget_keys()), self)
        sheet.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        sheet.open()
        sheet.activateWindow()
        self.shortcuts_sheet = sheet

    def toggle_sidebar(self, visible: bool | None = None) -> None:
        show = (not self.sidebar_slot.isVisible()) if visible is None else bool(visible)
        self._restored_splitter = None
        self.sidebar_slot.setVisible(show)
        self.menus.act_toggle_sidebar.setChecked(show)
        self.schedule_save()

    def toggle_branch_map(self, visible: bool | None = None) -> None:
        """Show or hide the branch map beside every tab's chat (remembered with the window's layout)."""
        show = (not self.menus.act_branch_map.isChecked()) if visible is None else bool(visible)
        self.menus.act_branch_map.setChecked(show)
        for tab in self.tabs.tabs():
            tab.set_branch_map_visible(show)
        current = self.tabs.current_tab()
        if current is not None:
            if show:
                current.branch_map.focus_map()
            else:
                focused = QApplication.focusWidget()
                if focused is not None and current.branch_map_contains(focused):
                    current.focus_composer()
        self.schedule_save()

    def _title_changed(self, title: str) -> None:
        self.setWindowTitle(f"{title} — Threadline" if title else "Threadline")

    def _current_tab_changed(self, tab: ChatTab | None) -> None:
        self.schedule_save()
        if tab is not None and self.file_totals is None:
            from threadline.ui.chat.changes.status_totals import StatusTotals

            self.file_totals = StatusTotals(self.statusBar(), self.theme.colors)
        if self.file_totals is not None:
            self.file_totals.follow(tab)
        if tab is None:
            self.setWindowTitle("Threadline")
            self.status_label.setText("")
        else:
            self.sidebar.select_session(tab.session_id)

    def _tabs_changed(self) -> None:
        self.schedule_save()
        self.sidebar.set_open_sessions({t.session_id for t in self.tabs.tabs()})
        self.update_right()

    def update_right(self) -> None:
        self.right.setCurrentWidget(self.tabs if self.tabs.count() else self.empty)
        if self.engine is not None and not self.tabs.count():
            self.empty.show_ready(
                has_provider=self._has_provider, session_count=len(self.sidebar.model.sessions())
            )

    def export_current(self) -> None:
        tab = self.tabs.current_tab()
        if tab is None or self.engine is None:
            self.show_message("Open a chat to export it.")
            return
        name = "".join(ch if ch.isalnum() or ch in " -_" else "_" for ch in tab.title).strip() or "chat"
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getSaveFileName(self, "Export chat", f"{name}.md", "Markdown (*.md)")
        if not path:
            return

        def write(text: str) -> None:
            try:
                Path(path).write_text(text, encoding="utf-8")
            except OSError as err:
                self.show_message(f"Could not write {path}: {err.strerror or err}")
                return
            self.show_message(f"Exported to {path}")

        spawn(self.engine.library.export_markdown(tab.session_id), on_done=write, tell=self)

    # -- settings and first run ------------------------------------------------------------------------

    def open_settings(self, page: str = "") -> None:
        if self.engine is None:
            return
        from threadline.ui.settings.settings_dialog import SettingsDialog

        jobs = self.indexing.jobs if self.indexing is not None else None
        dialog = SettingsDialog(self.engine, self.theme, self.data_dir, self, knowledge_jobs=jobs)
        dialog.providersChanged.connect(self._providers_changed)
        dialog.agentsChanged.connect(self._agents_changed)
        dialog.themeChosen.connect(self.set_theme)
        dialog.modelsPageRequested.connect(self.open_models)
        quick_page = self.quick_ask.settings_page() if self.quick_ask is not None else None
        if quick_page is not None:
            dialog.pages.addTab(quick_page, "Quick ask")
        dialog.open_page("" if page == "quick-ask" else page)
        if quick_page is not None and page == "quick-ask":
            dialog.pages.setCurrentWidget(quick_page)
        dialog.open()
        self._settings_dialog = dialog

    def open_models(self) -> None:
        """File → Local Models… (``ui/models/``): one page per window, brought forward if open."""
        if self.engine is None:
            return
        from threadline.ui.models.models_page import ModelsPage

        page = getattr(self, "models_page", None)
        if page is None or not page.isVisible():
            page = ModelsPage(self.engine.models, self)
            self.models_page = page
        page.show()
        page.raise_()
        page.activateWindow()

    def refresh_models(self) -> None:
        if self.engine is not None:
            self.catalog.refresh_in_background(self.engine)

    def _agents_changed(self) -> None:
        for tab in self.tabs.tabs():
            tab.agent.reload()

    def _providers_changed(self) -> None:
        if self.engine is None:
            return

        async def refresh() -> None:
            assert self.engine is not None
            providers = await self.engine.providers.list_providers()
            self._has_provider = bool(providers)
            self.update_right()
            await self.catalog.load(self.engine)  # at once: a removed provider's chats say so
            await self.catalog.refresh(self.engine)

        spawn(refresh(), tell=self)

    def _use_detected(self, config: ProviderConfig) -> None:
        if self.engine is None:
            return

        async def use() -> None:
            assert self.engine is not None
            await self.engine.providers.save_provider(config)
            if config.default_model:
                await self.engine.settings.set_setting("default_provider", config.name)
                await self.engine.settings.set_setting("default_model", config.default_model)
            self.show_message(f"Connected to {config.name}.")
            self._providers_changed()

        spawn(use(), tell=self, context=f"Could not add {config.name}")

    # -- messages -----------------------------------------------------------------------------------------

    def show_message(self, text: str) -> None:
        self.bridge.info(text)

    def _show_notices(self, notices: list[str]) -> None:
        """What an upgrade left to tell (a provider header it could not keep), shown once.

        A box that stays until read, not the status bar: the notice says what to do, and it is
        not shown again (the engine cleared it).
        """
        if not notices:
            return
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(
            QMessageBox.Icon.Warning, "Threadline was upgraded", "\n\n".join(notices), parent=self
        )
        box.setObjectName("UpgradeNotice")
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def _show_in_status_bar(self, message: UserMessage) -> None:
        self.statusBar().showMessage(message.text, message.timeout_ms)

    def _damage_met(self, err: BaseException) -> bool:
        """The bridge's handler for a damaged database: the banner with Restore, not a message."""
        return self.damage_recovery is not None and self.damage_recovery.met(err)

    def _zoom_changed(self, level: int) -> None:
        if self.engine is not None:
            spawn(self.engine.settings.set_setting(ZOOM_KEY, level), tell=self)

    def about(self) -> None:
        from PySide6.QtWidgets import QMessageBox

        from threadline import __version__

        QMessageBox.about(
            self,
            "About Threadline",
            f"<b>Threadline</b> {__version__}<br>A desktop conversation manager for language models.",
        )

    def open_data_folder(self) -> None:
        if self.data_dir is not None:
            from PySide6.QtCore import QUrl
            from PySide6.QtGui import QDesktopServices

            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.data_dir)))

    # -- closing ---------------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if not self.extension_actions.drag_enter(event):
            self.interchange.drag_enter(event)

    def dropEvent(self, event: QDropEvent) -> None:
        if not self.extension_actions.drop(event):
            self.interchange.drop(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closing and self.hide_on_close():
            event.ignore()
            self.hide()
            return
        if self._closing or self.engine is None:
            self._closing = True
            event.accept()
            self.closed.emit()
            return
        event.ignore()
        self._closing = True
        spawn(self._shutdown(), tell=LogOnly("saving state failed"))

    async def _shutdown(self) -> None:
        try:
            await self.save_state()
            if self.quick_ask is not None:
                await self.quick_ask.close()
            for tab in self.tabs.tabs():
                await tab.save_draft_now()
            if self.engine is not None:
                await self.engine.sessions.purge_deleted()
        finally:
            if self._unsubscribe_sessions is not None:
                self._unsubscribe_sessions()
                self._unsubscribe_sessions = None
            self.sidebar.detach()
            for tab in self.tabs.tabs():
                tab.close_tab()
            self.hide()
            self.closed.emit()
