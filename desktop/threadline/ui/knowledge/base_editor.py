"""Add or edit a knowledge base: its name, its folders and files, and the embedding model or none.

Only OpenAI-compatible providers are offered for embeddings (they serve ``/v1/embeddings``:
OpenAI, Ollama, llama.cpp, LM Studio, vLLM). "Keyword search only" is a choice of its
own, said plainly, not an empty field. Saving goes through the engine; a refusal shows in
the dialog's line and nothing closes (docs/knowledge.md, "In the window").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from threadline.core.config import ProviderKind
from threadline.ui.common.inline_messages import claim_while_open, show_in_label
from threadline.ui.common.message_bridge import UserMessage
from threadline.ui.common.save_buttons import add_save_foot
from threadline.ui.common.tasks import spawn

if TYPE_CHECKING:
    from threadline.core.knowledge import KnowledgeBase
    from threadline.engine.api import EngineApi

KEYWORD_ONLY = "Keyword search only (no embedding model)"
EMBED_HINT = (
    "An embedding model lets search find passages that say the same thing in other words. "
    "Without one, search matches the words themselves. Changing the model rebuilds the index."
)


class BaseEditor(QDialog):
    """Add (``base=None``) or edit a base; ``saved`` holds the stored base once accepted."""

    def __init__(
        self, engine: EngineApi, base: KnowledgeBase | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.engine = engine
        self.base = base
        self.saved: KnowledgeBase | None = None
        self.ask_folder: Callable[[], list[Path]] = self._ask_folder
        self.ask_files: Callable[[], list[Path]] = self._ask_files
        self.setObjectName("KnowledgeBaseEditor")
        self.setWindowTitle("Edit knowledge base" if base else "New knowledge base")
        self.setMinimumWidth(560)
        v = QVBoxLayout(self)
        v.setContentsMargins(18, 16, 18, 12)
        v.setSpacing(10)
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.name = QLineEdit(base.name if base else "")
        self.name.setObjectName("KnowledgeName")
        self.name.setAccessibleName("Knowledge base name")
        self.name.setPlaceholderText("e.g. handbook")
        self.name.textChanged.connect(lambda _t: self._update_save())
        form.addRow("Name", self.name)

        paths = QVBoxLayout()
        self.paths = QListWidget()
        self.paths.setObjectName("KnowledgePaths")
        self.paths.setAccessibleName("Folders and files")
        self.paths.setMinimumHeight(90)
        self.paths.setMaximumHeight(160)
        self.paths.addItems(list(base.paths) if base else [])
        self.paths.currentRowChanged.connect(lambda _r: self._update_save())
        paths.addWidget(self.paths)
        row = QHBoxLayout()
        self.add_folder = self._button("Add folder…", self._add_folder)
        self.add_files = self._button("Add files…", self._add_files)
        self.remove_path = self._button("Remove", self._remove_path)
        for button in (self.add_folder, self.add_files, self.remove_path):
            row.addWidget(button)
        row.addStretch(1)
        paths.addLayout(row)
        form.addRow("Folders and files", paths)

        self.provider = QComboBox()
        self.provider.setObjectName("EmbedProvider")
        self.provider.setAccessibleName("Embedding provider")
        self.provider.addItem(KEYWORD_ONLY, "")
        self.provider.currentIndexChanged.connect(lambda _i: self._provider_changed())
        form.addRow("Search", self.provider)
        model_row = QHBoxLayout()
        self.model = QComboBox()
        self.model.setObjectName("EmbedModel")
        self.model.setAccessibleName("Embedding model")
        self.model.setEditable(True)
        self.model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        edit = self.model.lineEdit()
        if edit is not None:
            edit.setPlaceholderText("e.g. nomic-embed-text")
            edit.textChanged.connect(lambda _t: self._update_save())
        model_row.addWidget(self.model, 1)
        self.list_models = self._button("List models", self._list_models)
        model_row.addWidget(self.list_models)
        form.addRow("Embedding model", model_row)
        hint = QLabel(EMBED_HINT)
        hint.setObjectName("Hint")
        hint.setWordWrap(True)
        form.addRow("", hint)
        v.addLayout(form)

        foot = add_save_foot(self, v, self.save)
        self.message, self.buttons, self.save_button = foot.message, foot.buttons, foot.save_button
        self.save_button.setText("Save" if base else "Add")
        self._provider_changed()
        self.bridge = claim_while_open(self, self)
        self.loaded = spawn(self._load(), tell=self, context="Providers not listed")

    def _button(self, text: str, slot: Callable[[], None]) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName("SecondaryButton")
        button.setAutoDefault(False)
        button.clicked.connect(slot)
        return button

    async def _load(self) -> None:
        providers = await self.engine.providers.list_providers()
        for config in providers:
            if config.kind is ProviderKind.OPENAI:
                self.provider.addItem(config.name, config.name)
        if self.base is not None and self.base.embed_provider:
            index = self.provider.findData(self.base.embed_provider)
            if index < 0:
                self.provider.addItem(f"{self.base.embed_provider} (removed)", self.base.embed_provider)
                index = self.provider.count() - 1
            self.provider.setCurrentIndex(index)
            self.model.setEditText(self.base.embed_model)

    # -- folders and files -------------------------------------------------------------------

    def _ask_folder(self) -> list[Path]:
        path = QFileDialog.getExistingDirectory(self, "Add a folder to the knowledge base")
        return [Path(path)] if path else []

    def _ask_files(self) -> list[Path]:
        paths, _ = QFileDialog.getOpenFileNames(self, "Add files to the knowledge base")
        return [Path(p) for p in paths]

    def _add_folder(self) -> None:
        self._add(self.ask_folder())

    def _add_files(self) -> None:
        self._add(self.ask_files())

    def _add(self, paths: list[Path]) -> None:
        have = set(self.chosen_paths())
        for path in paths:
            if str(path) not in have:
                self.paths.addItem(str(path))
                have.add(str(path))
        self._update_save()

    def _remove_path(self) -> None:
        row = self.paths.currentRow()
        if row >= 0:
            self.paths.takeItem(row)
        self._update_save()

    def chosen_paths(self) -> list[str]:
        return [self.paths.item(i).text() for i in range(self.paths.count())]

    # -- the embedding model -----------------------------------------------------------------

    def _provider_changed(self) -> None:
        embeds = bool(self.provider.currentData())
        self.model.setEnabled(embeds)
        self.list_models.setEnabled(embeds)
        if not embeds:
            self.model.clear()
            self.model.setEditText("")
        self._update_save()

    def _list_models(self) -> None:
        provider = str(self.provider.currentData() or "")
        if not provider:
            return
        self.list_models.setEnabled(False)

        async def listed() -> list[str]:
            return [m.id for m in await self.engine.providers.list_models(provider)]

        def show(models: list[str]) -> None:
            self.list_models.setEnabled(True)
            current = self.model.currentText()
            self.model.clear()
            embedding = [m for m in models if "embed" in m.lower()]
            self.model.addItems(embedding + [m for m in models if m not in embedding])
            self.model.setEditText(current or (embedding[0] if embedding else ""))

        spawn(
            listed(),
            tell=self,
            on_done=show,
            on_failed=lambda _err: self.list_models.setEnabled(True),
            context="Could not list the models",
        )

    # -- saving ------------------------------------------------------------------------------

    def _update_save(self) -> None:
        needs_model = bool(self.provider.currentData())
        self.save_button.setEnabled(
            bool(self.name.text().strip())
            and self.paths.count() > 0
            and (not needs_model or bool(self.model.currentText().strip()))
        )
        self.remove_path.setEnabled(self.paths.currentRow() >= 0)

    def save(self) -> None:
        knowledge = self.engine.knowledge
        name = self.name.text().strip()
        paths = [Path(p) for p in self.chosen_paths()]
        provider = str(self.provider.currentData() or "")
        model = self.model.currentText().strip() if provider else ""
        self.save_button.setEnabled(False)
        self.message.hide()

        async def store() -> KnowledgeBase:
            if self.base is None:
                return await knowledge.add(name, paths, embed_provider=provider, embed_model=model)
            return await knowledge.edit(
                self.base.name, new_name=name, paths=paths, embed_provider=provider, embed_model=model
            )

        spawn(
            store(),
            tell=self,
            on_done=self._saved,
            on_failed=lambda _e: self._update_save(),
            context="Not saved",
        )

    def _saved(self, base: KnowledgeBase) -> None:
        self.saved = base
        self.accept()

    def show_user_message(self, message: UserMessage) -> None:
        show_in_label(self.message, message)
