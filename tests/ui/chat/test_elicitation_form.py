"""The elicitation form on its own: which values an accept sends, and what it refuses."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox

from threadline.ui.chat.controls.elicitation_form import ElicitationForm

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "subscribe": {"type": "boolean", "title": "Subscribe"},
        "seats": {"type": "integer", "minimum": 1, "maximum": 9},
        "site": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date"},
        "plan": {
            "type": "string",
            "oneOf": [{"const": "p1", "title": "Basic"}, {"const": "p2", "title": "Pro"}],
        },
        "tags": {"type": "array", "minItems": 1, "items": {"enum": ["a", "b"]}},
    },
    "required": ["name"],
}


def test_untouched_optional_fields_are_left_out_and_touched_ones_sent(qtbot: Any) -> None:
    form = ElicitationForm(SCHEMA)
    qtbot.addWidget(form)
    name = form.field_widget("name")
    assert isinstance(name, QLineEdit)
    qtbot.keyClicks(name, "Jo")
    assert form.problems() == []
    assert form.values() == {"name": "Jo"}  # every optional field untouched, none with a default
    tags = form.fields["tags"].boxes
    tags[1][1].click()
    assert form.values() == {"name": "Jo", "tags": ["b"]}

    subscribe = form.field_widget("subscribe")
    seats = form.field_widget("seats")
    plan = form.field_widget("plan")
    assert isinstance(subscribe, QCheckBox) and isinstance(seats, QSpinBox) and isinstance(plan, QComboBox)
    assert seats.minimum() == 1 and seats.maximum() == 9 and seats.value() == 1
    assert [plan.itemText(i) for i in range(plan.count())] == ["—", "Basic", "Pro"]
    subscribe.click()
    subscribe.click()  # touched, back to unticked: sent as false
    seats.setValue(3)
    plan.setCurrentIndex(2)
    assert form.values() == {"name": "Jo", "tags": ["b"], "subscribe": False, "seats": 3, "plan": "p2"}


def test_formats_and_lengths_are_checked(qtbot: Any) -> None:
    form = ElicitationForm(SCHEMA)
    qtbot.addWidget(form)
    assert "Name is required." in form.problems()
    form.field_widget("name").setText("J")  # type: ignore[attr-defined]
    form.field_widget("site").setText("not a url")  # type: ignore[attr-defined]
    form.field_widget("day").setText("2026-02-30")  # type: ignore[attr-defined]
    problems = form.problems()
    assert "Name: at least 2 characters." in problems
    assert "site: not an address (such as https://example.com)." in problems
    assert "day: not a date (YYYY-MM-DD)." in problems
    form.field_widget("site").setText("https://example.com/me")  # type: ignore[attr-defined]
    form.field_widget("day").setText("2026-02-28")  # type: ignore[attr-defined]
    assert not any(p.startswith(("site", "day")) for p in form.problems())
