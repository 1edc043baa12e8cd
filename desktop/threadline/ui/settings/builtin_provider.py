"""Settings → Providers, the built-in "On this computer": shown for what it is, not as a form.

That provider is not stored with the others (``engine/local_runtime.py``): it is the models
folder and the runtime of this computer, managed on the Models page. A form here would save
a stored provider of the same name, which the built-in one hides; so the page shows this
panel in the form's place, without Save, Test or Remove: what it is, whether the runtime can
run its models (and how to add one when it cannot), what runs now, and a button to the
Models page (docs/local-models.md, "The runtime").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from threadline.engine.local_runtime import LOCAL_ALIAS, LOCAL_PROVIDER
from threadline.models.runtime import NO_RUNTIME_IN_BUILD, is_packaged
from threadline.ui.common.tasks import spawn
from threadline.ui.settings.page_layout import section_title

if TYPE_CHECKING:
    from threadline.engine.capability_apis import ModelsApi

ABOUT = (
    "Built into Threadline: the models you downloaded or imported, run by Threadline on this "
    f"computer. Nothing to set up here; its models, the runtime and its settings are on the Models "
    f"page (File → Local Models…). On the command line it is <code>--provider {LOCAL_ALIAS}</code>."
)
NOT_INSTALLED = (
    "No runtime yet, so its models cannot answer. Install it with "
    "<code>pip install 'threadline[local]'</code>, or choose a llama-server program on the Models page."
)
NOT_IN_BUILD = f"No runtime yet, so its models cannot answer: {NO_RUNTIME_IN_BUILD} on the Models page."
"""A packaged build without the runtime, where pip cannot add it (docs/local-models.md, "Packaging")."""


def is_builtin(name: str) -> bool:
    return name == LOCAL_PROVIDER


class BuiltinProviderPanel(QWidget):
    manageModels = Signal()
    """"Manage on the Models page" was clicked."""

    def __init__(self, models: ModelsApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("BuiltinProvider")
        self.models = models
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(8)
        v.addWidget(section_title(LOCAL_PROVIDER))
        self.about = self._label(ABOUT)
        v.addWidget(self.about)
        self.state = self._label("")
        self.state.setObjectName("BuiltinProviderState")
        self.state.setAccessibleName("Runtime state")
        v.addWidget(self.state)
        row = QHBoxLayout()
        row.addStretch(1)
        self.manage_button = QPushButton("Manage on the Models page")
        self.manage_button.setObjectName("PrimaryButton")
        self.manage_button.clicked.connect(self.manageModels)
        row.addWidget(self.manage_button)
        v.addLayout(row)
        v.addStretch(1)

    def _label(self, text: str) -> QLabel:
        label = QLabel(text, self)
        label.setObjectName("Hint")
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        return label

    def refresh(self) -> None:
        """The runtime's state now: whether one is there to run the models, and what runs."""
        if not self.models.runtime_installed():
            self.state.setText(NOT_IN_BUILD if is_packaged() else NOT_INSTALLED)
            return
        binary = self.models.runtime_settings().server_binary
        runs_with = f"llama-server ({binary})" if binary else "llama.cpp (threadline[local])"
        self.state.setText(f"Runtime: {runs_with}. Checking whether a model is loaded…")

        def show(status: dict[str, Any] | None) -> None:
            now = (
                f"{status['model']} is loaded now."
                if status
                else "No model is loaded now; the first message to one loads it."
            )
            self.state.setText(f"Runtime: {runs_with}. {now}")

        spawn(self.models.runtime_status(), tell=self, on_done=show, context="Runtime state unknown")
