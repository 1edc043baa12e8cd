"""The Models page's search: a box and the GGUF repositories the Hub found for it.

A line under the box says what the list is waiting for: the search under way (the Hub may take
a while to answer, or to be found unreachable), or that nothing matched. It is a line of its
own rather than a row of the list, so the list holds only models to choose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
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
        self.box.setPlaceholderText("Search the Hub, e.g. qwen 0.5b")
        self.box.setToolTip("Search GGUF models on the Hugging Face Hub")
        self.box.setAccessibleName("Search models")
        self.box.returnPressed.connect(self.search)
        self.button = QPushButton("Search", self)
        self.button.clicked.connect(self.search)
        row.addWidget(self.box, 1)
        row.addWidget(self.button)
        v.addLayout(row)
        self.status = QLabel(self)
        self.status.setObjectName("Hint")
        self.status.setWordWrap(True)
        self.status.hide()
        v.addWidget(self.status)
        self.results = QListWidget(self)
        self.results.setAccessibleName("Models found")
        self.results.currentItemChanged.connect(self._chosen)
        v.addWidget(self.results, 1)

    def search(self) -> None:
        text = self.box.text().strip()
        if not text:
            self._say("Type a few words of a model's name first, such as qwen 0.5b.")
            self.box.setFocus()
            return
        self.button.setEnabled(False)
        self.results.clear()
        self._say(f"Searching the Hub for “{text}”…")
        spawn(
            self.models.search(text),
            tell=self,
            on_done=lambda found: self._show(text, found),
            on_failed=lambda _err: self._failed(),
            context="Search failed",
        )

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def _failed(self) -> None:
        """Put the button back; the message bridge says why the search failed."""
        self.button.setEnabled(True)
        self._say("")

    def _show(self, text: str, found: list[HubModel]) -> None:
        self.button.setEnabled(True)
        self.results.clear()
        for model in found:
            item = QListWidgetItem(f"{model.repo}    {model.downloads:,} downloads")
            item.setData(Qt.ItemDataRole.UserRole, model.repo)
            self.results.addItem(item)
        self._say("" if found else f"No GGUF model on the Hub matches “{text}”. Try fewer or other words.")

    def _chosen(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        repo = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        if isinstance(repo, str):
            self.repoChosen.emit(repo)
