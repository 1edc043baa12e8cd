"""The small form an MCP prompt's arguments are asked in, before its messages are sent.

Opened when a prompt that takes arguments is picked from the composer's ``/`` list (or
typed without its required ones). Each argument is a field with the server's suggestions
(``completing_fields``); the required ones are marked and Send waits for them. Send hands
the values to the tab's ``ChatMcp``, which gets the prompt's messages and sends them as the
user's turn.
"""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from threadline.core.mcp_catalog import PromptInfo
from threadline.ui.chat.mcp.completing_fields import CompletingForm, Suggest


class PromptForm(QDialog):
    """The arguments of ``prompt``; ``values()`` after Send."""

    def __init__(
        self,
        prompt: PromptInfo,
        suggest: Suggest,
        values: dict[str, str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.prompt = prompt
        self.setObjectName("McpPromptForm")
        self.setWindowTitle(prompt.title or prompt.name)
        self.setMinimumWidth(440)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 16, 18, 14)
        layout.setSpacing(10)
        heading = QLabel(f"<b>/{prompt.command}</b>")
        heading.setObjectName("McpPromptCommand")
        layout.addWidget(heading)
        if prompt.description:
            about = QLabel(prompt.description)
            about.setWordWrap(True)
            about.setObjectName("Hint")
            layout.addWidget(about)
        self.form = CompletingForm(suggest)
        given = values or {}
        for argument in prompt.arguments:
            self.form.add_field(
                argument.name,
                argument.description,
                required=argument.required,
                value=given.get(argument.name, ""),
            )
        layout.addLayout(self.form)
        note = QLabel(f"From MCP server {prompt.server}. Its messages are sent as your message.")
        note.setObjectName("Hint")
        note.setWordWrap(True)
        layout.addWidget(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.send_button = buttons.addButton("Send", QDialogButtonBox.ButtonRole.AcceptRole)
        self.send_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        for field in self.form.fields:
            field.textChanged.connect(self._update)
        self._update()
        first = self.form.first()
        if first is not None:
            first.setFocus()

    def values(self) -> dict[str, str]:
        """The arguments filled in (empty optional ones left out)."""
        return {name: value for name, value in self.form.values().items() if value}

    def _update(self) -> None:
        missing = self.form.missing()
        self.send_button.setEnabled(not missing)
        self.send_button.setToolTip(f"Fill in {', '.join(missing)} first" if missing else "")
