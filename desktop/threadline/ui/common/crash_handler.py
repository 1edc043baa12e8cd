"""What happens when the code hits a bug: log it, keep the user's work, say so calmly.

The app installs one ``CrashHandler`` as ``sys.excepthook`` right after the
QApplication exists and before the window first paints, so no unexpected error goes
unseen. Unexpected means: an exception without a ``user_message`` (expected errors are
shown in the tab or the status bar through the message bridge and never come here).
Exceptions reach the hook from Qt slots and virtual methods (PySide calls
``sys.excepthook``), from spawned tasks (``ui.common.tasks``), from the asyncio loop's
exception handler and from other threads (``threading.excepthook``).

For each one, in the spirit of qutebrowser's ``misc/crashsignal.py``:

1. the traceback goes to the log file (``logging_setup``; secrets masked);
2. the open tabs and layout are saved (``save_session``), so a quit — or a real crash
   a moment later — brings them back at the next start;
3. one dialog (``crash_dialog``) tells the user what happened and where the log is, and offers to keep
   going or to quit. While it is open, further errors are only logged (one bug often
   raises many times); an error on another thread is carried to the GUI thread by a
   queued signal before any widget is touched.

``KeyboardInterrupt`` and ``SystemExit`` are not bugs: they go to the previous hook.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QApplication

if TYPE_CHECKING:
    from threadline.ui.common.crash_dialog import CrashChoice, CrashDialog

crash_log = logging.getLogger("threadline.crash")

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class CrashHandler(QObject):
    """``sys.excepthook`` for the window; see the module docstring for what it does."""

    crashed = Signal(str)
    """After an unexpected error was logged and the session saved; carries the exception's class name."""
    quitRequested = Signal()
    """The user chose to quit from the crash dialog (the app then closes the window normally)."""
    _carried = Signal(str)

    def __init__(
        self,
        log_path: Path | None,
        *,
        save_session: Callable[[], None] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.log_path = log_path
        self.save_session = save_session
        self.open_log: Callable[[], None] | None = None
        """Opens the log file if it is not yet (the window opens it after its first paint and
        holds records until then): called before the dialog says where the details are."""
        self.dialog: CrashDialog | None = None
        self.count = 0
        self._previous = sys.excepthook
        self._installed = False
        self._carried.connect(self._on_gui_thread, Qt.ConnectionType.QueuedConnection)

    def install(self) -> None:
        if not self._installed:
            self._previous = sys.excepthook
            sys.excepthook = self
            self._installed = True

    def uninstall(self) -> None:
        if self._installed and sys.excepthook is self:
            sys.excepthook = self._previous
        self._installed = False

    def __call__(self, kind: type[BaseException], err: BaseException, tb: TracebackType | None) -> None:
        if not issubclass(kind, Exception):  # KeyboardInterrupt, SystemExit: not a bug
            self._previous(kind, err, tb)
            return
        try:
            self.count += 1
            crash_log.error("unexpected error (%s)", kind.__name__, exc_info=(kind, err, tb))
            if threading.current_thread() is threading.main_thread():
                self._on_gui_thread(kind.__name__)
            else:
                self._carried.emit(kind.__name__)
        except Exception:  # the handler itself must never raise into Qt or the loop
            sys.stderr.write("threadline: the crash handler failed\n")

    def _on_gui_thread(self, kind_name: str) -> None:
        if self.dialog is not None:
            self.dialog.count_another(self.count)
            return
        if self.open_log is not None:
            self.open_log()
        self._save()
        self.crashed.emit(kind_name)
        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return
        from threadline.ui.common.crash_dialog import CrashDialog  # made at the first error only

        parent = app.activeWindow()
        dialog = CrashDialog(self.log_path, parent)
        dialog.chosen.connect(self._chosen)
        dialog.finished.connect(lambda _code: self._closed(dialog))
        self.dialog = dialog
        dialog.open()

    def _save(self) -> None:
        if self.save_session is None:
            return
        try:
            self.save_session()
        except Exception:
            crash_log.exception("could not save the open tabs after an unexpected error")

    def _chosen(self, choice: CrashChoice) -> None:
        from threadline.ui.common.crash_dialog import CrashChoice

        if choice is CrashChoice.QUIT:
            crash_log.info("the user chose to quit after an unexpected error")
            self.quitRequested.emit()

    def _closed(self, dialog: CrashDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None
        dialog.deleteLater()
