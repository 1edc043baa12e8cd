"""Add or edit one MCP server: a local command (stdio) or a remote URL (streamable HTTP).

The record is validated by ``McpServerConfig.validate`` and saved through the
engine's server manager; a problem is shown in the dialog, next to the fields,
and nothing is saved until it is fixed.

Environment variables and headers are rows of name and value (``SecretPairsEditor``).
Every value is kept in the system keychain by the server manager, whatever its name,
unless its row is marked "Not a secret"; values are typed into password-style fields
(a Show toggle reveals what was typed), and a stored one comes back as an empty field
saying it is in the keychain, kept as long as the field is left empty. ``${VAR}`` reads
a value from Threadline's environment when the server starts (the way where there is no
keychain).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from threadline.engine.api import EngineApi
from threadline.tools.mcp.config import DEFAULT_CALL_TIMEOUT, InvalidServerConfig, McpServerConfig, Transport
from threadline.ui.common.inline_messages import claim_while_open
from threadline.ui.common.message_bridge import UserMessage
from threadline.ui.common.save_buttons import add_save_foot
from threadline.ui.common.tasks import spawn
from threadline.ui.settings.secret_pairs import SecretPairsEditor

_SECRETS_TIP = (
    "Every value is kept in the system keychain, never in Threadline's database, unless its row is "
    "marked “Not a secret”. Write ${VAR} to read a value from Threadline's environment instead "
    "(needed where there is no keychain)."
)


class McpServerEditor(QDialog):
    def __init__(
        self, engine: EngineApi, config: McpServerConfig | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.engine = engine
        self.original = config
        self.saved: McpServerConfig | None = None
        self.setWindowTitle("Edit MCP server" if config else "Add MCP server")
        self.setObjectName("McpServerEditor")
        self.setMinimumWidth(560)

        v = QVBoxLayout(self)
        v.setContentsMargins(18, 16, 18, 12)
        v.setSpacing(10)
        # One form for every field, so the labels line up; rows of the other kind are hidden.
        form = self.form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        form.setVerticalSpacing(8)
        self.name = QLineEdit()
        self.name.setPlaceholderText("e.g. git or time — its tools are named name/tool")
        form.addRow("Name", self.name)
        self.transport = QComboBox()
        self.transport.addItem("Local command (stdio)", Transport.STDIO.value)
        self.transport.addItem("Remote server (streamable HTTP)", Transport.HTTP.value)
        self.transport.currentIndexChanged.connect(self._transport_changed)
        form.addRow("Kind", self.transport)

        self.command = QLineEdit()
        self.command.setPlaceholderText("e.g. uvx, npx, /usr/bin/python3")
        command_row = _with_browse_button(self.command, self._browse_command)
        form.addRow("Command", command_row)
        self.args = QLineEdit()
        self.args.setPlaceholderText("e.g. mcp-server-git --repository ~/src/project")
        self.args.setToolTip('Quoted as in a shell: "two words" stays one argument')
        form.addRow("Arguments", self.args)
        self.env = SecretPairsEditor("NAME", "Add variable")
        self.env.setToolTip(_SECRETS_TIP)
        form.addRow("Environment", self.env)
        self.cwd = QLineEdit()
        self.cwd.setPlaceholderText("optional")
        cwd_row = _with_browse_button(self.cwd, self._browse_cwd)
        form.addRow("Working folder", cwd_row)
        self._stdio_rows: list[QWidget | QHBoxLayout] = [command_row, self.args, self.env, cwd_row]

        self.url = QLineEdit()
        self.url.setPlaceholderText("https://example.com/mcp")
        form.addRow("URL", self.url)
        self.headers = SecretPairsEditor("Header, e.g. Authorization", "Add header")
        self.headers.setToolTip(_SECRETS_TIP)
        form.addRow("Headers", self.headers)
        self._http_rows = [self.url, self.headers]

        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(1, 3600)
        self.timeout.setDecimals(0)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(DEFAULT_CALL_TIMEOUT)
        self.timeout.setFixedWidth(110)
        form.addRow("Time limit per call", self.timeout)
        self.autostart = QCheckBox("Start with Threadline (otherwise when a chat first needs it)")
        form.addRow("", self.autostart)
        self.enabled = QCheckBox("Enabled")
        self.enabled.setChecked(True)
        form.addRow("", self.enabled)
        v.addLayout(form)

        foot = add_save_foot(self, v, self.save)
        self.message, self.buttons, self.save_button = foot.message, foot.buttons, foot.save_button
        self.bridge = claim_while_open(self, self)
        if config is not None:
            self._show(config)
        self._transport_changed()

    def fill(self, config: McpServerConfig) -> None:
        """Show ``config`` as a new server's fields (a ``threadline://`` link's); Save adds it."""
        self._show(config)
        self._transport_changed()

    def _show(self, c: McpServerConfig) -> None:
        self.name.setText(c.name)
        self.transport.setCurrentIndex(self.transport.findData(c.transport.value))
        self.command.setText(c.command)
        self.args.setText(shlex.join(c.args))
        self.env.set_pairs(c.env, c.public_env)
        self.cwd.setText(c.cwd)
        self.url.setText(c.url)
        self.headers.set_pairs(c.headers, c.public_headers)
        self.timeout.setValue(c.call_timeout)
        self.autostart.setChecked(c.autostart)
        self.enabled.setChecked(c.enabled)

    def _transport_changed(self, *_: object) -> None:
        stdio = Transport(self.transport.currentData()) is Transport.STDIO
        for row in self._stdio_rows:
            if isinstance(row, QWidget):
                self.form.setRowVisible(row, stdio)
            else:
                self.form.setRowVisible(row, stdio)
        for field in self._http_rows:
            self.form.setRowVisible(field, not stdio)

    def _browse_command(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Program that starts the server")
        if path:
            self.command.setText(path)

    def _browse_cwd(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Working folder of the server")
        if folder:
            self.cwd.setText(folder)

    def config(self) -> McpServerConfig:
        """The record in the form, validated (raises ``InvalidServerConfig`` with a message for the user)."""
        transport = Transport(self.transport.currentData())
        try:
            args = tuple(shlex.split(self.args.text()))
        except ValueError as err:
            raise InvalidServerConfig(f"The arguments could not be read: {err}.") from err
        base = self.original or McpServerConfig(name="")
        stdio = transport is Transport.STDIO
        env, public_env = self.env.pairs() if stdio else ({}, ())
        headers, public_headers = self.headers.pairs() if not stdio else ({}, ())
        return replace(
            base,
            name=self.name.text().strip(),
            transport=transport,
            command=self.command.text().strip() if transport is Transport.STDIO else "",
            args=args if transport is Transport.STDIO else (),
            env=env,
            public_env=public_env,
            cwd=self.cwd.text().strip() if transport is Transport.STDIO else "",
            url=self.url.text().strip() if transport is Transport.HTTP else "",
            headers=headers,
            public_headers=public_headers,
            call_timeout=float(self.timeout.value()),
            autostart=self.autostart.isChecked(),
            enabled=self.enabled.isChecked(),
        ).validate()

    def save(self) -> None:
        try:
            config = self.config()
        except InvalidServerConfig as err:
            self._error(str(err))
            return
        previous = self.original.name if self.original else None
        if previous is None and config.name in self._existing:
            self._error(f"There is already a server named {config.name!r}.")
            return
        self.save_button.setEnabled(False)

        def done(_r: object) -> None:
            self.saved = config
            self.accept()

        spawn(
            self.engine.tool_servers.save_server(config, previous_name=previous),
            tell=self,
            on_done=done,
            on_failed=lambda _err: self.save_button.setEnabled(True),
            context="Not saved",  # in this dialog's line: it claims the bridge while open
        )

    def show_user_message(self, message: UserMessage) -> None:
        self._error(message.text)

    _existing: frozenset[str] = frozenset()

    def set_existing_names(self, names: set[str]) -> None:
        self._existing = frozenset(names)

    def _error(self, text: str) -> None:
        self.message.setText(text)
        self.message.show()


def _with_browse_button(edit: QLineEdit, browse: Callable[[], None]) -> QHBoxLayout:
    """A field with a "Browse…" button beside it (command and working folder)."""
    row = QHBoxLayout()
    button = QPushButton("Browse…")
    button.setObjectName("SecondaryButton")
    button.clicked.connect(browse)
    row.addWidget(edit, 1)
    row.addWidget(button)
    return row
