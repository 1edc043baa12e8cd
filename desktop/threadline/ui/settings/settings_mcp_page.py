"""Settings → MCP servers: the servers the user configured, with their live status and tools.

The list follows the server manager's status changes as they happen (stopped,
starting, ready, failed with the last error). A selected server can be started,
restarted or stopped, edited, removed, and its tools offered to the assistant or
not — which adds or removes ``name/*`` in the agent's ``enabled_tools``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from threadline.core.config import AgentConfig
from threadline.engine.api import EngineApi
from threadline.tools.mcp.config import McpServerConfig, Transport
from threadline.tools.mcp.state import ServerState, ServerStatus
from threadline.ui.common.tasks import spawn
from threadline.ui.common.theme import LIGHT, ThemeColors
from threadline.ui.settings.mcp_server_editor import McpServerEditor

log = logging.getLogger("threadline.ui.settings_mcp")

STATUS_TEXT = {
    ServerStatus.STOPPED: "Stopped",
    ServerStatus.STARTING: "Starting…",
    ServerStatus.READY: "Ready",
    ServerStatus.FAILED: "Failed",
}


def offer_pattern(name: str) -> str:
    return f"{name}/*"


class McpServersPage(QWidget):
    agentChanged = Signal()

    def __init__(self, engine: EngineApi, colors: ThemeColors = LIGHT, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.colors = colors
        self.configs: dict[str, McpServerConfig] = {}
        self.states: dict[str, ServerState] = {}
        self.agent: AgentConfig | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._filling = False

        layout = QHBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 16)
        layout.setSpacing(14)
        left = QVBoxLayout()
        self.list = QListWidget()
        self.list.setObjectName("ProviderList")
        self.list.setAccessibleName("MCP servers")
        self.list.setMinimumWidth(190)
        self.list.currentItemChanged.connect(lambda *_: self._show_selected())
        left.addWidget(self.list, 1)
        self.add_button = QPushButton("Add server…")
        self.add_button.setObjectName("SecondaryButton")
        self.add_button.clicked.connect(self.add_server)
        left.addWidget(self.add_button)
        self.install_button = QPushButton("Install extension…")
        self.install_button.setObjectName("SecondaryButton")
        self.install_button.setToolTip("Install an MCP bundle (.mcpb): a server packed with its settings")
        self.install_button.clicked.connect(self.install_extension)
        left.addWidget(self.install_button)
        layout.addLayout(left)

        right = QVBoxLayout()
        right.setSpacing(8)
        self.title = QLabel()
        self.title.setObjectName("SectionTitle")
        right.addWidget(self.title)
        self.where = QLabel()
        self.where.setObjectName("Hint")
        self.where.setWordWrap(True)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        right.addWidget(self.where)
        self.status = QLabel()
        self.status.setObjectName("ServerStatus")
        right.addWidget(self.status)
        self.error = QLabel()
        self.error.setObjectName("FormError")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        right.addWidget(self.error)
        run_row = QHBoxLayout()
        self.start_button = QPushButton("Start")
        self.restart_button = QPushButton("Restart")
        self.stop_button = QPushButton("Stop")
        for b, slot in (
            (self.start_button, self.start),
            (self.restart_button, self.restart),
            (self.stop_button, self.stop),
        ):
            b.setObjectName("SecondaryButton")
            b.clicked.connect(slot)
            run_row.addWidget(b)
        run_row.addStretch(1)
        right.addLayout(run_row)
        self.offer = QCheckBox("Offer this server's tools to the assistant")
        self.offer.toggled.connect(self._offer_toggled)
        right.addWidget(self.offer)
        tools_title = QLabel("Tools")
        tools_title.setObjectName("SubTitle")
        right.addWidget(tools_title)
        self.tools = QListWidget()
        self.tools.setObjectName("ProviderList")
        self.tools.setAccessibleName("Tools of the server")
        self.tools.setWordWrap(True)
        right.addWidget(self.tools, 1)
        edit_row = QHBoxLayout()
        edit_row.addStretch(1)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("SecondaryButton")
        self.remove_button.clicked.connect(self.remove)
        self.edit_button = QPushButton("Edit…")
        self.edit_button.setObjectName("SecondaryButton")
        self.edit_button.clicked.connect(self.edit)
        edit_row.addWidget(self.remove_button)
        edit_row.addWidget(self.edit_button)
        right.addLayout(edit_row)
        self.message = QLabel()
        self.message.setObjectName("Hint")
        self.message.setWordWrap(True)
        right.addWidget(self.message)
        self.details = [
            self.title,
            self.where,
            self.status,
            self.error,
            self.start_button,
            self.restart_button,
            self.stop_button,
            self.offer,
            tools_title,
            self.tools,
            self.remove_button,
            self.edit_button,
        ]
        self.empty = QLabel(
            "No MCP servers yet.\n\nAn MCP server gives the assistant more tools: a local "
            "program (for example mcp-server-git) or a remote URL. Add one to start."
        )
        self.empty.setObjectName("Hint")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        right.addWidget(self.empty)
        layout.addLayout(right, 1)
        self._show_selected()

    # -- loading and live status ------------------------------------------------------------------

    async def load(self) -> None:
        servers = self.engine.tool_servers
        self.configs = {c.name: c for c in await servers.list_servers()}
        self.states = {s.name: s for s in await servers.states()}
        self.agent = await self.engine.agents.get_agent()
        if self._unsubscribe is None:
            self._unsubscribe = servers.subscribe(self._state_changed)
        self._fill_list()

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _state_changed(self, state: ServerState) -> None:
        if state.name not in self.configs:
            return
        self.states[state.name] = state
        item = self._item(state.name)
        if item is not None:
            self._decorate(item, state)
        if self.current_name() == state.name:
            self._show_selected()

    def set_colors(self, colors: ThemeColors) -> None:
        self.colors = colors
        for i in range(self.list.count()):
            item = self.list.item(i)
            state = self.states.get(item.data(Qt.ItemDataRole.UserRole))
            if state is not None:
                self._decorate(item, state)
        self._show_selected()

    def _fill_list(self, select: str | None = None) -> None:
        select = select or self.current_name()
        self.list.blockSignals(True)
        self.list.clear()
        for name in self.configs:
            item = QListWidgetItem(name)
            item.setData(Qt.ItemDataRole.UserRole, name)
            self.list.addItem(item)
            self._decorate(item, self.states.get(name) or ServerState(name, ServerStatus.STOPPED))
            if name == select:
                self.list.setCurrentItem(item)
        if self.list.currentItem() is None and self.list.count():
            self.list.setCurrentRow(0)
        self.list.blockSignals(False)
        self._show_selected()

    def _item(self, name: str) -> QListWidgetItem | None:
        for i in range(self.list.count()):
            if self.list.item(i).data(Qt.ItemDataRole.UserRole) == name:
                return self.list.item(i)
        return None

    def _status_colour(self, status: ServerStatus) -> str:
        c = self.colors
        return {
            ServerStatus.READY: c.success,
            ServerStatus.STARTING: c.warning,
            ServerStatus.FAILED: c.error_text if c.dark else "#c0392b",
        }.get(status, c.muted)

    def _decorate(self, item: QListWidgetItem, state: ServerState) -> None:
        item.setIcon(self._dot(self._status_colour(state.status)))
        config = self.configs.get(state.name)
        disabled = config is not None and not config.enabled
        item.setToolTip(f"{state.name}: {STATUS_TEXT[state.status]}" + (" (disabled)" if disabled else ""))

    def _dot(self, colour: str) -> QIcon:
        ratio = self.devicePixelRatioF()
        pm = QPixmap(int(10 * ratio), int(10 * ratio))
        pm.setDevicePixelRatio(ratio)
        pm.fill(Qt.GlobalColor.transparent)
        p = QPainter(pm)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(colour))
        p.drawEllipse(QRectF(1, 1, 8, 8))
        p.end()
        return QIcon(pm)

    # -- the selected server ------------------------------------------------------------------------

    def current_name(self) -> str | None:
        item = self.list.currentItem()
        name = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return name if isinstance(name, str) else None

    def _show_selected(self) -> None:
        name = self.current_name()
        config = self.configs.get(name) if name else None
        for w in self.details:
            w.setVisible(config is not None)
        self.empty.setVisible(not self.configs)
        if config is None:
            return
        state = self.states.get(config.name) or ServerState(config.name, ServerStatus.STOPPED)
        self.title.setText(config.name)
        if config.transport is Transport.STDIO:
            self.where.setText(" ".join([config.command, *config.args]))
        else:
            self.where.setText(config.url)
        parts = [STATUS_TEXT[state.status]]
        if state.server_info:
            parts.append(state.server_info)
        if state.status is ServerStatus.READY or state.tools:
            parts.append(f"{len(state.tools)} tool{'s' if len(state.tools) != 1 else ''}")
        if state.restarts:
            parts.append(f"restarted {state.restarts}×")
        if not config.enabled:
            parts.append("disabled")
        self.status.setText("  ·  ".join(parts))
        self.status.setStyleSheet(f"color: {self._status_colour(state.status)}; font-weight: 600;")
        self.error.setText(f"Last error: {state.error}" if state.error else "")
        self.error.setVisible(bool(state.error))
        running = state.status in (ServerStatus.READY, ServerStatus.STARTING)
        self.start_button.setEnabled(not running and config.enabled)
        self.restart_button.setEnabled(config.enabled and state.status is not ServerStatus.STARTING)
        self.stop_button.setEnabled(running)
        self._filling = True
        try:
            offered = self.agent is not None and offer_pattern(config.name) in self.agent.enabled_tools
            self.offer.setChecked(offered)
        finally:
            self._filling = False
        self.tools.clear()
        for tool in state.tools:
            item = QListWidgetItem(tool.policy_name)
            description = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
            if description:
                item.setText(f"{tool.policy_name}  —  {description}")
            item.setToolTip(tool.description or tool.policy_name)
            item.setData(Qt.ItemDataRole.UserRole, tool.policy_name)
            self.tools.addItem(item)
        if not state.tools:
            hint = QListWidgetItem(
                "Start the server to see its tools."
                if state.status is not ServerStatus.READY
                else "This server offers no tools."
            )
            hint.setFlags(Qt.ItemFlag.NoItemFlags)
            self.tools.addItem(hint)

    # -- actions ---------------------------------------------------------------------------------------

    def _run(self, verb: str, action: Callable[[str], object]) -> None:
        name = self.current_name()
        if not name:
            return
        self.message.setText("")

        async def do() -> None:
            result = action(name)
            if hasattr(result, "__await__"):
                await result

        spawn(do(), tell=self, context=f"Could not {verb} {name}")

    def start(self) -> None:
        self._run("start", self.engine.tool_servers.start)

    def restart(self) -> None:
        self._run("restart", self.engine.tool_servers.restart)

    def stop(self) -> None:
        self._run("stop", self.engine.tool_servers.stop)

    def add_server(self) -> None:
        self._open_editor(None)

    def install_extension(self) -> None:
        from threadline.ui.settings.extension_install import choose_and_install

        choose_and_install(
            self,
            self.engine,
            tell=self.message.setText,
            on_installed=lambda record: spawn(self._reload(record.name), tell=self),
        )

    async def _reload(self, select: str | None) -> None:
        await self.load()
        self._fill_list(select=select)

    def edit(self) -> None:
        name = self.current_name()
        if name and name in self.configs:
            self._open_editor(self.configs[name])

    def _open_editor(self, config: McpServerConfig | None) -> None:
        editor = McpServerEditor(self.engine, config, self)
        editor.set_existing_names(set(self.configs))
        editor.accepted.connect(lambda: self._saved(editor, config))
        self.editor = editor
        editor.open()

    def _saved(self, editor: McpServerEditor, previous: McpServerConfig | None) -> None:
        saved = editor.saved
        if saved is None:
            return

        async def after() -> None:
            if previous is not None and previous.name != saved.name:
                await self._rename_offer(previous.name, saved.name)
            await self.load()
            self._fill_list(select=saved.name)

        self.message.setText(f"Saved {saved.name}.")
        spawn(after(), tell=self)

    def remove(self) -> None:
        name = self.current_name()
        if not name:
            return
        answer = QMessageBox.question(
            self,
            "Remove the server?",
            f"Remove the MCP server “{name}”? Its tools will no longer be offered to the assistant.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        self.remove_now(name)

    def remove_now(self, name: str) -> None:
        async def do() -> None:
            await self.engine.extensions.remove(name)  # an extension's files and settings go too
            await self._rename_offer(name, None)
            await self.load()

        def done(_r: object) -> None:
            self.message.setText(f"Removed {name}.")
            self.agentChanged.emit()

        spawn(do(), tell=self, on_done=done, context="Not removed")

    async def _rename_offer(self, old: str, new: str | None) -> None:
        agent = await self.engine.agents.get_agent()
        pattern = offer_pattern(old)
        if pattern not in agent.enabled_tools:
            return
        tools = [p for p in agent.enabled_tools if p != pattern]
        if new is not None:
            tools.append(offer_pattern(new))
        await self.engine.agents.save_agent(replace(agent, enabled_tools=tuple(tools)))

    def _offer_toggled(self, on: bool) -> None:
        name = self.current_name()
        if self._filling or not name:
            return
        pattern = offer_pattern(name)

        async def do() -> None:
            agent = await self.engine.agents.get_agent()
            tools = [p for p in agent.enabled_tools if p != pattern]
            if on:
                tools.append(pattern)
            updated = replace(agent, enabled_tools=tuple(tools))
            if updated != agent:
                await self.engine.agents.save_agent(updated)
            self.agent = updated

        def done(_r: object) -> None:
            self.message.setText(f"The assistant {'can now use' if on else 'no longer gets'} {name}'s tools.")
            self.agentChanged.emit()

        spawn(do(), tell=self, on_done=done, context="Not saved")
