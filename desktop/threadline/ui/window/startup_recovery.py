"""Opening the conversations at start, and asking the user what to do when that fails.

``StartupRecovery.open_engine`` loops over "open, or ask" until an engine is open or the
user quits; the asking is ``startup_dialog.StartupProblemDialog``, imported at the first
failure only: on a start that opens, the app's engine task imports this module before
the sidebar's first paint, and the dialog's Qt classes (``QDialog``, ``QUrl``,
``QDesktopServices``) were a measurable part of it (docs/performance.md, "Window"). The store
modules are imported lazily too: this path runs when the store may be what failed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from threadline.ui.common.message_bridge import user_message_of

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from threadline.ui.window.startup_dialog import StartupChoice, StartupProblemDialog

log = logging.getLogger("threadline.ui.window.startup_recovery")

DATABASE_FILENAME = "threadline.db"
"""The SQLite file in the data folder (the engine's ``DATABASE_FILENAME``; not imported, see above)."""

UNEXPECTED_TEXT = (
    "Threadline could not open your conversations because of an unexpected problem. "
    "The details are in the log in the data folder. Try again, or quit and report the problem."
)


def offered_backup(err: BaseException, database: Path | None) -> Path | None:
    """The backup to offer for ``err``: only a damaged SQLite database gets one, and only a
    backup that passes its check (the error's own, else the newest healthy one)."""
    from threadline.store.errors import CorruptDatabaseError

    if not isinstance(err, CorruptDatabaseError) or database is None:
        return None
    try:
        from threadline.store.backups import is_healthy, newest_healthy_backup
    except ImportError:
        return None
    backup = getattr(err, "backup", None)
    if isinstance(backup, Path) and backup.is_file() and is_healthy(backup):
        return backup
    return newest_healthy_backup(database)


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
        open_folder: Callable[[Path], None] | None = None,
    ) -> None:
        """``open_folder``: what Open Data Folder does (the dialog's own default: the file manager)."""
        super().__init__(parent_widget)
        self.data_dir = data_dir
        self.database_url = database_url
        self.database = None if database_url else data_dir / DATABASE_FILENAME
        self._opener = opener
        self._parent_widget = parent_widget
        self._open_folder = open_folder
        self.dialog: StartupProblemDialog | None = None
        self.attempts = 0
        self.last_aside: Path | None = None
        """Where the last restore moved the replaced (damaged) file."""

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
            from threadline.ui.window.startup_dialog import StartupChoice

            note = ""
            if choice is StartupChoice.QUIT:
                return None
            if choice is StartupChoice.RESTORE and backup is not None:
                note = await self.restore(backup)

    async def restore(self, backup: Path) -> str:
        """Put ``backup`` in place; returns a sentence for the next dialog if that failed."""
        from threadline.store.backups import restore_backup
        from threadline.ui.window.startup_dialog import backup_label

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
        self.last_aside = aside
        return ""

    async def _ask(self, text: str, backup: Path | None) -> StartupChoice:
        from threadline.ui.window.startup_dialog import StartupProblemDialog

        answer: asyncio.Future[StartupChoice] = asyncio.get_running_loop().create_future()
        folder = {} if self._open_folder is None else {"open_folder": self._open_folder}
        dialog = StartupProblemDialog(
            text, data_dir=self.data_dir, backup=backup, parent=self._parent_widget, **folder
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
