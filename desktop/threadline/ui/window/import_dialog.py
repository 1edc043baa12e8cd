"""File → Import… and files dropped on the window: a progress dialog with Cancel, then the report.

The import runs as a task (``engine.library.import_file``); Cancel cancels that task, and the
engine stops between conversations, so nothing half-imported remains. The report
says how many chats were imported, updated, skipped and failed, with each failed
chat's title and the reason.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QProgressDialog,
    QVBoxLayout,
    QWidget,
)

from threadline.ui.common.tasks import spawn

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi
    from threadline.interchange.model import ImportProgress, ImportReport

IMPORT_FILTER = "Chat exports (*.json *.zip);;All files (*)"


class ImportReportDialog(QDialog):
    """What an import did, in words; the failed chats listed with their reasons."""

    def __init__(self, parent: QWidget | None, path: Path, report: ImportReport) -> None:
        super().__init__(parent)
        self.setObjectName("ImportReportDialog")
        self.setWindowTitle("Import finished" if not report.cancelled else "Import cancelled")
        self.setMinimumWidth(460)
        layout = QVBoxLayout(self)
        self.summary = QLabel(summary_text(path, report))
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.summary)
        self.failures = QPlainTextEdit()
        self.failures.setReadOnly(True)
        self.failures.setAccessibleName("Chats that were not imported")
        self.failures.setPlainText("\n".join(f"“{p.title}”: {p.reason}" for p in report.failed))
        self.failures.setVisible(bool(report.failed))
        layout.addWidget(self.failures)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout.addWidget(buttons)


def summary_text(path: Path, report: ImportReport) -> str:
    counts = [
        _count(report.imported, "imported"),
        _count(report.updated, "updated"),
        _count(report.skipped, "already here and unchanged"),
        *([_count(report.kept_newer, "kept, since the stored copy is newer")] if report.kept_newer else []),
        _count(len(report.failed), "not imported"),
    ]
    head = f"From {path.name}: " + ", ".join(counts) + "."
    if report.cancelled:
        head += " The import was cancelled; the chats listed as imported are complete, nothing else was kept."
    if report.failed:
        head += " The chats below could not be read:"
    return head


def _count(n: int, what: str) -> str:
    return f"{n} chat{'s' if n != 1 else ''} {what}"


class ImportRun(QWidget):
    """One import: its progress dialog, its task, and the report at the end."""

    finished = Signal(object)
    """The ``ImportReport`` (after the report dialog was shown), or ``None`` after an error."""

    def __init__(self, parent: QWidget, engine: EngineApi, path: Path) -> None:
        super().__init__(parent)
        self.hide()
        self.path = path
        self.engine = engine
        self.report_dialog: ImportReportDialog | None = None
        self.progress = QProgressDialog(f"Importing {path.name}…", "Cancel", 0, 0, parent)
        self.progress.setObjectName("ImportProgress")
        self.progress.setWindowTitle("Import")
        self.progress.setWindowModality(Qt.WindowModality.WindowModal)
        self.progress.setMinimumDuration(0)
        self.progress.setAutoClose(False)
        self.progress.setAutoReset(False)
        self.progress.canceled.connect(self.cancel)
        self.task: asyncio.Task[Any] | None = None

    def start(self) -> None:
        self.progress.show()
        self.task = spawn(
            self.engine.library.import_file(self.path, self._progress),
            on_done=self._done,
            on_failed=self._failed,
            tell=self,
            name="import",
        )

    def cancel(self) -> None:
        self.progress.setLabelText("Cancelling… the chat being stored is finished or left out whole.")
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def _progress(self, progress: ImportProgress) -> None:
        if self.progress.wasCanceled():
            return
        if progress.total:
            self.progress.setMaximum(progress.total)
            self.progress.setValue(progress.done)
        elif progress.fraction is not None:
            self.progress.setMaximum(1000)
            self.progress.setValue(int(progress.fraction * 1000))
        self.progress.setLabelText(f"Importing {self.path.name}…\n{progress.done} chats — “{progress.title}”")

    def _done(self, report: ImportReport) -> None:
        self.progress.close()
        self.report_dialog = ImportReportDialog(self.parentWidget(), self.path, report)
        self.report_dialog.finished.connect(lambda _code: self.finished.emit(report))
        self.report_dialog.open()

    def _failed(self, _err: BaseException) -> None:
        """The progress goes; the bridge says why (the window's status bar)."""
        self.progress.close()
        self.finished.emit(None)
