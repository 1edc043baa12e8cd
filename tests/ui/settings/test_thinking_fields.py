"""The agent form's thinking switches, driven with the keyboard."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from threadline.core.config import AgentConfig
from threadline.ui.settings.settings_agents_page import AgentSettingsForm


def test_effort_and_budget_round_trip_through_the_form(qtbot: Any) -> None:
    form = AgentSettingsForm()
    qtbot.addWidget(form)
    form.show()
    agent = AgentConfig("a1", "Thinker", reasoning_effort="medium", thinking_budget=2048)
    form.show_agent(agent)
    fields = form.thinking
    assert fields.effort.currentText() == "Medium" and fields.budget.value() == 2048
    assert fields.effort.accessibleName() == "Reasoning effort"

    fields.effort.setFocus()
    qtbot.keyClick(fields.effort, Qt.Key.Key_Down)  # Medium → High
    fields.budget.setFocus()
    fields.budget.lineEdit().selectAll()
    qtbot.keyClicks(fields.budget, "8192")
    applied = form.applied_to(agent)
    assert (applied.reasoning_effort, applied.thinking_budget) == ("high", 8192)

    form.show_agent(AgentConfig("a2", "Plain"))
    assert fields.effort.currentText() == "Model default" and fields.budget.text() == "Off"
    applied = form.applied_to(AgentConfig("a2", "Plain"))
    assert (applied.reasoning_effort, applied.thinking_budget) == ("", None)
