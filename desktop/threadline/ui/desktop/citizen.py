"""The window's life on the desktop, put together once the engine is open (``app/start.py``).

``DesktopCitizen`` holds the room's parts: the actions a start or the tray asks for
(``actions``), what the start's words open (``open_requests``), the tray (``tray``), and the
notifications (``notifier``, ``turn_watch``); it also decides what closing the window means
("Keep running in the tray", Settings → Desktop). Nothing here runs before the first paint
(docs/desktop.md, "Start-up cost").
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication

from threadline.ui.common.desktop_prefs import DesktopPrefs, DesktopSwitches
from threadline.ui.common.tasks import spawn
from threadline.ui.desktop import file_opens
from threadline.ui.desktop.actions import NEW_CHAT, SHOW, DesktopActions
from threadline.ui.desktop.notifier import DesktopNotifier
from threadline.ui.desktop.open_requests import OpenRequests, bring_to_front
from threadline.ui.desktop.tray import DesktopTray
from threadline.ui.desktop.turn_watch import TurnWatch

if TYPE_CHECKING:
    from PySide6.QtDBus import QDBusConnection

    from threadline.engine.api import EngineApi
    from threadline.ui.window.main_window import MainWindow

log = logging.getLogger("threadline.ui.desktop.citizen")


class DesktopCitizen(QObject):
    def __init__(self, window: MainWindow, engine: EngineApi, *, bus: QDBusConnection | None = None) -> None:
        """``bus``: where the notification service is (the session bus unless a test gives one)."""
        super().__init__(window)
        self.setObjectName("DesktopCitizen")
        self.window = window
        self.engine = engine
        self.quitting = False
        app = QApplication.instance()
        assert app is not None
        self.prefs = DesktopPrefs.of(app)
        self.actions = DesktopActions(window.show_message)
        self.actions.register(SHOW, lambda: bring_to_front(window))
        self.actions.register(NEW_CHAT, self.new_chat)
        self.requests = OpenRequests(window, self.actions)
        self.tray = DesktopTray(window, self.actions, self.quit, self)
        self.notifier = DesktopNotifier(self.tray.show_message, bus, self)
        self.notifier.activated.connect(self.tray.open_chat)
        if self.tray.icon is not None:
            self.tray.icon.messageClicked.connect(self.notifier.tray_message_clicked)
        self.turns = TurnWatch(window, self.notifier, self.prefs)
        # macOS: files and links come as Apple Events (kept from the app's start until now)
        self.file_opens = file_opens.listen(app)
        if self.file_opens is not None:
            self.file_opens.set_handler(self.open_words)
        window.hide_on_close = self.hide_on_close
        window.closed.connect(self.detach)
        spawn(self.prefs.load(engine), tell=window, context="Could not read the desktop settings")

    def open_words(self, words: list[str]) -> None:
        """What a start asked for (this one's, or a later one's through ``app/single_instance``)."""
        self.requests.open_words(words)

    def new_chat(self) -> None:
        bring_to_front(self.window)
        self.window.new_chat()

    @property
    def switches(self) -> DesktopSwitches:
        return self.prefs.switches

    def hide_on_close(self) -> bool:
        """Closing the window hides it while the tray keeps the app (unless the tray's Quit asked)."""
        keep = self.switches.keep_in_tray and self.tray.icon is not None and not self.quitting
        if keep:
            log.info("the window closes to the tray")
        return keep

    def quit(self) -> None:
        """The tray's Quit: close the window for real (its state is saved as on any close)."""
        self.quitting = True
        self.window.close()

    def detach(self) -> None:
        if self.file_opens is not None:
            self.file_opens.set_handler(None)
        self.turns.detach()
        self.tray.close()
