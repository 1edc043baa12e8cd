"""A server's elicitation schema as a native form: one field per property, values checked before they go.

MCP restricts a form's schema to a flat object of primitive properties (2025-06-18,
"Elicitation"; enums with titles and multi-select arrays since 2025-11-25), so each
property becomes one widget: a line for a string (with its ``format`` as a hint and a check:
email, uri, date, date-time), a spin box for an integer or number (its ``minimum`` and
``maximum`` as the range), a check box for a boolean, a drop-down for a single choice
(``enum``, ``oneOf``/``anyOf`` of ``const`` with ``title``, or the older ``enumNames``) and a
row of check boxes for a multiple choice (an ``array`` of such items). Defaults are filled
in, required fields are marked with an asterisk (and said so to a screen reader).

``values()`` returns what an accept sends: every required field, every field with a
default, and every optional one the person touched; an optional field left alone is left
out, as the spec asks. ``problems()`` lists what stops the form from being sent.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
FORMAT_HINTS = {
    "email": "name@example.com",
    "uri": "https://…",
    "date": "YYYY-MM-DD",
    "date-time": "YYYY-MM-DDThh:mm:ss",
}
SPIN_LIMIT = 2_000_000_000

Value = str | int | float | bool | list[str]


def choices(prop: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(value, title)`` of a single-choice property (or of an array's items); [] when it has none."""
    options = prop.get("oneOf") or prop.get("anyOf")
    if (
        isinstance(options, list)
        and options
        and all(isinstance(o, Mapping) and "const" in o for o in options)
    ):
        return [(str(o["const"]), str(o.get("title") or o["const"])) for o in options]
    values = prop.get("enum")
    if isinstance(values, list):
        names = prop.get("enumNames")
        titles = names if isinstance(names, list) and len(names) == len(values) else values
        return [(str(v), str(t)) for v, t in zip(values, titles, strict=True)]
    return []


class _Field:
    """One property: its widget, whether the person touched it, and its value."""

    def __init__(self, name: str, prop: Mapping[str, Any], required: bool) -> None:
        self.name = name
        self.prop = prop
        self.required = required
        self.touched = False
        self.kind = str(prop.get("type") or "string")
        self.title = str(prop.get("title") or name)
        self.widget: QWidget = self._build()

    def _touch(self, *_: object) -> None:
        self.touched = True

    def _build(self) -> QWidget:
        prop, default = self.prop, self.prop.get("default")
        if self.kind == "array":
            items = prop.get("items")
            row = QWidget()
            layout = QHBoxLayout(row)
            layout.setContentsMargins(0, 0, 0, 0)
            picked = set(default) if isinstance(default, list) else set()
            self.boxes: list[tuple[str, QCheckBox]] = []
            for value, title in choices(items if isinstance(items, Mapping) else {}):
                box = QCheckBox(title)
                box.setChecked(value in picked)
                box.toggled.connect(self._touch)
                layout.addWidget(box)
                self.boxes.append((value, box))
            layout.addStretch(1)
            return row
        if self.kind == "boolean":
            check = QCheckBox()
            check.setChecked(bool(default))
            check.toggled.connect(self._touch)
            return check
        options = choices(prop)
        if options:
            combo = QComboBox()
            if not self.required and default is None:
                combo.addItem("—", None)
            for value, title in options:
                combo.addItem(title, value)
            if default is not None:
                combo.setCurrentIndex(max(0, combo.findData(str(default))))
            combo.currentIndexChanged.connect(self._touch)
            return combo
        if self.kind in ("integer", "number"):
            spin: QSpinBox | QDoubleSpinBox
            low, high = prop.get("minimum"), prop.get("maximum")
            if self.kind == "integer":
                spin = QSpinBox()
                spin.setRange(
                    int(low) if low is not None else -SPIN_LIMIT,
                    int(high) if high is not None else SPIN_LIMIT,
                )
            else:
                spin = QDoubleSpinBox()
                shown = repr(default).split(".")[-1] if isinstance(default, float) else ""
                spin.setDecimals(max(2, min(6, len(shown))))
                spin.setRange(
                    float(low) if low is not None else -1e12, float(high) if high is not None else 1e12
                )
            if isinstance(default, int | float):
                spin.setValue(default)  # type: ignore[arg-type]
            elif low is not None:
                spin.setValue(low)
            else:
                spin.setValue(0)
            spin.valueChanged.connect(self._touch)
            return spin
        line = QLineEdit()
        if isinstance(default, str):
            line.setText(default)
        hint = FORMAT_HINTS.get(str(prop.get("format") or ""))
        if hint:
            line.setPlaceholderText(hint)
        line.textEdited.connect(self._touch)
        return line

    def sends(self) -> bool:
        return self.required or self.touched or "default" in self.prop

    def value(self) -> Value | None:
        widget = self.widget
        if self.kind == "array":
            return [value for value, box in self.boxes if box.isChecked()]
        if isinstance(widget, QCheckBox):
            return widget.isChecked()
        if isinstance(widget, QComboBox):
            data = widget.currentData()
            return None if data is None else str(data)
        if isinstance(widget, QSpinBox):
            return widget.value()
        if isinstance(widget, QDoubleSpinBox):
            number = widget.value()
            return int(number) if number.is_integer() and not math.isinf(number) else number
        assert isinstance(widget, QLineEdit)
        return widget.text().strip()

    def problem(self) -> str:
        """Why this field cannot be sent as it is ("" when it can)."""
        value = self.value()
        if value in (None, "") or value == []:
            return f"{self.title} is required." if self.required else ""
        prop = self.prop
        if isinstance(value, list):
            least, most = prop.get("minItems"), prop.get("maxItems")
            if isinstance(least, int) and len(value) < least:
                return f"{self.title}: choose at least {least}."
            if isinstance(most, int) and len(value) > most:
                return f"{self.title}: choose at most {most}."
            return ""
        if not isinstance(value, str) or choices(prop):
            return ""
        shortest, longest = prop.get("minLength"), prop.get("maxLength")
        if isinstance(shortest, int) and len(value) < shortest:
            return f"{self.title}: at least {shortest} characters."
        if isinstance(longest, int) and len(value) > longest:
            return f"{self.title}: at most {longest} characters."
        return _format_problem(self.title, str(prop.get("format") or ""), value)


def _format_problem(title: str, fmt: str, value: str) -> str:
    if fmt == "email" and not EMAIL.match(value):
        return f"{title}: not an email address."
    if fmt == "uri":
        parts = urlsplit(value)
        if not parts.scheme or not (parts.netloc or parts.path):
            return f"{title}: not an address (such as https://example.com)."
    if fmt == "date":
        try:
            datetime.date.fromisoformat(value)
        except ValueError:
            return f"{title}: not a date (YYYY-MM-DD)."
    if fmt == "date-time":
        try:
            datetime.datetime.fromisoformat(value)
        except ValueError:
            return f"{title}: not a date and time (YYYY-MM-DDThh:mm:ss)."
    return ""


class ElicitationForm(QWidget):
    """The fields of one elicitation, in the schema's order."""

    def __init__(self, schema: Mapping[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ElicitationForm")
        props = schema.get("properties") or {}
        required = {str(n) for n in schema.get("required") or ()}
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.fields: dict[str, _Field] = {}
        for name, prop in props.items():
            if not isinstance(prop, Mapping):
                continue
            field = _Field(str(name), prop, str(name) in required)
            self.fields[field.name] = field
            label = QLabel(field.title + (" *" if field.required else ""))
            label.setObjectName("ElicitationLabel")
            label.setBuddy(field.widget)
            description = str(prop.get("description") or "")
            field.widget.setAccessibleName(field.title)
            field.widget.setAccessibleDescription(("Required. " if field.required else "") + description)
            if description:
                field.widget.setToolTip(description)
                label.setToolTip(description)
            layout.addRow(label, field.widget)

    def field_widget(self, name: str) -> QWidget:
        """The widget of property ``name`` (for tests and focus)."""
        return self.fields[name].widget

    def values(self) -> dict[str, Value]:
        """What an accept sends (see the module's docstring)."""
        out: dict[str, Value] = {}
        for name, field in self.fields.items():
            value = field.value()
            if field.sends() and value not in (None, "") and value != []:
                out[name] = value
        return out

    def problems(self) -> list[str]:
        return [p for p in (f.problem() for f in self.fields.values()) if p]

    def first_field(self) -> QWidget | None:
        return next((f.widget for f in self.fields.values()), None)
