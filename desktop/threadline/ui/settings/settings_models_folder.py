"""Settings → Data → "Local models folder": where downloaded and imported GGUF models are kept.

The same choice as the Models page's "Change folder…", through ``engine.models`` (kept in the
data folder: it is this computer's, docs/local-models.md, "The models folder").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from threadline.ui.common.tasks import spawn
from threadline.ui.settings.page_layout import section_title

if TYPE_CHECKING:
    from threadline.engine.capability_apis import ModelsApi


class ModelsFolderSection(QWidget):
    def __init__(self, models: ModelsApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.models = models
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.addWidget(section_title("Local models folder"))
        self.path = QLabel(self)
        self.path.setObjectName("DataPath")
        self.path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        v.addWidget(self.path)
        hint = QLabel(
            "GGUF models downloaded or imported on the Models page (File → Local Models…) are kept "
            "here. Changing it leaves the models already downloaded where they are.",
            self,
        )
        hint.setObjectName("Hint")
        hint.setWordWrap(True)
        v.addWidget(hint)
        row = QHBoxLayout()
        self.change = QPushButton("Change…", self)
        self.change.setObjectName("SecondaryButton")
        self.change.clicked.connect(self.choose)
        self.default = QPushButton("Use the default", self)
        self.default.setObjectName("SecondaryButton")
        self.default.clicked.connect(lambda: self.use(self.models.default_folder))
        row.addWidget(self.change)
        row.addWidget(self.default)
        row.addStretch(1)
        v.addLayout(row)
        self.ask_folder: Callable[[], Path | None] = self._ask_folder
        self._show()

    def _show(self) -> None:
        self.path.setText(str(self.models.folder))
        self.default.setEnabled(self.models.folder != self.models.default_folder)

    def _ask_folder(self) -> Path | None:
        path = QFileDialog.getExistingDirectory(self, "Local models folder", str(self.models.folder))
        return Path(path) if path else None

    def choose(self) -> None:
        folder = self.ask_folder()
        if folder is not None:
            self.use(folder)

    def use(self, folder: Path) -> None:
        async def change() -> None:
            self.models.set_folder(folder)

        spawn(change(), tell=self, on_done=lambda _r: self._show(), context="Models folder not changed")
