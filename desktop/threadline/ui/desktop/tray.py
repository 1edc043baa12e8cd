"""The tray icon and its menu: New chat, Quick ask, Show/Hide, recent chats, Quit (docs/desktop.md).

The menu is built whether or not the desktop has a tray (``isSystemTrayAvailable``): the
icon shows only where there is one, and tests trigger the menu's actions directly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from threadline.ui.desktop.actions import NEW_CHAT, QUICK_ASK, DesktopActions
from threadline.ui.desktop.open_requests import bring_to_front

if TYPE_CHECKING:
    from threadline.ui.window.main_window import MainWindow

RECENT_COUNT = 6


class DesktopTray(QObject):
    def __init__(
        self, window: MainWindow, actions: DesktopActions, quit_app: Callable[[], None], parent: QObject
    ) -> None:
        super().__init__(parent)
        self.window = window
        menu = self.menu = QMenu()
        menu.setObjectName("TrayMenu")
        self.act_new_chat = self._add("New chat", lambda: actions.dispatch(NEW_CHAT))
        self.act_quick_ask = self._add("Quick ask…", lambda: actions.dispatch(QUICK_ASK))
        self.act_show = self._add("Hide Threadline", self.toggle_window)
        self.recent = menu.addMenu("Recent chats")
        menu.addSeparator()
        self.act_quit = self._add("Quit Threadline", quit_app)
        menu.aboutToShow.connect(self.refresh)
        self.icon: QSystemTrayIcon | None = None
        if QSystemTrayIcon.isSystemTrayAvailable():
            icon = self.icon = QSystemTrayIcon(window.windowIcon(), self)
            icon.setToolTip("Threadline")
            icon.setContextMenu(menu)
            icon.activated.connect(self._activated)
            icon.show()
        self.refresh()

    def _add(self, text: str, slot: Callable[[], object]) -> QAction:
        action = self.menu.addAction(text)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def refresh(self) -> None:
        """The Show/Hide entry's words and the recent chats, as they are now (each time the menu opens)."""
        shown = self.window.isVisible() and not self.window.isMinimized()
        self.act_show.setText("Hide Threadline" if shown else "Show Threadline")
        self.recent.clear()
        sessions = self.window.sidebar.model.sessions() if self.window.sidebar_built else []
        recent = sorted(sessions, key=lambda s: s.updated_at, reverse=True)[:RECENT_COUNT]
        for info in recent:
            title = info.title or "New chat"
            action = self.recent.addAction(title if len(title) <= 48 else title[:47] + "…")
            action.setData(info.id)
            action.triggered.connect(lambda _checked=False, sid=info.id: self.open_chat(sid))
        self.recent.setEnabled(bool(recent))

    def open_chat(self, session_id: str) -> None:
        bring_to_front(self.window)
        self.window.open_session(session_id)

    def toggle_window(self) -> None:
        if self.window.isVisible() and not self.window.isMinimized():
            self.window.hide()
        else:
            bring_to_front(self.window)
        self.refresh()

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.toggle_window()

    def show_message(self, title: str, text: str) -> bool:
        """A balloon from the tray icon (where there is no notification service); ``False`` without a tray."""
        if self.icon is None or not QSystemTrayIcon.supportsMessages():
            return False
        self.icon.showMessage(title, text, QSystemTrayIcon.MessageIcon.Information, 10_000)
        return True

    def close(self) -> None:
        if self.icon is not None:
            self.icon.hide()
        self.menu.deleteLater()
