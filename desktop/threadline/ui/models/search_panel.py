"""The Models page's search: a box and the GGUF repositories the Hub found for it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from threadline.ui.common.tasks import spawn

if TYPE_CHECKING:
    from threadline.engine.capability_apis import ModelsApi
    from threadline.models.hub import HubModel


class SearchPanel(QWidget):
    repoChosen = Signal(str)

    def __init__(self, models: ModelsApi, parent: QWidget) -> None:
        super().__init__(parent)
        self.models = models
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.box = QLineEdit(self)
        self.box.setPlaceholderText("Search GGUF models on the Hugging Face Hub (e.g. qwen 0.5b)")
        self.box.setAccessibleName("Search models")
        self.box.returnPressed.connect(self.search)
        self.button = QPushButton("Search", self)
        self.button.clicked.connect(self.search)
        row.addWidget(self.box, 1)
        row.addWidget(self.button)
        v.addLayout(row)
        self.results = QListWidget(self)
        self.results.setAccessibleName("Models found")
        self.results.currentItemChanged.connect(self._chosen)
        v.addWidget(self.results, 1)

    def search(self) -> None:
        text = self.box.text().strip()
        if not text:
            return
        self.button.setEnabled(False)
        self.results.clear()
        spawn(
            self.models.search(text),
            tell=self,
            on_done=self._show,
            on_failed=lambda _err: self.button.setEnabled(True),
            context="Search failed",
        )

    def _show(self, found: list[HubModel]) -> None:
        self.button.setEnabled(True)
        self.results.clear()
        for model in found:
            item = QListWidgetItem(f"{model.repo}    {model.downloads:,} downloads")
            item.setData(Qt.ItemDataRole.UserRole, model.repo)
            self.results.addItem(item)
        if not found:
            self.results.addItem(QListWidgetItem("No GGUF model matches that."))

    def _chosen(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        repo = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        if isinstance(repo, str):
            self.repoChosen.emit(repo)
