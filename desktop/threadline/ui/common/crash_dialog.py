"""The crash notice the crash handler shows: what happened, where the log is, keep going or quit.

Apart from ``crash_handler`` because the handler is installed before the window's first
frame and the dialog is needed only at the first unexpected error: defining a ``QDialog``
subclass makes PySide6 create ``QDialog``'s and ``QLayout``'s enums, a cost to the first
frame (docs/performance.md).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QLayout, QPushButton, QVBoxLayout, QWidget


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
