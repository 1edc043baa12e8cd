"""Settings → MCP, the selected server's details: what it is, its sign in, its instructions and its log.

Shown under the server's tools on the MCP page (``McpServersPage``): its transport and
protocol revision, the capabilities it declared, how many tools, prompts and resources it
has, and, for a remote server, whether Threadline is signed in, with "Sign in" (the
browser opens, through the desktop) and "Sign out". A server that answered 401 in the
background says it "needs you to sign in" here, next to the button. Below: the server's
instructions (what the model is given with its tools) and its log (``notifications/message``)
with the level the server logs from (``logging/setLevel``). Everything is read through
``engine.mcp_servers``.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from threadline.engine.api import EngineApi, Unsubscribe
from threadline.engine.mcp_servers import LEVELS, LogEntry, ServerDetails
from threadline.tools.mcp.state import ServerState, ServerStatus
from threadline.ui.common.tasks import spawn

NEEDS_SIGN_IN = "needs you to sign in"


def log_line(entry: LogEntry) -> str:
    stamp = time.strftime("%H:%M:%S", time.localtime(entry.when))
    source = f" {entry.logger}" if entry.logger else ""
    return f"{stamp} {entry.level.upper()}{source}: {entry.text}"


def count(value: int | None, one: str) -> str:
    if value is None:
        return f"{one.capitalize()}s —"
    return f"{value} {one}{'' if value == 1 else 's'}"


class McpServerDetails(QWidget):
    def __init__(self, engine: EngineApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.name = ""
        self._unsubscribe_log: Unsubscribe | None = None
        self._signing_in = False
        self._error = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.facts = QLabel()
        self.facts.setObjectName("Hint")
        self.facts.setWordWrap(True)
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.facts.setAccessibleName("Server details")
        layout.addWidget(self.facts)

        self.sign_row = QWidget()
        row = QHBoxLayout(self.sign_row)
        row.setContentsMargins(0, 0, 0, 0)
        self.sign_state = QLabel()
        self.sign_state.setWordWrap(True)
        row.addWidget(self.sign_state, 1)
        self.sign_in_button = QPushButton("Sign in")
        self.sign_in_button.setToolTip("Sign in to this server in your browser")
        self.sign_out_button = QPushButton("Sign out")
        self.sign_out_button.setToolTip("Forget this server's tokens (keychain); it asks to sign in again")
        for button in (self.sign_in_button, self.sign_out_button):
            button.setObjectName("SecondaryButton")
            row.addWidget(button)
        self.sign_in_button.clicked.connect(self.sign_in)
        self.sign_out_button.clicked.connect(self.sign_out)
        layout.addWidget(self.sign_row)

        self.instructions_title = QLabel("Instructions")
        self.instructions_title.setObjectName("SubTitle")
        layout.addWidget(self.instructions_title)
        self.instructions = QPlainTextEdit()
        self.instructions.setReadOnly(True)
        self.instructions.setAccessibleName("Instructions of the server")
        self.instructions.setMaximumHeight(72)
        layout.addWidget(self.instructions)

        log_head = QHBoxLayout()
        log_title = QLabel("Log")
        log_title.setObjectName("SubTitle")
        log_head.addWidget(log_title)
        log_head.addStretch(1)
        level_label = QLabel("Level")
        log_head.addWidget(level_label)
        self.level = QComboBox()
        self.level.setAccessibleName("Log level of the server")
        self.level.addItem("Server's default", "")
        for level in LEVELS:
            self.level.addItem(level.capitalize(), level)
        level_label.setBuddy(self.level)
        self.level.activated.connect(self._level_chosen)
        log_head.addWidget(self.level)
        layout.addLayout(log_head)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setAccessibleName("Log of the server")
        self.log.setMaximumHeight(96)
        self.log.setPlaceholderText("Nothing logged by the server yet.")
        layout.addWidget(self.log)

    # -- showing a server ----------------------------------------------------------------------

    def show_server(self, name: str, state: ServerState) -> None:
        """Show ``name`` (again: its status changed); details are read in the background."""
        if name != self.name:
            self.detach()
            self.name = name
            self.log.clear()
            spawn(self._follow_log(name), tell=self)
        self._show_sign_in(None, state)
        spawn(self._load(name), tell=self)

    async def _load(self, name: str) -> None:
        details = await self.engine.mcp_servers.details(name)
        if details is not None and name == self.name:
            self._show(details)

    async def _follow_log(self, name: str) -> None:
        entries = await self.engine.mcp_servers.log(name)
        unsubscribe = await self.engine.mcp_servers.subscribe_log(name, self._logged)
        if name != self.name:
            unsubscribe()
            return
        self._unsubscribe_log = unsubscribe
        self.log.setPlainText("\n".join(log_line(e) for e in entries))

    def _logged(self, entry: LogEntry) -> None:
        self.log.appendPlainText(log_line(entry))

    def _show(self, details: ServerDetails) -> None:
        protocol = f" · protocol {details.protocol_version}" if details.protocol_version else ""
        capabilities = ", ".join(details.capabilities) if details.capabilities else "— (start it to see)"
        counts = " · ".join(
            (
                count(details.tools, "tool"),
                count(details.prompts, "prompt"),
                count(details.resources, "resource"),
            )
        )
        self.facts.setText(
            f"Transport: {details.transport}{protocol}\nCapabilities: {capabilities}\n{counts}"
        )
        self.instructions.setPlainText(details.instructions)
        self.instructions_title.setVisible(bool(details.instructions))
        self.instructions.setVisible(bool(details.instructions))
        self.level.setCurrentIndex(max(0, self.level.findData(details.log_level)))
        self.level.setEnabled(details.status is ServerStatus.READY and "logging" in details.capabilities)
        self._show_sign_in(details, None)

    def _show_sign_in(self, details: ServerDetails | None, state: ServerState | None) -> None:
        if state is not None:
            self._error = state.error
        if details is None:
            return
        self.sign_row.setVisible(details.remote)
        self.sign_in_button.setEnabled(not self._signing_in)
        self.sign_out_button.setEnabled(details.signed_in and not self._signing_in)
        if self._signing_in:
            return
        if details.signed_in:
            self.sign_state.setText("Signed in.")
        elif NEEDS_SIGN_IN in self._error:
            self.sign_state.setText(f"{self.name} {NEEDS_SIGN_IN}.")
        else:
            self.sign_state.setText("Not signed in.")

    # -- actions -------------------------------------------------------------------------------

    def sign_in(self) -> None:
        name = self.name
        self._signing_in = True
        self.sign_in_button.setEnabled(False)
        self.sign_out_button.setEnabled(False)
        self.sign_state.setText("Waiting for you to sign in in the browser…")

        def ended(_result: object = None) -> None:
            self._signing_in = False
            self._error = ""
            if name == self.name:
                spawn(self._load(name), tell=self)

        spawn(
            self.engine.mcp_servers.sign_in(name),
            tell=self,
            on_done=ended,
            on_failed=ended,
            context=f"Not signed in to {name}",
        )

    def sign_out(self) -> None:
        name = self.name
        spawn(
            self.engine.mcp_servers.sign_out(name),
            tell=self,
            on_done=lambda _state: self._reload(name),
            context=f"Not signed out of {name}",
        )

    def _reload(self, name: str) -> None:
        if name == self.name:
            spawn(self._load(name), tell=self)

    def _level_chosen(self, _index: int) -> None:
        level = self.level.currentData()
        if level:
            spawn(
                self.engine.mcp_servers.set_log_level(self.name, level),
                tell=self,
                context="Log level not set",
            )

    def detach(self) -> None:
        if self._unsubscribe_log is not None:
            self._unsubscribe_log()
            self._unsubscribe_log = None
