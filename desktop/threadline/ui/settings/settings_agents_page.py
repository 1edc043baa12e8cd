"""Settings → Agents: every agent, and one agent's settings, tools and sticky context.

The list on the left holds the agents (the default one first); New, Duplicate,
Delete (after a confirmation), Import… and Export… act on it. The right side edits
the selected agent: its name, instructions, provider and model, and parameters on
the first tab (saved with Save); its tools and approval rules on the second, which
is the Tools page itself pointed at this agent (saved as they change, like there);
its sticky context on the third and its knowledge bases on the fourth (both saved with Save).

Editing an agent changes the chats that start after it; a chat that already runs
with the agent keeps its settings and offers the new ones in its composer.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from threadline.core.config import DEFAULT_AGENT_ID, AgentConfig
from threadline.core.knowledge import AttachScope
from threadline.engine.api import EngineApi
from threadline.engine.errors import EngineError
from threadline.ui.common.message_bridge import UserMessage
from threadline.ui.common.sticky_context_editor import StickyContextEditor
from threadline.ui.common.tasks import spawn
from threadline.ui.knowledge.knowledge_picker import KnowledgePicker
from threadline.ui.settings.settings_tools_page import ToolsPage
from threadline.ui.settings.thinking_fields import ThinkingFields

log = logging.getLogger("threadline.ui.settings_agents")

NO_PROVIDER = "(the chat's own model)"
MODEL_DEFAULT = "model default"


def _optional_spin(low: float, high: float, step: float) -> QDoubleSpinBox:
    """A spin box whose lowest value reads "model default" (stored as ``None``)."""
    spin = QDoubleSpinBox()
    spin.setDecimals(2)
    spin.setRange(low - step, high)
    spin.setSingleStep(step)
    spin.setSpecialValueText(MODEL_DEFAULT)
    spin.setValue(low - step)
    return spin


def _spin_value(spin: QDoubleSpinBox) -> float | None:
    return None if spin.value() <= spin.minimum() else round(spin.value(), 2)


class AgentSettingsForm(QWidget):
    """Name, system prompt, provider and model, temperature, top-p and maximum output tokens."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = QFormLayout(self)
        form.setContentsMargins(8, 10, 8, 8)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.name = QLineEdit()
        self.name.setAccessibleName("Agent name")
        form.addRow("Name", self.name)
        self.system_prompt = QPlainTextEdit()
        self.system_prompt.setAccessibleName("System prompt")
        self.system_prompt.setPlaceholderText("Instructions the model sees at the start of every request")
        self.system_prompt.setMinimumHeight(120)
        self.system_prompt.setTabChangesFocus(True)
        form.addRow("System prompt", self.system_prompt)
        self.provider = QComboBox()
        self.provider.setAccessibleName("Provider")
        form.addRow("Provider", self.provider)
        self.model = QLineEdit()
        self.model.setAccessibleName("Model")
        self.model.setPlaceholderText("a model of that provider, e.g. gpt-4o-mini")
        form.addRow("Model", self.model)
        self.temperature = _optional_spin(0.0, 2.0, 0.1)
        self.temperature.setAccessibleName("Temperature")
        form.addRow("Temperature", self.temperature)
        self.top_p = _optional_spin(0.0, 1.0, 0.05)
        self.top_p.setAccessibleName("Top-p")
        form.addRow("Top-p", self.top_p)
        self.max_tokens = QSpinBox()
        self.max_tokens.setAccessibleName("Maximum output tokens")
        self.max_tokens.setRange(0, 1_000_000)
        self.max_tokens.setSingleStep(256)
        self.max_tokens.setSpecialValueText(MODEL_DEFAULT)
        form.addRow("Maximum output tokens", self.max_tokens)
        self.thinking = ThinkingFields(form)

    def set_providers(self, names: list[str]) -> None:
        current = self.provider.currentData()
        self.provider.clear()
        self.provider.addItem(NO_PROVIDER, "")
        for name in names:
            self.provider.addItem(name, name)
        self.provider.setCurrentIndex(max(0, self.provider.findData(current)))

    def show_agent(self, agent: AgentConfig) -> None:
        self.name.setText(agent.name)
        self.system_prompt.setPlainText(agent.system_prompt)
        if agent.provider and self.provider.findData(agent.provider) < 0:
            self.provider.addItem(f"{agent.provider} (removed)", agent.provider)
        self.provider.setCurrentIndex(max(0, self.provider.findData(agent.provider)))
        self.model.setText(agent.model)
        self.temperature.setValue(
            self.temperature.minimum() if agent.temperature is None else agent.temperature
        )
        self.top_p.setValue(self.top_p.minimum() if agent.top_p is None else agent.top_p)
        self.max_tokens.setValue(agent.max_tokens or 0)
        self.thinking.show(agent)

    def applied_to(self, agent: AgentConfig) -> AgentConfig:
        """``agent`` with what the form says."""
        provider = str(self.provider.currentData() or "")
        return replace(
            self.thinking.applied_to(agent),
            name=self.name.text().strip(),
            system_prompt=self.system_prompt.toPlainText(),
            provider=provider,
            model=self.model.text().strip() if provider else "",
            temperature=_spin_value(self.temperature),
            top_p=_spin_value(self.top_p),
            max_tokens=self.max_tokens.value() or None,
        )


class AgentsPage(QWidget):
    """The Agents page (see the module doc)."""

    agentsChanged = Signal()

    def __init__(self, engine: EngineApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("AgentsPage")
        self.engine = engine
        self.agents: list[AgentConfig] = []
        outer = QHBoxLayout(self)
        outer.setContentsMargins(12, 12, 12, 12)
        outer.setSpacing(12)

        left = QVBoxLayout()
        self.list = QListWidget()
        self.list.setObjectName("AgentList")
        self.list.setAccessibleName("Agents")
        self.list.setMaximumWidth(230)
        self.list.currentRowChanged.connect(self._selected)
        left.addWidget(self.list, 1)
        self.new_button = self._button("New", "Make a new agent", self.new_agent)
        self.duplicate_button = self._button("Duplicate", "Copy the selected agent", self.duplicate)
        self.delete_button = self._button("Delete", "Delete the selected agent", self.delete)
        self.import_button = self._button("Import…", "Add agents from a JSON file", self.import_file)
        self.export_button = self._button("Export…", "Save every agent to a JSON file", self.export_file)
        for row in (
            (self.new_button, self.duplicate_button, self.delete_button),
            (self.import_button, self.export_button),
        ):
            line = QHBoxLayout()
            for button in row:
                line.addWidget(button)
            left.addLayout(line)
        outer.addLayout(left)

        right = QVBoxLayout()
        self.tabs = QTabWidget()
        self.form = AgentSettingsForm()
        self.tabs.addTab(self.form, "Settings")
        self.tools = ToolsPage(engine)
        self.tabs.addTab(self.tools, "Tools and approval")
        self.context = StickyContextEditor(show_share=True)
        self.tabs.addTab(self.context, "Sticky context")
        self.knowledge = KnowledgePicker("Every chat with this agent searches the ticked knowledge bases.")
        knowledge_tab = QWidget()
        knowledge_layout = QVBoxLayout(knowledge_tab)
        knowledge_layout.addWidget(self.knowledge)
        knowledge_layout.addStretch(1)
        self.tabs.addTab(knowledge_tab, "Knowledge")
        right.addWidget(self.tabs, 1)
        bottom = QHBoxLayout()
        self.message = QLabel()
        self.message.setObjectName("Hint")
        self.message.setWordWrap(True)
        bottom.addWidget(self.message, 1)
        self.save_button = QPushButton("Save")
        self.save_button.setObjectName("PrimaryButton")
        self.save_button.setToolTip("Save this agent's settings and sticky context")
        self.save_button.clicked.connect(self.save)
        bottom.addWidget(self.save_button)
        right.addLayout(bottom)
        outer.addLayout(right, 1)
        self._update_buttons()

    def _button(self, text: str, tip: str, slot: object) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName("SecondaryButton")
        button.setToolTip(tip)
        button.clicked.connect(slot)
        return button

    # -- loading ----------------------------------------------------------------------------

    async def load(self, select: str | None = None) -> None:
        providers = [p.name for p in await self.engine.providers.list_providers()]
        self.form.set_providers(providers)
        self.agents = await self.engine.agents.list_agents()
        keep = select or (self.current.id if self.current else DEFAULT_AGENT_ID)
        self.list.blockSignals(True)
        self.list.clear()
        for agent in self.agents:
            item = QListWidgetItem(agent.name)
            item.setData(Qt.ItemDataRole.UserRole, agent.id)
            self.list.addItem(item)
        self.list.blockSignals(False)
        index = next((i for i, a in enumerate(self.agents) if a.id == keep), 0)
        self.list.setCurrentRow(index)
        self._selected(index)

    @property
    def current(self) -> AgentConfig | None:
        row = self.list.currentRow()
        return self.agents[row] if 0 <= row < len(self.agents) else None

    def _selected(self, row: int) -> None:
        agent = self.current
        if agent is None:
            return
        self.form.show_agent(agent)
        self.context.set_value(agent.context, agent.context_share)
        self.tools.agent_id = agent.id
        spawn(self.tools.load(), tell=self, context="Tools not shown")
        spawn(
            self.knowledge.load(self.engine.knowledge, AttachScope.AGENT, agent.id),
            tell=self,
            context="Knowledge bases not listed",
        )
        self._update_buttons()

    def _update_buttons(self) -> None:
        agent = self.current
        self.delete_button.setEnabled(agent is not None and agent.id != DEFAULT_AGENT_ID)
        self.delete_button.setToolTip(
            "The default agent cannot be deleted"
            if agent is not None and agent.id == DEFAULT_AGENT_ID
            else "Delete the selected agent"
        )
        self.duplicate_button.setEnabled(agent is not None)
        self.save_button.setEnabled(agent is not None)

    def _say(self, text: str) -> None:
        self.message.setText(text)

    def show_user_message(self, message: UserMessage) -> None:
        """This page's line, for the settings dialog (docs/ui-layout.md, "Telling the user")."""
        self._say(message.text)

    def _reloaded(self, text: str, select: str | None = None) -> None:
        async def run() -> None:
            await self.load(select)
            self._say(text)
            self.agentsChanged.emit()

        spawn(run(), tell=self)

    # -- actions ----------------------------------------------------------------------------

    def save(self) -> None:
        agent = self.current
        if agent is None:
            return

        async def run() -> AgentConfig:
            stored = await self.engine.agents.get_agent(
                agent.id
            )  # tools and rules may have changed meanwhile
            edited = self.form.applied_to(stored)
            edited = replace(edited, context=self.context.value(), context_share=self.context.share())
            await self.engine.agents.save_agent(edited)
            await self.knowledge.apply(self.engine.knowledge, AttachScope.AGENT, agent.id)
            return edited

        spawn(
            run(),
            on_done=lambda saved: self._reloaded(f"Saved {saved.name}.", saved.id),
            tell=self,
            context="Not saved",
        )

    def new_agent(self) -> None:
        async def run() -> AgentConfig:
            name = await _free_name(self.engine, "New agent")
            return await self.engine.agents.create_agent(AgentConfig(id="", name=name))

        spawn(
            run(),
            on_done=lambda agent: self._created(agent, "Name the new agent and give it instructions."),
            tell=self,
        )

    def _created(self, agent: AgentConfig, text: str) -> None:
        async def run() -> None:
            await self.load(agent.id)
            self._say(text)
            self.tabs.setCurrentWidget(self.form)
            self.form.name.setFocus()
            self.form.name.selectAll()
            self.agentsChanged.emit()

        spawn(run(), tell=self)

    def duplicate(self) -> None:
        agent = self.current
        if agent is None:
            return
        spawn(
            self.engine.agents.duplicate_agent(agent.id),
            on_done=lambda copy: self._created(copy, f"Made {copy.name}."),
            tell=self,
        )

    def delete(self) -> None:
        agent = self.current
        if agent is None or agent.id == DEFAULT_AGENT_ID:
            return
        answer = QMessageBox.question(
            self,
            "Delete agent",
            f"Delete the agent {agent.name}? Its chats will use the default agent from now on, "
            "and each of them will say so.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return

        def done(moved: int) -> None:
            plural = "s" if moved != 1 else ""
            chats = f"{moved} chat{plural} now use Default" if moved else "no chats used it"
            self._reloaded(f"Deleted {agent.name}; {chats}.", DEFAULT_AGENT_ID)

        spawn(
            self.engine.agents.delete_agent(agent.id),
            on_done=done,
            tell=self,
        )

    def export_file(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export agents", "agents.json", "JSON files (*.json)")
        if not path:
            return

        async def run() -> None:
            text = await self.engine.agents.export_agents()
            try:
                await asyncio.to_thread(Path(path).write_text, text, encoding="utf-8")
            except OSError as err:
                raise EngineError(f"{Path(path).name} could not be written ({err.strerror}).") from err

        spawn(
            run(),
            on_done=lambda _: self._say(f"Exported {len(self.agents)} agents to {Path(path).name}."),
            tell=self,
            context="Not exported",
        )

    def import_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import agents", "", "JSON files (*.json);;All files (*)")
        if not path:
            return

        async def run() -> list[AgentConfig]:
            try:
                text = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
            except (OSError, UnicodeDecodeError) as err:
                raise EngineError(f"{Path(path).name} cannot be read as a text file.") from err
            return await self.engine.agents.import_agents(text)

        def done(agents: list[AgentConfig]) -> None:
            names = ", ".join(a.name for a in agents)
            self._reloaded(f"Imported {names}.", agents[0].id if agents else None)

        spawn(run(), tell=self, on_done=done, context="Not imported")


async def _free_name(engine: EngineApi, name: str) -> str:
    taken = {a.name.casefold() for a in await engine.agents.list_agents()}
    candidate, number = name, 2
    while candidate.casefold() in taken:
        candidate, number = f"{name} {number}", number + 1
    return candidate
