"""The Models page: search the Hub, pick a quantisation that fits, download it, manage the folder.

A window of its own (not modal: downloads go on while the person chats), opened from
File → Local Models…. It claims the message bridge while open, so a failed search or import
shows in its own line. Its runtime row (``runtime_panel.py``) says whether the models can run
here, holds the runtime's settings and shows its log (docs/local-models.md).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from threadline.models.download import DownloadJob, State
from threadline.ui.common.elided_label import ElidedLabel
from threadline.ui.common.inline_messages import claim_while_open, show_in_label
from threadline.ui.common.message_bridge import UserMessage
from threadline.ui.common.tasks import spawn
from threadline.ui.models.download_row import DownloadRow
from threadline.ui.models.installed_list import InstalledList
from threadline.ui.models.quant_list import QuantList
from threadline.ui.models.runtime_panel import RuntimePanel
from threadline.ui.models.search_panel import SearchPanel

if TYPE_CHECKING:
    from threadline.engine.capability_apis import ModelsApi
    from threadline.models.hub import HubFile


class ModelsPage(QDialog):
    def __init__(self, models: ModelsApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.models = models
        self.setObjectName("ModelsPage")
        self.setWindowTitle("Local Models")
        self.setModal(False)
        self.resize(980, 720)
        v = QVBoxLayout(self)
        v.setContentsMargins(18, 16, 18, 12)
        self.runtime = RuntimePanel(models, self)
        v.addWidget(self.runtime)
        self.runtime_note = self.runtime.note

        folder_row = QHBoxLayout()
        self.folder_label = ElidedLabel("", self)  # a deep folder would widen the page past the screen
        folder_row.addWidget(self.folder_label, 1)
        self.change_folder = QPushButton("Change folder…", self)
        self.change_folder.clicked.connect(self._choose_folder)
        folder_row.addWidget(self.change_folder)
        v.addLayout(folder_row)

        split = QSplitter(Qt.Orientation.Horizontal, self)
        self.search = SearchPanel(models, split)
        self.quants = QuantList(models, split)
        split.addWidget(self.search)
        split.addWidget(self.quants)
        split.setSizes([380, 600])
        v.addWidget(split, 3)
        self.search.repoChosen.connect(self.quants.show_repo)
        self.quants.downloadRequested.connect(self.download)

        self.downloads_box = QGroupBox("Downloads", self)
        self.downloads_layout = QVBoxLayout(self.downloads_box)
        self.no_downloads = QLabel("Nothing is downloading.", self.downloads_box)
        self.no_downloads.setObjectName("Hint")
        self.downloads_layout.addWidget(self.no_downloads)
        v.addWidget(self.downloads_box)
        self.rows: dict[str, DownloadRow] = {}

        installed_box = QGroupBox("Downloaded", self)
        box = QVBoxLayout(installed_box)
        self.installed = InstalledList(models, installed_box)
        box.addWidget(self.installed)
        v.addWidget(installed_box, 2)

        self.message = QLabel(self)
        self.message.setObjectName("FormError")
        self.message.setWordWrap(True)
        self.message.hide()
        v.addWidget(self.message)

        self.search.box.setFocus()  # what a person opens the page for; else the runtime's first box
        self.ask_folder: Callable[[], Path | None] = self._ask_folder
        self._no_default_buttons(self)
        self.bridge = claim_while_open(self, self)
        self._unsubscribe = models.subscribe(self._job_changed)
        self._show_folder()
        for job in models.downloads():
            self._job_changed(job)
        self.installed.reload()

    @staticmethod
    def _no_default_buttons(widget: QWidget) -> None:
        """Enter in the search box searches; it must not press a dialog's default button too."""
        for button in widget.findChildren(QPushButton):
            button.setAutoDefault(False)
            button.setDefault(False)

    # -- the folder -------------------------------------------------------------------------
    def _show_folder(self) -> None:
        self.folder_label.setText(f"Models folder: {self.models.folder}")

    def _ask_folder(self) -> Path | None:
        path = QFileDialog.getExistingDirectory(self, "Models folder", str(self.models.folder))
        return Path(path) if path else None

    def _choose_folder(self) -> None:
        folder = self.ask_folder()
        if folder is None:
            return

        async def change() -> None:
            self.models.set_folder(folder)

        spawn(change(), tell=self, on_done=lambda _r: self._folder_changed(), context="Folder not changed")

    def _folder_changed(self) -> None:
        self._show_folder()
        self.installed.reload()
        for job in self.models.downloads():
            self._job_changed(job)

    # -- downloads --------------------------------------------------------------------------
    def download(self, file: HubFile) -> None:
        async def start() -> DownloadJob:
            return self.models.download(file)

        spawn(start(), tell=self, context=f"{file.name} was not downloaded")

    def _job_changed(self, job: DownloadJob) -> None:
        row = self.rows.get(job.id)
        if job.state is State.CANCELLED:
            if row is not None:
                self.downloads_layout.removeWidget(row)
                row.deleteLater()
                del self.rows[job.id]
        elif row is None and job.state is not State.DONE:  # a finished one is in the list below
            row = DownloadRow(job, self.downloads_box)
            row.pause.clicked.connect(lambda _c=False, j=job.id: self._pause_or_resume(j))
            row.cancel.clicked.connect(lambda _c=False, j=job.id: self._cancel_or_clear(j))
            self.rows[job.id] = row
            self._no_default_buttons(row)
            self.downloads_layout.addWidget(row)
            self._order_tabs()
        elif row is not None:
            row.update_from(job)
        self.no_downloads.setVisible(not self.rows)
        if job.state is State.DONE:
            self.installed.reload()
            if self.quants.repo == job.file.repo:
                self.quants.reload()
        elif self.quants.repo == job.file.repo:
            self.quants.show_downloads()

    def _order_tabs(self) -> None:
        """Tab goes through the rows where they stand, between Download and the downloaded
        models; made later than the rest of the page, they came last in the chain."""
        before: QWidget = self.quants.download
        for row in self.rows.values():
            for button in (row.pause, row.cancel):
                QWidget.setTabOrder(before, button)
                before = button
        QWidget.setTabOrder(before, self.installed.tree)

    def _cancel_or_clear(self, job_id: str) -> None:
        """Cancel a download; on a finished one the button is Clear, which takes the row away."""
        job = next((j for j in self.models.downloads() if j.id == job_id), None)
        if job is not None and job.state is not State.DONE:
            self.models.cancel(job_id)
            return
        row = self.rows.pop(job_id, None)
        if row is not None:
            self.downloads_layout.removeWidget(row)
            row.deleteLater()
        self.no_downloads.setVisible(not self.rows)

    def _pause_or_resume(self, job_id: str) -> None:
        job = next((j for j in self.models.downloads() if j.id == job_id), None)
        if job is None:
            return
        if job.state in (State.PAUSED, State.FAILED):
            self.models.resume(job_id)
        else:
            self.models.pause(job_id)

    # -- telling ----------------------------------------------------------------------------
    def show_user_message(self, message: UserMessage) -> None:
        show_in_label(self.message, message)

    def closeEvent(self, event: QCloseEvent) -> None:
        self._unsubscribe()
        super().closeEvent(event)

    def done(self, result: int) -> None:
        self._unsubscribe()
        super().done(result)
