"""The models in the models folder: name, size, architecture and context window; Remove, Import…."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from threadline.models.fit import human_size
from threadline.ui.common.tasks import spawn

if TYPE_CHECKING:
    from threadline.engine.capability_apis import ModelsApi
    from threadline.models.library import InstalledModel


class InstalledList(QWidget):
    def __init__(self, models: ModelsApi, parent: QWidget) -> None:
        super().__init__(parent)
        self.models = models
        self.loaded = 0
        """How many times the list was read (tests wait on it)."""
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        self.tree = QTreeWidget(self)
        self.tree.setAccessibleName("Downloaded models")
        self.tree.setHeaderLabels(["Model", "Size", "Architecture", "Context window", "From"])
        self.tree.setRootIsDecorated(False)
        self.tree.currentItemChanged.connect(self._selection_changed)
        v.addWidget(self.tree, 1)
        row = QHBoxLayout()
        self.empty = QLabel("No model here yet: download one above, or import a .gguf file.", self)
        self.empty.setObjectName("Hint")
        self.empty.setWordWrap(True)
        self.empty.hide()
        row.addWidget(self.empty, 1)
        row.addStretch(0)
        self.import_button = QPushButton("Import a .gguf file…", self)
        self.import_button.clicked.connect(self.choose_import)
        self.remove = QPushButton("Remove", self)
        self.remove.setEnabled(False)
        self.remove.clicked.connect(self.remove_selected)
        row.addWidget(self.import_button)
        row.addWidget(self.remove)
        v.addLayout(row)
        self.ask_file = self._ask_file
        self.confirm = self._confirm

    def _selection_changed(self, *_args: object) -> None:
        self.remove.setEnabled(self.selected() is not None)

    def reload(self) -> None:
        spawn(self.models.installed(), tell=self, on_done=self._show, context="Could not list the models")

    def _show(self, installed: list[InstalledModel]) -> None:
        self.tree.clear()
        for m in installed:
            window = f"{m.info.context_length:,} tokens" if m.info.context_length else "unknown"
            item = QTreeWidgetItem(
                [m.name, human_size(m.size), m.info.architecture, window, m.repo or m.source]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, m.name)
            self.tree.addTopLevelItem(item)
        for column in range(5):
            self.tree.resizeColumnToContents(column)
        self.remove.setEnabled(False)
        self.empty.setVisible(not installed)
        self.loaded += 1

    def selected(self) -> str | None:
        item = self.tree.currentItem()
        name = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        return name if isinstance(name, str) else None

    def names(self) -> list[str]:
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [item.text(0) for item in items if item is not None]

    def _ask_file(self) -> Path | None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Import a model", "", "GGUF models (*.gguf);;All files (*)"
        )
        return Path(path) if path else None

    def _confirm(self, name: str) -> bool:
        answer = QMessageBox.question(self, "Remove model", f"Delete {name} from the models folder?")
        return answer == QMessageBox.StandardButton.Yes

    def choose_import(self) -> None:
        path = self.ask_file()
        if path is None:
            return
        spawn(
            self.models.import_file(path),
            tell=self,
            on_done=lambda _m: self.reload(),
            context="Not imported",
        )

    def remove_selected(self) -> None:
        name = self.selected()
        if name is None or not self.confirm(name):
            return
        spawn(self.models.remove(name), tell=self, on_done=lambda _r: self.reload(), context="Not removed")
