"""Files and ``threadline://`` links macOS hands to the app (``QFileOpenEvent``), kept until
the window can open them.

macOS sends an Apple Event for a file double-clicked in Finder or a link opened in a browser,
and when that starts Threadline the event comes as soon as the application exists: long
before the engine is open and the desktop room can ask about it. ``FileOpenInbox`` is a child
of the application, listening from the start (``app/start.py``); it keeps what arrives until
``DesktopCitizen`` gives it a handler, then hands each over in order, as words of a start
(docs/desktop.md, "Files and links on the desktop").

An application-wide event filter sees every event of every object (docs/performance.md),
so it is installed only where these events come: macOS.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtGui import QFileOpenEvent

log = logging.getLogger("threadline.ui.desktop.file_opens")

NAME = "FileOpenInbox"


class FileOpenInbox(QObject):
    """The application's file-open events, kept until there is a handler."""

    def __init__(self, app: QCoreApplication) -> None:
        super().__init__(app)
        self.setObjectName(NAME)
        self._app = app
        self._handler: Callable[[list[str]], None] | None = None
        self.waiting: list[str] = []
        """What arrived while nobody could open it (oldest first)."""
        app.installEventFilter(self)

    def set_handler(self, handler: Callable[[list[str]], None] | None) -> None:
        """Who opens from now on (``None``: keep them again); what waited goes to it now."""
        self._handler = handler
        if handler is None or not self.waiting:
            return
        waiting, self.waiting = self.waiting, []
        for word in waiting:
            handler([word])

    def close(self) -> None:
        self._app.removeEventFilter(self)
        self.setParent(None)
        self.deleteLater()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.FileOpen or not isinstance(event, QFileOpenEvent):
            return False
        url = event.url()
        word = url.toString() if url.scheme() == "threadline" else event.file()
        if not word:
            return True
        if self._handler is None:
            log.info("a file open waits for the window")
            self.waiting.append(word)
        else:
            self._handler([word])
        return True


def listen(app: QCoreApplication, *, platform: str = sys.platform) -> FileOpenInbox | None:
    """The application's inbox, made on first call where the system sends file opens (macOS)."""
    found = app.findChild(FileOpenInbox, NAME)
    if found is not None:
        return found
    if platform != "darwin":
        return None
    return FileOpenInbox(app)
