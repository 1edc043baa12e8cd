"""A model's quantisations: each GGUF file with its size and whether it fits this computer.

The fit is computed for the context length chosen beside the list (docs/local-models.md,
"Will it fit"); "≈" marks an estimate made before the file's header is known. A file that is
being downloaded says so in place of its fit, and Download is off for it: a second press
would only be refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from threadline.models.download import State
from threadline.models.fit import human_size
from threadline.ui.common.tasks import spawn

if TYPE_CHECKING:
    from threadline.engine.capability_apis import ModelsApi
    from threadline.engine.models import FileChoice
    from threadline.models.hub import HubFile


class QuantList(QWidget):
    downloadRequested = Signal(object)  # HubFile

    def __init__(self, models: ModelsApi, parent: QWidget) -> None:
        super().__init__(parent)
        self.models = models
        self.repo: str | None = None
        self.choices: list[FileChoice] = []
        self.busy: dict[str, State] = {}
        """The downloads under way (or paused, or failed and waiting for Resume), by job id."""
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel("Choose a model to see its files.", self)
        self.title.setWordWrap(True)
        v.addWidget(self.title)
        self.tree = QTreeWidget(self)
        self.tree.setAccessibleName("Quantisations")
        self.tree.setHeaderLabels(["File", "Size", "Needs", "On this computer"])
        self.tree.setRootIsDecorated(False)
        self.tree.currentItemChanged.connect(lambda *_: self._update_button())
        v.addWidget(self.tree, 1)
        row = QHBoxLayout()
        row.addWidget(QLabel("Context length:", self))
        self.context = QSpinBox(self)
        self.context.setRange(512, 1_048_576)
        self.context.setSingleStep(1024)
        self.context.setValue(8192)
        self.context.setSuffix(" tokens")
        self.context.setAccessibleName("Context length")
        self.context.editingFinished.connect(self.reload)
        row.addWidget(self.context)
        row.addStretch(1)
        self.machine = QLabel(self)
        self.machine.setObjectName("Hint")
        row.addWidget(self.machine)
        v.addLayout(row)
        self.download = QPushButton("Download", self)
        self.download.setEnabled(False)
        self.download.clicked.connect(self._download)
        v.addWidget(self.download, 0, Qt.AlignmentFlag.AlignRight)

    def show_repo(self, repo: str) -> None:
        self.repo = repo
        self.title.setText(f"{repo}: loading its files…")
        self.reload()

    def reload(self) -> None:
        if self.repo is None:
            return
        repo = self.repo
        self.tree.clear()
        self.download.setEnabled(False)
        spawn(
            self.models.files(repo, self.context.value()),
            tell=self,
            on_done=lambda choices: self._show(repo, choices),
            on_failed=lambda _err: self._not_listed(repo),
            context=f"Could not list the files of {repo}",
        )

    def _not_listed(self, repo: str) -> None:
        """Put the title back from "loading…" (the bridge says why the listing failed)."""
        if repo == self.repo:
            self.title.setText(repo)

    def _show(self, repo: str, choices: list[FileChoice]) -> None:
        if repo != self.repo:
            return
        self.choices = choices
        count = f"{len(choices)} GGUF file" + ("s" if len(choices) > 1 else "")
        self.title.setText(f"{repo}: {count}" if choices else f"{repo} has no GGUF file.")
        self.tree.clear()
        for choice in choices:
            fit = choice.fit
            need = ("≈ " if fit.estimated else "") + human_size(fit.need_bytes)
            item = QTreeWidgetItem([choice.file.name, human_size(choice.file.size), need, ""])
            item.setData(0, Qt.ItemDataRole.UserRole, choice)
            self.tree.addTopLevelItem(item)
        self.show_downloads()
        for column in range(4):
            self.tree.resizeColumnToContents(column)
        machine = self.models.machine()
        ram = human_size(machine.total_ram) if machine.total_ram else "unknown"
        gpu = f", GPU {human_size(machine.vram)}" if machine.vram else ", no GPU found"
        self.machine.setText(f"This computer: memory {ram}{gpu}")
        self._update_button()

    def show_downloads(self) -> None:
        """Each row's last column: "downloaded", the state of its download, or its fit."""
        jobs = self.models.downloads()
        self.busy = {job.id: job.state for job in jobs if job.state not in (State.DONE, State.CANCELLED)}
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        for item in (item for item in items if item is not None):
            choice: FileChoice = item.data(0, Qt.ItemDataRole.UserRole)
            state = self.busy.get(_job_id(choice))
            if choice.installed:
                item.setText(3, "downloaded")
            else:
                item.setText(3, state.value if state is not None else choice.fit.verdict.value)
        self._update_button()

    def selected(self) -> FileChoice | None:
        item = self.tree.currentItem()
        return item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None

    def _update_button(self) -> None:
        choice = self.selected()
        self.download.setEnabled(
            choice is not None and not choice.installed and _job_id(choice) not in self.busy
        )

    def _download(self) -> None:
        choice = self.selected()
        if choice is not None:
            file: HubFile = choice.file
            self.downloadRequested.emit(file)


def _job_id(choice: FileChoice) -> str:
    """The id the download queue gives the download of this file (``DownloadJob.id``)."""
    return f"{choice.file.repo}/{choice.file.name}"
