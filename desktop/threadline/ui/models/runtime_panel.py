"""The Models page's runtime row: what runs the models, its settings, and its log.

Context size, GPU layers, the idle time before the model is unloaded and a ``llama-server``
program to use instead of ``threadline[local]`` are this computer's (kept beside the models
folder); the next load uses them. "Show log" opens what the runtime printed, with its path,
for the person whose model would not load (docs/local-models.md, "The runtime").
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from threadline.models.runtime import NO_RUNTIME_IN_BUILD, is_packaged

if TYPE_CHECKING:
    from threadline.engine.capability_apis import ModelsApi

NOT_INSTALLED_NOTE = (
    "Threadline finds and downloads GGUF models here. Chatting with them on this computer needs "
    "the local runtime, which this installation does not have: install it with "
    "<code>pip install 'threadline[local]'</code>, or choose a llama-server program below (the Linux "
    "packages include the runtime). Until then, a downloaded model can be served by llama.cpp, "
    "LM Studio or Ollama, which Threadline finds."
)
PACKAGED_NOTE = (
    "Threadline finds and downloads GGUF models here. Chatting with them on this computer needs "
    f"a runtime, but {NO_RUNTIME_IN_BUILD} below. Until then, a downloaded model can be served by "
    "llama.cpp, LM Studio or Ollama, which Threadline finds."
)
"""The note of a packaged build without the runtime: the command line's words, not pip advice."""
INSTALLED_NOTE = (
    "Downloaded models appear in the model menu as “On this computer”. The runtime starts with the "
    "first message to one, and unloads it when unused."
)
LOG_LIMIT = 200_000
"""Characters of the log shown (its end): enough for a load and many requests."""


class MinutesBox(QDoubleSpinBox):
    """Minutes as a person writes them: "15 min", "0.5 min" (not "15.0")."""

    def textFromValue(self, value: float) -> str:
        return f"{value:g}"


class RuntimePanel(QGroupBox):
    def __init__(self, models: ModelsApi, parent: QWidget | None = None) -> None:
        super().__init__("Runtime", parent)
        self.models = models
        v = QVBoxLayout(self)
        self.note = QLabel(self)
        self.note.setObjectName("Hint")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.RichText)
        v.addWidget(self.note)
        row = QHBoxLayout()
        settings = models.runtime_settings()
        self.context = QSpinBox(self)
        self.context.setRange(256, 1_048_576)
        self.context.setSingleStep(1024)
        self.context.setValue(settings.context)
        self.context.setSuffix(" tokens")
        self.context.setAccessibleName("Context size in tokens")
        self.gpu_layers = QSpinBox(self)
        self.gpu_layers.setRange(0, 999)
        self.gpu_layers.setValue(settings.gpu_layers)
        self.gpu_layers.setAccessibleName("Layers on the GPU")
        self.idle = MinutesBox(self)
        self.idle.setRange(0.5, 1440)
        self.idle.setDecimals(1)
        self.idle.setSuffix(" min")
        self.idle.setValue(settings.idle_minutes)
        self.idle.setAccessibleName("Unload after minutes unused")
        self.labels: list[QLabel] = []
        for text, widget in (
            ("Con&text", self.context),
            ("&GPU layers", self.gpu_layers),
            ("&Unload after", self.idle),
        ):
            label = QLabel(text, self)
            label.setBuddy(widget)  # Alt+letter reaches the box; a screen reader names it
            self.labels.append(label)
            row.addWidget(label)
            row.addWidget(widget)
            widget.editingFinished.connect(self.save)
        row.addStretch(1)
        self.show_log = QPushButton("Show log", self)
        self.show_log.clicked.connect(self.open_log)
        row.addWidget(self.show_log)
        v.addLayout(row)
        server_row = QHBoxLayout()
        server_label = QLabel("llama-server &program", self)
        server_row.addWidget(server_label)
        self.server = QLineEdit(settings.server_binary, self)
        server_label.setBuddy(self.server)
        self.labels.append(server_label)
        self.server.setPlaceholderText("Empty: the runtime of threadline[local]")
        self.server.setAccessibleName("llama-server program")
        self.server.editingFinished.connect(self.save)
        server_row.addWidget(self.server, 1)
        self.choose_server = QPushButton("Choose…", self)
        self.choose_server.clicked.connect(self._choose_server)
        server_row.addWidget(self.choose_server)
        v.addLayout(server_row)
        self.log_dialog: QDialog | None = None
        self._show_note()

    def _show_note(self) -> None:
        if self.models.runtime_installed():
            self.note.setText(INSTALLED_NOTE)
        else:
            self.note.setText(PACKAGED_NOTE if is_packaged() else NOT_INSTALLED_NOTE)

    def save(self) -> None:
        settings = replace(
            self.models.runtime_settings(),
            context=self.context.value(),
            gpu_layers=self.gpu_layers.value(),
            idle_minutes=self.idle.value(),
            server_binary=self.server.text().strip(),
        )
        if settings != self.models.runtime_settings():
            self.models.set_runtime_settings(settings)
        self._show_note()

    def _choose_server(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose the llama-server program")
        if path:
            self.server.setText(path)
            self.save()

    def open_log(self) -> None:
        """The runtime's log in a window of its own, its path on top (selectable, to copy).

        One window: pressed again, Show log reads the log afresh into the open one (each press
        opened another). Close, and Escape, close it."""
        path = self.models.runtime_log
        try:
            text = path.read_text(encoding="utf-8", errors="replace")[-LOG_LIMIT:]
        except OSError:
            text = ""
        if self.log_dialog is None:
            self.log_dialog = self._log_window()
        self.log_where.setText(str(path))
        self.log_view.setPlainText(text)
        self.log_view.moveCursor(self.log_view.textCursor().MoveOperation.End)
        self.log_dialog.show()
        self.log_dialog.raise_()
        self.log_dialog.activateWindow()

    def _log_window(self) -> QDialog:
        dialog = QDialog(self)
        dialog.setWindowTitle("Runtime log")
        dialog.resize(820, 520)
        v = QVBoxLayout(dialog)
        self.log_where = QLabel(dialog)
        self.log_where.setWordWrap(True)
        self.log_where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        v.addWidget(self.log_where)
        self.log_view = QPlainTextEdit(dialog)
        self.log_view.setReadOnly(True)
        self.log_view.setAccessibleName("Runtime log")
        self.log_view.setPlaceholderText("The runtime has not run yet: there is no log.")
        v.addWidget(self.log_view, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
        buttons.rejected.connect(dialog.reject)
        self.log_close = buttons.button(QDialogButtonBox.StandardButton.Close)
        v.addWidget(buttons)
        return dialog
