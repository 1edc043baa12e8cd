"""When the conversations cannot be opened at start: say why, offer what helps, try again.

The store's errors carry a ``user_message`` that says what happened and what to do
("written by a newer version of Threadline — update it"; "damaged — restore the copy
from …"); the dialog shows that, never the driver's text ("file is not a database").
It offers:

* **Open Data Folder** — where the database, its ``backups/`` and the log live;
* **Restore Backup from <date>** — only for a damaged SQLite database that has a
  backup (``CorruptDatabaseError.backup``, else the newest in ``backups/``); the
  damaged file is moved aside, not deleted (``store.backups.restore_backup``);
* **Try Again** — after the user fixed something (freed space, closed another program);
* **Quit**.

``startup_recovery.StartupRecovery`` opens this dialog when opening fails and awaits the
user's choice (the dialog is opened with ``open()`` and awaited through a future, so the
event loop keeps running and tests drive it with qtbot). This module is imported only
then: a start that opens its conversations needs no dialog class (docs/performance.md).
The store modules are imported lazily: this path runs when the store may be what failed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import Enum
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QLayout, QPushButton, QVBoxLayout, QWidget

MESSAGE_WIDTH = 600
"""Pixels for the advice text: wide enough for the four buttons below it in one row."""


class StartupChoice(Enum):
    RETRY = "retry"
    RESTORE = "restore"
    QUIT = "quit"


def backup_label(backup: Path) -> str:
    """The time in the backup's name ("2026-05-01 09:30"), else its file time."""
    when: datetime | None
    try:
        from threadline.store.backups import backup_time

        when = backup_time(backup)
    except ImportError:
        when = None
    if when is None:
        try:
            when = datetime.fromtimestamp(backup.stat().st_mtime)
        except OSError:
            return backup.name
    return f"{when:%Y-%m-%d %H:%M}"


def open_folder(path: Path) -> None:
    QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


class StartupProblemDialog(QDialog):
    """The start-up problem: the store's advice and the ways out (folder, backup, retry, quit)."""

    chosen = Signal(object)  # StartupChoice

    def __init__(
        self,
        text: str,
        *,
        data_dir: Path,
        backup: Path | None,
        open_folder: Callable[[Path], None] = open_folder,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("StartupProblemDialog")
        self.setWindowTitle("Threadline cannot open your conversations")
        self.setModal(True)
        self.data_dir = data_dir
        self.backup = backup
        self._open_folder = open_folder
        title = QLabel("Your conversations could not be opened")
        title.setObjectName("SectionTitle")
        self.message = QLabel(text)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.folder_button = QPushButton("Open Data Folder")
        self.folder_button.clicked.connect(lambda: self._open_folder(self.data_dir))
        self.restore_button: QPushButton | None = None
        if backup is not None:
            self.restore_button = QPushButton(f"Restore Backup from {backup_label(backup)}")
            self.restore_button.setToolTip(str(backup))
            self.restore_button.clicked.connect(lambda: self._choose(StartupChoice.RESTORE))
        self.retry_button = QPushButton("Try Again")
        self.retry_button.clicked.connect(lambda: self._choose(StartupChoice.RETRY))
        self.quit_button = QPushButton("Quit")
        self.quit_button.clicked.connect(lambda: self._choose(StartupChoice.QUIT))
        buttons = QHBoxLayout()
        buttons.addWidget(self.folder_button)
        buttons.addStretch(1)
        if self.restore_button is not None:
            buttons.addWidget(self.restore_button)
        buttons.addWidget(self.retry_button)
        buttons.addWidget(self.quit_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 18, 20, 16)
        layout.setSpacing(10)
        # A wrapped label only gets its full height in a layout when its width is known
        # up front; without this the last line of the advice was cut off.
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)
        self.message.setMinimumWidth(MESSAGE_WIDTH)
        layout.addWidget(title)
        layout.addWidget(self.message)
        layout.addSpacing(8)
        layout.addLayout(buttons)
        (self.restore_button or self.retry_button).setDefault(True)
        self.choice: StartupChoice | None = None
        self.rejected.connect(lambda: self._note(StartupChoice.QUIT))  # Esc / the close box

    def _choose(self, choice: StartupChoice) -> None:
        self._note(choice)
        self.accept()

    def _note(self, choice: StartupChoice) -> None:
        if self.choice is None:
            self.choice = choice
            self.chosen.emit(choice)
