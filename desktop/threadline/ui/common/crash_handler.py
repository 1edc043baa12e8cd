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
3. one dialog tells the user what happened and where the log is, and offers to keep
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
from enum import Enum
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QObject, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

crash_log = logging.getLogger("threadline.crash")

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class CrashChoice(Enum):
    KEEP_GOING = "keep_going"
    QUIT = "quit"


class CrashDialog(QDialog):
    """The crash notice: what happened, where the log is, keep going or quit.

    Opened with ``open()`` (never ``exec()``: a nested event loop inside an exception hook
    would run the very code that just failed, and blocks tests); the answer comes as
    ``chosen``.
    """

    chosen = Signal(object)  # CrashChoice

    def __init__(self, log_path: Path | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CrashDialog")
        self.setWindowTitle("Threadline — something went wrong")
        self.setModal(True)
        self.log_path = log_path
        where = (
            f"The details were written to <a href='{QUrl.fromLocalFile(str(log_path)).toString()}'>"
            f"{log_path}</a>; please attach that file if you report the problem."
            if log_path is not None
            else "The details were written to the program's error output."
        )
        self.message = QLabel(
            "<p><b>Threadline ran into an unexpected problem.</b></p>"
            "<p>Your open tabs were saved, and every message is stored as it is written. You can "
            "keep working; if something looks wrong, quit and start Threadline again — the tabs "
            "will come back.</p>"
            f"<p>{where}</p>"
        )
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.message.setOpenExternalLinks(False)
        self.message.linkActivated.connect(lambda _link: self.open_log_folder())
        self.more = QLabel()
        self.more.setObjectName("Hint")
        self.more.hide()
        self.log_button = QPushButton("Open Log Folder")
        self.log_button.setEnabled(log_path is not None)
        self.log_button.clicked.connect(self.open_log_folder)
        self.quit_button = QPushButton("Quit Threadline")
        self.keep_button = QPushButton("Keep Going")
        self.keep_button.setDefault(True)
        self.keep_button.clicked.connect(lambda: self._choose(CrashChoice.KEEP_GOING))
        self.quit_button.clicked.connect(lambda: self._choose(CrashChoice.QUIT))
        buttons = QHBoxLayout()
        buttons.addWidget(self.log_button)
        buttons.addStretch(1)
        buttons.addWidget(self.quit_button)
        buttons.addWidget(self.keep_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 18, 20, 16)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)  # wrapped text, full height
        self.message.setMinimumWidth(480)
        layout.addWidget(self.message)
        layout.addWidget(self.more)
        layout.addSpacing(6)
        layout.addLayout(buttons)
        self.choice: CrashChoice | None = None
        self.rejected.connect(lambda: self._note(CrashChoice.KEEP_GOING))

    def count_another(self, total: int) -> None:
        """Another error arrived while the dialog is open: say so, without a second dialog."""
        self.more.setText(f"{total - 1} more unexpected problem(s) since; all are in the log.")
        self.more.show()

    def open_log_folder(self) -> None:
        if self.log_path is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.log_path.parent)))

    def _choose(self, choice: CrashChoice) -> None:
        self._note(choice)
        self.done(QDialog.DialogCode.Accepted if choice is CrashChoice.QUIT else QDialog.DialogCode.Rejected)

    def _note(self, choice: CrashChoice) -> None:
        if self.choice is None:
            self.choice = choice
            self.chosen.emit(choice)


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
        if choice is CrashChoice.QUIT:
            crash_log.info("the user chose to quit after an unexpected error")
            self.quitRequested.emit()

    def _closed(self, dialog: CrashDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None
        dialog.deleteLater()
