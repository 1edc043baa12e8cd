"""The window's actions with their standard shortcuts, and the menus that hold them.

The menu bar's titles are in the first frame (``WindowMenus`` is made with the window);
the actions and the menus' items are built on the next loop turn (``build``, from
``MainWindow.finish_building``), which keeps their cost out of the first frame
(docs/performance.md, "Window"). An action only calls the window: what it does lives there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu

from threadline.ui.common.theme import ThemeChoice

if TYPE_CHECKING:
    from PySide6.QtGui import QAction

    from threadline.ui.common.shortcuts import KeySpec
    from threadline.ui.window.main_window import MainWindow
    from threadline.ui.window.pane_cycler import PaneCycler


class WindowMenus:
    """The File, Edit, View and Help menus and their actions (``act_*``), for one window."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.titles = self._menu_titles()
        self.built = False
        self.panes: PaneCycler
        """F6 and Shift+F6 (made with the actions)."""
        self.theme_actions: dict[ThemeChoice, QAction] = {}

    def build(self) -> None:
        """The actions with their shortcuts and the menus' items (once)."""
        if self.built:
            return
        self.built = True
        self._build_actions()
        self._build_menus()
        self.set_engine_actions(self.window.engine is not None)

    def _action(self, text: str, slot: Any, shortcuts: list[KeySpec] | None = None, tip: str = "") -> QAction:
        w = self.window
        from PySide6.QtGui import QAction

        action = QAction(text, w)
        if shortcuts:
            # A standard key often expands to the spelled-out one too (Close is Ctrl+F4 and
            # Ctrl+W): a key listed twice is ambiguous to Qt and then does nothing.
            from threadline.ui.common.shortcuts import unique_sequences

            action.setShortcuts(unique_sequences(shortcuts))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(slot)
        w.addAction(action)
        return action

    def _build_actions(self) -> None:
        w = self.window
        from PySide6.QtGui import QAction, QActionGroup, QKeySequence

        from threadline.ui.window.pane_cycler import PaneCycler
        from threadline.ui.window.window_panes import window_panes

        K = QKeySequence
        SK = QKeySequence.StandardKey
        self.act_new = self._action("&New Chat", w.new_chat, [K(SK.New)])
        self.act_quick_ask = self._action(
            "&Quick Ask…",
            lambda: w.open_quick_ask(),
            tip="A small window to ask from anywhere (global shortcut in Settings)",
        )
        self.act_ask_selection = self._action(
            "Ask About the &Selection…",
            lambda: w.open_quick_ask(True),
            tip="Quick ask with the selected text quoted",
        )
        self.act_close_tab = self._action("&Close Tab", w.close_current_tab, [K(SK.Close), K("Ctrl+W")])
        self.act_export = self._action("&Export as Markdown…", w.export_current)
        self.act_import_chats = self._action("&Import…", w.interchange.import_from_dialog)
        self.act_export_chats = self._action("E&xport…", lambda: w.interchange.export())
        self.act_install_extension = self._action(
            "Install &MCP Extension…", w.extension_actions.install_from_dialog
        )
        # Not the bound method: triggered(bool) would pass False as the page to open.
        self.act_settings = self._action(
            "&Settings…", lambda: w.open_settings(), [K(SK.Preferences), K("Ctrl+,")]
        )
        self.act_models = self._action("Local &Models…", lambda: w.open_models())
        self.act_quit = self._action("&Quit", w.close, [K(SK.Quit), K("Ctrl+Q")])
        self.act_quit.setMenuRole(QAction.MenuRole.QuitRole)
        # Ctrl+F finds in the open chat (each tab's find bar); Ctrl+K searches all chats.
        self.act_find = self._action("&Search Chats", lambda: w.sidebar.focus_filter(), [K("Ctrl+K")])
        self.act_next_tab = self._action(
            "&Next Tab", lambda: w.tabs.next_tab(), [K(SK.NextChild), K("Ctrl+PgDown")]
        )
        self.act_prev_tab = self._action(
            "&Previous Tab", lambda: w.tabs.previous_tab(), [K(SK.PreviousChild), K("Ctrl+PgUp")]
        )
        # Esc is handled by the composer and the chat view themselves (a window-wide Esc
        # shortcut would steal it from the search box and from dialogs).
        self.act_stop = self._action("S&top Reply\tEsc", w.stop_current)
        self.act_focus_composer = self._action("&Write a Message", w.focus_composer, [K("Ctrl+L")])
        # Keyboard and screen-reader access (docs/accessibility.md): panes, the tab list, the key sheet.
        self.panes = PaneCycler(lambda: window_panes(w))
        self.act_next_pane = self._action("Next &Pane", self.panes.next, [K("F6")])
        self.act_prev_pane = self._action("Pre&vious Pane", self.panes.previous, [K("Shift+F6")])
        self.act_tab_list = self._action(
            "List &All Tabs…", lambda: w.tabs.show_tab_list(), [K("Ctrl+Shift+A")]
        )
        self.act_shortcuts = self._action("&Keyboard Shortcuts", w.show_shortcuts, [K("Ctrl+/")])
        self.act_toggle_sidebar = self._action("Show &Sidebar", w.toggle_sidebar, [K("Ctrl+B")])
        self.act_toggle_sidebar.setCheckable(True)
        self.act_toggle_sidebar.setChecked(True)
        self.act_branch_map = self._action("Branch &Map", w.toggle_branch_map, [K("Ctrl+Shift+B")])
        self.act_branch_map.setCheckable(True)
        self.act_zoom_in = self._action("Zoom &In", w.zoom.zoom_in, [SK.ZoomIn, "Ctrl++", "Ctrl+="])
        self.act_zoom_out = self._action("Zoom &Out", w.zoom.zoom_out, [SK.ZoomOut, "Ctrl+-"])
        self.act_zoom_reset = self._action("&Actual Size", w.zoom.reset, ["Ctrl+0"])
        self.theme_group = QActionGroup(w)
        for choice, label in (
            (ThemeChoice.SYSTEM, "Follow &System"),
            (ThemeChoice.LIGHT, "&Light"),
            (ThemeChoice.DARK, "&Dark"),
            (ThemeChoice.HIGH_CONTRAST, "&High Contrast"),
        ):
            a = QAction(label, w, checkable=True)
            a.triggered.connect(lambda _=False, c=choice: w.set_theme(c))
            self.theme_group.addAction(a)
            self.theme_actions[choice] = a
        self.theme_actions[w.theme.choice].setChecked(True)

    def _menu_titles(self) -> dict[str, QMenu]:
        """The menu bar with its menus, empty: the titles are in the first frame, the items follow."""
        bar = self.window.menuBar()
        titles = {"file": "&File", "edit": "&Edit", "view": "&View", "help": "&Help"}
        return {key: bar.addMenu(title) for key, title in titles.items()}

    def _build_menus(self) -> None:
        w = self.window
        file_menu = self.titles["file"]
        file_menu.addAction(self.act_new)
        file_menu.addAction(self.act_close_tab)
        file_menu.addAction(self.act_quick_ask)
        file_menu.addAction(self.act_ask_selection)
        file_menu.addSeparator()
        file_menu.addAction(self.act_import_chats)
        file_menu.addAction(self.act_export_chats)
        file_menu.addAction(self.act_export)
        file_menu.addAction(self.act_install_extension)
        file_menu.addSeparator()
        file_menu.addAction(self.act_models)
        file_menu.addAction(self.act_settings)
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)
        edit_menu = self.titles["edit"]
        edit_menu.addAction(self.act_find)
        edit_menu.addAction(self.act_focus_composer)
        edit_menu.addAction(self.act_stop)
        view_menu = self.titles["view"]
        view_menu.addAction(self.act_next_tab)
        view_menu.addAction(self.act_prev_tab)
        view_menu.addAction(self.act_tab_list)
        view_menu.addAction(self.act_next_pane)
        view_menu.addAction(self.act_prev_pane)
        view_menu.addSeparator()
        view_menu.addAction(self.act_toggle_sidebar)
        view_menu.addAction(self.act_branch_map)
        view_menu.addSeparator()
        view_menu.addAction(self.act_zoom_in)
        view_menu.addAction(self.act_zoom_out)
        view_menu.addAction(self.act_zoom_reset)
        theme_menu = view_menu.addMenu("&Theme")
        for a in self.theme_actions.values():
            theme_menu.addAction(a)
        help_menu = self.titles["help"]
        help_menu.addAction(self.act_shortcuts)
        help_menu.addAction("&About Threadline", w.about)

    def set_engine_actions(self, enabled: bool) -> None:
        """Actions that need the engine work only while the window has one."""
        if not self.built:
            return  # ``build`` sets them as it ends
        w = self.window
        for a in (
            self.act_new,
            self.act_quick_ask,
            self.act_ask_selection,
            self.act_export,
            self.act_settings,
            self.act_install_extension,
            self.act_models,
        ):
            a.setEnabled(enabled)
        if w.sidebar_built:
            w.sidebar.new_button.setEnabled(enabled)
