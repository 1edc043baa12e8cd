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

``StartupRecovery.open_engine`` loops over "open, or ask" until an engine is open or
the user quits. The dialog is opened with ``open()`` and awaited through a future, so
the event loop keeps running (the window stays painted) and tests drive it with qtbot.
The store modules are imported lazily: this path runs when the store may be what failed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QLayout, QPushButton, QVBoxLayout, QWidget

from threadline.ui.common.message_bridge import user_message_of

log = logging.getLogger("threadline.ui.window.startup_dialog")

DATABASE_FILENAME = "threadline.db"
"""The SQLite file in the data folder (the engine's ``DATABASE_FILENAME``; not imported, see above)."""

UNEXPECTED_TEXT = (
    "Threadline could not open your conversations because of an unexpected problem. "
    "The details are in the log in the data folder. Try again, or quit and report the problem."
)


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


def offered_backup(err: BaseException, database: Path | None) -> Path | None:
    """The backup to offer for ``err``: only a damaged SQLite database gets one."""
    from threadline.store.errors import CorruptDatabaseError

    if not isinstance(err, CorruptDatabaseError) or database is None:
        return None
    backup = getattr(err, "backup", None)
    if isinstance(backup, Path) and backup.is_file():
        return backup
    try:
        from threadline.store.backups import newest_backup
    except ImportError:
        return None
    return newest_backup(database)


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


EngineOpener = Callable[[Path, str | None], Awaitable[Any]]


class StartupRecovery(QObject):
    """Opens the engine; on failure asks the user (``StartupProblemDialog``) until it works or they quit."""

    dialogShown = Signal(object)  # StartupProblemDialog

    def __init__(
        self,
        data_dir: Path,
        database_url: str | None,
        *,
        opener: EngineOpener,
        parent_widget: QWidget | None = None,
        open_folder: Callable[[Path], None] = open_folder,
    ) -> None:
        super().__init__(parent_widget)
        self.data_dir = data_dir
        self.database_url = database_url
        self.database = None if database_url else data_dir / DATABASE_FILENAME
        self._opener = opener
        self._parent_widget = parent_widget
        self._open_folder = open_folder
        self.dialog: StartupProblemDialog | None = None
        self.attempts = 0

    async def open_engine(self) -> Any | None:
        """The open engine, or ``None`` when the user chose to quit."""
        note = ""
        while True:
            self.attempts += 1
            try:
                return await self._opener(self.data_dir, self.database_url)
            except Exception as err:
                text = user_message_of(err)
                if text is None:
                    log.exception("could not open the conversations (unexpected)")
                    text = UNEXPECTED_TEXT
                else:
                    log.warning("could not open the conversations: %s", err)
                backup = offered_backup(err, self.database)
                choice = await self._ask(f"{note}\n\n{text}".strip(), backup)
            note = ""
            if choice is StartupChoice.QUIT:
                return None
            if choice is StartupChoice.RESTORE and backup is not None:
                note = await self._restore(backup)

    async def _restore(self, backup: Path) -> str:
        """Put ``backup`` in place; returns a sentence for the next dialog if that failed."""
        from threadline.store.backups import restore_backup

        assert self.database is not None
        try:
            aside = await asyncio.to_thread(restore_backup, backup, self.database)
        except Exception as err:
            log.warning("restoring %s failed: %s", backup, err)
            return (
                f"The backup from {backup_label(backup)} could not be restored either (it is damaged or "
                "could not be copied); nothing was changed."
            )
        log.info("restored the database from %s; the previous file is %s", backup, aside)
        return ""

    async def _ask(self, text: str, backup: Path | None) -> StartupChoice:
        answer: asyncio.Future[StartupChoice] = asyncio.get_running_loop().create_future()
        dialog = StartupProblemDialog(
            text,
            data_dir=self.data_dir,
            backup=backup,
            open_folder=self._open_folder,
            parent=self._parent_widget,
        )

        def chosen(choice: StartupChoice) -> None:
            if not answer.done():
                answer.set_result(choice)

        dialog.chosen.connect(chosen)
        self.dialog = dialog
        dialog.open()
        self.dialogShown.emit(dialog)
        try:
            return await answer
        finally:
            self.dialog = None
            dialog.hide()
            dialog.deleteLater()
