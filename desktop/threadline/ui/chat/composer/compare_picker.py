"""The composer's "Compare" button: pick two to four models or agents to answer the next prompt at once.

A checkable menu of the models the model picker offers and, below them, the agents
(each answers with its own instructions, tools and model). With two or more ticked,
the button reads "Compare · 3" and the next Send goes to all of them
(``engine.turns.send_compare``); a fifth tick is refused (the entries grey out). The menu
stays open while entries are ticked (a click or Space ticks; Esc or a click outside
closes it), since picking two to four is one choice. "Stop comparing" unticks all. A
sent compare leaves the choice as it was, so the person can compare the next prompt too;
continuing with one of its replies ends comparing (the tab unticks all), so the next
prompt does not go to every model again.

``CompareAgents`` keeps the agent entries current: it reads the agents when the tab
opens and again each time the menu opens (one created in Settings meanwhile shows).
"""

from __future__ import annotations

import logging

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from threadline.core.compare import MAX_WORKERS, MIN_WORKERS, CompareTarget
from threadline.core.config import AgentConfig
from threadline.engine.api import EngineApi
from threadline.ui.chat.composer.model_catalog import ModelChoice
from threadline.ui.common.tasks import LogOnly, spawn

log = logging.getLogger("threadline.ui.chat.composer.compare_picker")


def agent_target(agent: AgentConfig) -> CompareTarget:
    """An agent's column: its own instructions, tools and model (``CompareRunner._worker_agent``)."""
    return CompareTarget(agent_id=agent.id, label=agent.name)


def agent_label(agent: AgentConfig) -> str:
    return f"{agent.name}  ·  agent"


class _TickingMenu(QMenu):
    """A menu whose checkable entries toggle without closing it; any other entry closes it."""

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        action = self.actionAt(event.position().toPoint())
        if action is not None and action.isCheckable() and action.isEnabled():
            action.trigger()  # toggles; the menu stays
            return
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        action = self.activeAction()
        ticks = event.key() in (Qt.Key.Key_Space, Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if ticks and action is not None and action.isCheckable() and action.isEnabled():
            action.trigger()
            return
        super().keyPressEvent(event)


class CompareButton(QToolButton):
    targetsChanged = Signal(object)  # tuple[CompareTarget, ...]: () when fewer than two are ticked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("FlatButton")
        self.setText("Compare")
        self.setAccessibleName("Compare models or agents")
        self.setToolTip(
            f"Send the next message to {MIN_WORKERS}–{MAX_WORKERS} models or agents at once, side by side"
        )
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setMinimumWidth(28)  # gives way on a narrow window rather than widening the chat's minimum
        self._menu = _TickingMenu(self)
        self.setMenu(self._menu)
        self._models: list[ModelChoice] = []
        self._agents: list[AgentConfig] = []
        self._ticked: list[CompareTarget] = []
        self._targets: dict[QAction, CompareTarget] = {}
        """The menu's entries and what each ticks."""
        self._stop: QAction | None = None
        self._rebuild()

    def targets(self) -> tuple[CompareTarget, ...]:
        """The ticked models and agents, when there are enough to compare; ``()`` otherwise."""
        if len(self._ticked) < MIN_WORKERS:
            return ()
        return tuple(self._ticked)

    def set_models(self, models: list[ModelChoice]) -> None:
        self._models = list(models)
        if models:
            known = {CompareTarget(m.provider, m.model) for m in models}
            self._ticked = [t for t in self._ticked if t.agent_id or t in known]
        self._rebuild()

    def set_agents(self, agents: list[AgentConfig]) -> None:
        """Offer ``agents`` below the models; a ticked agent that was deleted is unticked."""
        if [(a.id, a.name) for a in agents] == [(a.id, a.name) for a in self._agents]:
            return  # unchanged: leave an open menu alone
        self._agents = list(agents)
        known = {agent_target(a) for a in agents}
        ticked = [t for t in self._ticked if not t.agent_id or t in known]
        changed = ticked != self._ticked
        self._ticked = ticked
        self._rebuild()
        if changed:
            self.targetsChanged.emit(self.targets())

    def set_ticked(self, targets: tuple[CompareTarget, ...]) -> None:
        """Tick exactly ``targets`` (``/compare`` and tests)."""
        self._ticked = list(dict.fromkeys(targets))[:MAX_WORKERS]
        self._rebuild()
        self.targetsChanged.emit(self.targets())

    def clear(self) -> None:
        self.set_ticked(())

    def _rebuild(self) -> None:
        self._menu.clear()
        self._targets = {}
        title = self._menu.addAction(f"Answer with {MIN_WORKERS}–{MAX_WORKERS} models or agents at once")
        title.setEnabled(False)
        full = len(self._ticked) >= MAX_WORKERS
        entries = [(CompareTarget(m.provider, m.model), m.label) for m in self._models]
        if not self._models:
            empty = self._menu.addAction("No models yet — add a provider in Settings")
            empty.setEnabled(False)
        for target, label in entries:
            self._add_entry(target, label, full)
        if self._agents:
            self._menu.addSection("Agents")
            for agent in self._agents:
                self._add_entry(agent_target(agent), agent_label(agent), full)
        self._menu.addSeparator()
        self._stop = self._menu.addAction("Stop comparing")
        self._stop.triggered.connect(self.clear)
        self.setCheckable(True)
        self._show_ticks()

    def _add_entry(self, target: CompareTarget, label: str, full: bool) -> None:
        action = QAction(label, self._menu)
        action.setCheckable(True)
        action.setChecked(target in self._ticked)
        action.setEnabled(target in self._ticked or not full)
        action.toggled.connect(lambda on, target=target: self._toggle(target, on))
        self._menu.addAction(action)
        self._targets[action] = target

    def _toggle(self, target: CompareTarget, on: bool) -> None:
        if on and target not in self._ticked and len(self._ticked) < MAX_WORKERS:
            self._ticked.append(target)
        elif not on and target in self._ticked:
            self._ticked.remove(target)
        self._show_ticks()
        self.targetsChanged.emit(self.targets())

    def _show_ticks(self) -> None:
        """The open menu's entries as the ticks stand (the menu is not rebuilt under the mouse)."""
        full = len(self._ticked) >= MAX_WORKERS
        for action in self._menu.actions():
            target = self._targets.get(action)
            if target is not None:
                action.blockSignals(True)
                action.setChecked(target in self._ticked)
                action.blockSignals(False)
                action.setEnabled(target in self._ticked or not full)
            elif action is self._stop:
                action.setEnabled(bool(self._ticked))
        count = len(self._ticked)
        self.setText(f"Compare · {count}" if count >= MIN_WORKERS else "Compare")
        self.setChecked(count >= MIN_WORKERS)


class CompareAgents(QObject):
    """Reads the agents for a tab's Compare menu: when the tab opens, and as the menu opens."""

    def __init__(self, engine: EngineApi, button: CompareButton) -> None:
        super().__init__(button)
        self._engine = engine
        self._button = button
        menu = button.menu()
        if menu is not None:
            menu.aboutToShow.connect(self.reload)
        self.reload()

    def reload(self) -> None:
        spawn(
            self._engine.agents.list_agents(),
            on_done=self._loaded,
            tell=LogOnly("agents for Compare not read", logging.INFO),
        )

    def _loaded(self, agents: list[AgentConfig]) -> None:
        if shiboken6.isValid(self._button):
            self._button.set_agents(agents)
