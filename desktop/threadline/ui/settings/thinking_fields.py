"""The agent form's thinking switches: reasoning effort and Anthropic's thinking budget.

Two rows added to the agent form. "Reasoning effort" is sent as ``reasoning_effort`` to
OpenAI-compatible servers whose models take it (OpenAI's o-series and GPT-5, vLLM,
OpenRouter, DeepSeek…); "Model default" sends nothing. "Thinking budget" turns on
Anthropic's extended thinking with that many tokens to think (at least 1,024); "Off"
leaves it off. Each provider ignores the other's switch.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QComboBox, QFormLayout, QSpinBox

from threadline.core.config import AgentConfig
from threadline.core.reasoning import MIN_THINKING_BUDGET, REASONING_EFFORTS

EFFORT_DEFAULT = "Model default"
BUDGET_OFF = "Off"


class ThinkingFields:
    """The two rows, added to ``form``; ``show`` fills them, ``applied_to`` reads them."""

    def __init__(self, form: QFormLayout) -> None:
        self.effort = QComboBox()
        self.effort.setAccessibleName("Reasoning effort")
        self.effort.setToolTip(
            "How hard a reasoning model thinks before it answers (reasoning_effort), "
            "for OpenAI-compatible models that accept it."
        )
        self.effort.addItem(EFFORT_DEFAULT, "")
        for level in REASONING_EFFORTS:
            self.effort.addItem(level.capitalize(), level)
        form.addRow("Reasoning effort", self.effort)
        self.budget = QSpinBox()
        self.budget.setAccessibleName("Thinking budget in tokens")
        self.budget.setToolTip(
            "Anthropic models: tokens the model may spend thinking before it answers "
            f"(at least {MIN_THINKING_BUDGET:,}). Off: no extended thinking."
        )
        self.budget.setRange(MIN_THINKING_BUDGET - 1, 1_000_000)
        self.budget.setSingleStep(1024)
        self.budget.setSpecialValueText(BUDGET_OFF)
        self.budget.setSuffix(" tokens")
        form.addRow("Thinking budget", self.budget)

    def show(self, agent: AgentConfig) -> None:
        self.effort.setCurrentIndex(max(0, self.effort.findData(agent.reasoning_effort)))
        self.budget.setValue(agent.thinking_budget or self.budget.minimum())

    def applied_to(self, agent: AgentConfig) -> AgentConfig:
        budget = self.budget.value()
        return replace(
            agent,
            reasoning_effort=str(self.effort.currentData() or ""),
            thinking_budget=None if budget <= self.budget.minimum() else budget,
        )
