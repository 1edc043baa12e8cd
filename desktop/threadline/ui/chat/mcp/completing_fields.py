"""Text fields whose suggestions come from an MCP server as the user types (``completion/complete``).

Used by a prompt's form (its arguments) and the resource browser (a template's variables).
Each field asks a moment after the last key (``ASK_AFTER_MS``), with what the other fields
hold as context (a server may narrow one value by another: a team by its department), and
shows the answer in a drop-down list. Only the newest answer is shown; a failure is logged
and leaves the list as it was: suggestions are a help, never in the way of typing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

import shiboken6
from PySide6.QtCore import QStringListModel, Qt, QTimer
from PySide6.QtWidgets import QCompleter, QFormLayout, QLabel, QLineEdit, QWidget

from threadline.ui.common.tasks import LogOnly, spawn

ASK_AFTER_MS = 150
Suggest = Callable[[str, str, dict[str, str]], Coroutine[Any, Any, list[str]]]
"""``suggest(name, value, other_values)``: the server's suggestions for field ``name``."""


class CompletingField(QLineEdit):
    """One value, with the server's suggestions for what is typed so far."""

    def __init__(self, name: str, suggest: Suggest, context: Callable[[], dict[str, str]]) -> None:
        super().__init__()
        self.name = name
        self._suggest = suggest
        self._context = context
        self._asked = 0
        self.suggestions = QStringListModel(self)
        completer = QCompleter(self.suggestions, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.setCompleter(completer)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(ASK_AFTER_MS)
        self._timer.timeout.connect(self.ask)
        self.textEdited.connect(lambda _text: self._timer.start())

    def ask(self) -> None:
        """Ask the server for suggestions for the text as it is now."""
        self._asked += 1
        asked = self._asked
        others = {k: v for k, v in self._context().items() if k != self.name and v}
        spawn(
            self._suggest(self.name, self.text(), others),
            on_done=lambda values: self._show(asked, values),
            tell=LogOnly("MCP completion failed", logging.INFO),
            name=f"complete {self.name}",
        )

    def _show(self, asked: int, values: list[str]) -> None:
        if not shiboken6.isValid(self) or asked != self._asked:
            return  # closed, or a newer question is under way
        self.suggestions.setStringList(values)
        if values and self.hasFocus():
            self.completer().complete()


class CompletingForm(QFormLayout):
    """A row per field: the label (required ones marked), the field with its suggestions."""

    def __init__(self, suggest: Suggest) -> None:
        super().__init__()
        self.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self._suggest = suggest
        self.fields: list[CompletingField] = []

    def add_field(self, name: str, description: str = "", *, required: bool = False, value: str = "") -> None:
        field = CompletingField(name, self._suggest, self.values)
        field.setObjectName(f"McpField-{name}")
        field.setText(value)
        field.setPlaceholderText(description or ("required" if required else "optional"))
        field.setAccessibleName(name + (" (required)" if required else ""))
        field.setAccessibleDescription(description)
        field.setProperty("required", required)
        label = QLabel(f"{name}{' *' if required else ''}")
        label.setBuddy(field)
        label.setToolTip(description)
        self.addRow(label, field)
        self.fields.append(field)

    def values(self) -> dict[str, str]:
        return {f.name: f.text().strip() for f in self.fields}

    def field(self, name: str) -> CompletingField:
        return next(f for f in self.fields if f.name == name)

    def missing(self) -> list[str]:
        return [f.name for f in self.fields if f.property("required") and not f.text().strip()]

    def first(self) -> QWidget | None:
        return self.fields[0] if self.fields else None
