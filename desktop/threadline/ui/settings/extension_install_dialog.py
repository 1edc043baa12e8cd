"""Install (or update) an MCP extension: what the bundle is, what it will run, and its settings.

Opened on a ``.mcpb`` file (File → Install MCP extension…, a file dropped on the window,
Settings → MCP → Install extension…). It asks the engine to read the bundle
(``engine.extensions.preview``: nothing is written) and shows its name, version, author,
description, the tools and prompts it declares and the exact command line it will run, with
the environment it adds; then its settings as a form (``ExtensionConfigForm``). A bundle
that is refused (a path out of its folder, a symbolic link, too big, a manifest Threadline
does not know) says why in the dialog's line, and Install stays off. Install goes through
``engine.extensions.install``; secret settings go to the keychain only.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QDialog, QLabel, QScrollArea, QVBoxLayout, QWidget

from threadline.engine.api import EngineApi
from threadline.engine.extensions import ExtensionPreview, InstalledExtension
from threadline.ui.common.inline_messages import claim_while_open
from threadline.ui.common.message_bridge import UserMessage
from threadline.ui.common.save_buttons import add_save_foot
from threadline.ui.common.tasks import spawn
from threadline.ui.settings.extension_config_form import ExtensionConfigForm


class ExtensionInstallDialog(QDialog):
    def __init__(self, engine: EngineApi, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.path = path
        self.preview: ExtensionPreview | None = None
        self.installed: InstalledExtension | None = None
        self.setWindowTitle("Install MCP extension")
        self.setObjectName("ExtensionInstallDialog")
        self.setMinimumWidth(560)

        v = QVBoxLayout(self)
        v.setContentsMargins(18, 16, 18, 12)
        v.setSpacing(8)
        self.title = QLabel(f"Reading {path.name}…")
        self.title.setObjectName("SectionTitle")
        self.title.setWordWrap(True)
        v.addWidget(self.title)
        self.byline = QLabel()
        self.byline.setObjectName("Hint")
        self.byline.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.byline.setOpenExternalLinks(True)
        v.addWidget(self.byline)
        self.description = _wrapped()
        v.addWidget(self.description)
        self.runs_label = QLabel("It will run, on this computer with your permissions:")
        v.addWidget(self.runs_label)
        self.command = _wrapped()
        self.command.setObjectName("CommandLine")
        self.command.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.command.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        v.addWidget(self.command)
        self.declares = _wrapped()
        v.addWidget(self.declares)
        self.settings_label = QLabel("Settings")
        self.settings_label.setObjectName("SectionTitle")
        v.addWidget(self.settings_label)
        self.form = ExtensionConfigForm()
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(self.form)
        scroll.setMinimumHeight(140)
        self.settings_area = scroll
        v.addWidget(scroll, 1)
        self._filled = (self.byline, self.description, self.runs_label, self.command, self.declares)
        for widget in (*self._filled, self.settings_label, self.settings_area):
            widget.hide()  # shown once the bundle is read

        foot = add_save_foot(self, v, self.install)
        self.message, self.install_button = foot.message, foot.save_button
        self.install_button.setText("Install")
        self.install_button.setEnabled(False)
        self.bridge = claim_while_open(self, self)

    def load(self) -> None:
        """Read the bundle (in the background); the dialog fills in, or says why it cannot install."""
        spawn(
            self.engine.extensions.preview(self.path),
            tell=self,
            on_done=self._show,
            on_failed=lambda _err: self._refused(),
            context="Not installed",
        )

    def _refused(self) -> None:
        self.title.setText(f"{self.path.name} cannot be installed")
        self.install_button.hide()

    def _show(self, preview: ExtensionPreview) -> None:
        self.preview = preview
        m = preview.manifest
        old = preview.installed
        change = preview.change
        if old is None:
            self.title.setText(f"{m.title} {m.version}")
        elif change == "update":
            self.title.setText(f"Update {m.title} from {old.version} to {m.version}")
            self.install_button.setText("Update")
        elif change == "reinstall":
            self.title.setText(f"Reinstall {m.title} {m.version}")
            self.install_button.setText("Reinstall")
        else:
            self.title.setText(f"Replace {m.title} {old.version} with the older {m.version}")
            self.install_button.setText("Replace")
        by = f"by {m.author}" if not m.author_url else f'by <a href="{m.author_url}">{m.author}</a>'
        self.byline.setText(f"{by} · MCP server “{preview.name}” · {m.server_type}")
        self.description.setText(m.long_description or m.description)
        env = "".join(f"\n{k}={v}" for k, v in preview.env.items())
        self.command.setText(preview.command + env)
        parts = []
        if m.tools:
            parts.append("Tools: " + ", ".join(name for name, _ in m.tools))
        if m.prompts:
            parts.append("Prompts: " + ", ".join(m.prompts))
        if preview.needs:
            parts.append(preview.needs)
        self.declares.setText("\n".join(parts) or "It does not list its tools in advance.")
        self.form.set_options(
            m.user_config,
            dict(old.values) if old is not None else {},
            set(old.sensitive) if old is not None else set(),
        )
        for widget in self._filled:
            widget.show()
        self.settings_label.setVisible(bool(m.user_config))
        self.settings_area.setVisible(bool(m.user_config))
        # The whole form when it fits, else a scrolled part of it; then the dialog fits its content.
        self.settings_area.setMinimumHeight(min(self.form.sizeHint().height() + 4, 380))
        self.adjustSize()
        self.install_button.setEnabled(True)

    def install(self) -> None:
        missing = self.form.missing()
        if missing:
            self._error(f"Fill in {', '.join(missing)}.")
            return
        self.install_button.setEnabled(False)
        self.message.hide()

        def done(record: InstalledExtension) -> None:
            self.installed = record
            self.accept()

        spawn(
            self.engine.extensions.install(self.path, self.form.values()),
            tell=self,
            on_done=done,
            on_failed=lambda _err: self.install_button.setEnabled(True),
            context="Not installed",
        )

    def show_user_message(self, message: UserMessage) -> None:
        self._error(message.text)

    def _error(self, text: str) -> None:
        self.message.setText(text)
        self.message.show()


def _wrapped() -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    return label
