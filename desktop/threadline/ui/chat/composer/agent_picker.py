"""The composer's agent picker, and what binds it to a session.

``AgentPicker`` is a combo box of the agents (typing a name selects it, as in any
list), drawn flat like the model picker beside it (``#AgentPicker`` in the theme,
docs/ui-layout.md), and a "Use new settings" button that shows only when the session's agent
was edited after the session pinned it: a session keeps the settings it started
with until the person takes the new ones (docs/design.md §1, "Agents").

``AgentBinding`` fills the picker from the engine, switches the session's agent
when the person picks one (the engine records a marker in the conversation), and
follows the engine's ``AgentChanged`` events: a switch made elsewhere, an edited
agent (the offer), a deleted one (the ``notice`` callback tells the tab).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPushButton, QWidget

from threadline.core.config import DEFAULT_AGENT_ID, AgentConfig
from threadline.engine.api import EngineApi, LiveConversationApi
from threadline.engine.events import AgentChanged, ConversationEvent
from threadline.ui.common.tasks import LogOnly, spawn

log = logging.getLogger("threadline.ui.chat.composer.agent_picker")

USE_NEW_SETTINGS = "Use new settings"


class _ShrinkingCombo(QComboBox):
    """As wide as the agent's name when there is room, down to 64 px (elided) when there is not:
    the composer's row must not set the chat pane's minimum width."""

    opening = Signal()
    """The list is about to show: a moment to read the agents again (another process may have
    added one)."""

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), 64), hint.height())

    def showPopup(self) -> None:
        self.opening.emit()
        super().showPopup()


class AgentPicker(QWidget):
    """Pick the session's agent; ``agentChosen(id)`` when the person picks another one."""

    agentChosen = Signal(str)
    newSettingsWanted = Signal()
    listWanted = Signal()
    """The person opened the list: the agents are read again."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.combo = _ShrinkingCombo()
        self.combo.setObjectName("AgentPicker")
        self.combo.setAccessibleName("Agent")
        self.combo.setToolTip("Agent for this conversation: its instructions, model, parameters and tools")
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.combo.activated.connect(self._activated)
        self.combo.opening.connect(self.listWanted)
        layout.addWidget(self.combo)
        self.update_button = QPushButton(USE_NEW_SETTINGS)
        self.update_button.setObjectName("FlatButton")
        self.update_button.setToolTip(
            "This agent was edited after the chat started. Use its new settings from the next message on."
        )
        self.update_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.update_button.clicked.connect(self.newSettingsWanted)
        self.update_button.hide()
        layout.addWidget(self.update_button)
        self._current = ""

    def set_agents(self, agents: list[AgentConfig], current: str) -> None:
        listed = [(self.combo.itemText(i), self.combo.itemData(i)) for i in range(self.combo.count())]
        if listed != [(agent.name, agent.id) for agent in agents]:  # an open list is not reset for nothing
            self.combo.blockSignals(True)
            self.combo.clear()
            for agent in agents:
                self.combo.addItem(agent.name, agent.id)
            self.combo.blockSignals(False)
        self.set_current(current)

    def set_current(self, agent_id: str) -> None:
        self._current = agent_id or DEFAULT_AGENT_ID
        index = self.combo.findData(self._current)
        self.combo.setCurrentIndex(max(0, index))

    def current_name(self) -> str:
        return self.combo.currentText()

    def set_update_offered(self, offered: bool) -> None:
        self.update_button.setVisible(offered)

    def set_busy(self, busy: bool) -> None:
        """No switch while a reply runs: a switch applies from the next request."""
        self.combo.setEnabled(not busy)
        self.update_button.setEnabled(not busy)

    def _activated(self, index: int) -> None:
        agent_id = str(self.combo.itemData(index) or "")
        if agent_id and agent_id != self._current:
            self.agentChosen.emit(agent_id)


class AgentBinding(QObject):
    """Keeps one tab's picker and the engine's view of the session's agent in step."""

    changed = Signal()
    """The agent's name (``agent_name``) changed."""

    def __init__(
        self,
        engine: EngineApi,
        live: LiveConversationApi,
        picker: AgentPicker,
        *,
        notice: Callable[[str], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._engine = engine
        self._live = live
        self._picker = picker
        self._notice = notice
        self.agent_name = ""
        self.agent_id = live.info.agent_id or DEFAULT_AGENT_ID
        picker.agentChosen.connect(self._chosen)
        picker.newSettingsWanted.connect(self._use_new_settings)
        picker.listWanted.connect(self.reload)
        self._unsubscribe: Callable[[], None] | None = live.subscribe(self._event)
        self.reload()

    def reload(self) -> None:
        """Read the agents and the session's agent again (a tab opening, the agent list edited)."""

        async def read() -> tuple[list[AgentConfig], bool, AgentConfig]:
            agents = await self._engine.agents.list_agents()
            state = await self._engine.agents.session_agent(self._live.session_id)
            return agents, state.update_available, state.agent

        spawn(read(), tell=LogOnly("agents not read", logging.INFO), on_done=self._loaded)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _loaded(self, result: tuple[list[AgentConfig], bool, AgentConfig]) -> None:
        if self._unsubscribe is None:
            return
        agents, offered, agent = result
        self._picker.set_agents(agents, agent.id)
        self._picker.set_update_offered(offered)
        self._set_agent(agent)

    def _set_agent(self, agent: AgentConfig) -> None:
        self.agent_id = agent.id
        self._picker.set_current(agent.id)
        if agent.name != self.agent_name:
            self.agent_name = agent.name
            self.changed.emit()

    def _event(self, event: ConversationEvent) -> None:
        if not isinstance(event, AgentChanged):
            return
        if self._picker.combo.findData(event.agent.id) < 0:
            self.reload()  # an agent this tab has not listed yet
        self._set_agent(event.agent)
        self._picker.set_update_offered(event.update_available)
        if event.notice:
            self._notice(event.notice)

    def _chosen(self, agent_id: str) -> None:
        spawn(
            self._engine.agents.set_session_agent(self._live.session_id, agent_id),
            tell=self,
            on_failed=lambda _err: self._picker.set_current(self.agent_id),
            context="Could not switch the agent",
            session_id=self._live.session_id,
        )

    def _use_new_settings(self) -> None:
        spawn(
            self._engine.agents.use_agent_settings(self._live.session_id),
            tell=self,
            context="Could not use the agent's new settings",
            session_id=self._live.session_id,
        )
