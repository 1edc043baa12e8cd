"""Settings → Providers: the connect and first-reply timeouts, typed, saved and shown again."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDoubleSpinBox, QFormLayout

from threadline.core.config import ProviderConfig
from threadline.llm.timeouts import CONNECT_SETTING, FIRST_BYTE_SETTING


def open_settings(harness: Any, page: str) -> Any:
    harness.window.open_settings(page)
    dialog = harness.window._settings_dialog
    harness.qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=15000)
    assert dialog.loaded.exception() is None
    return dialog


def close(harness: Any, dialog: Any) -> None:
    dialog.reject()
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=15000)


def type_seconds(harness: Any, box: QDoubleSpinBox, text: str) -> None:
    """Select what the box shows and type over it, as a user does."""
    box.setFocus()
    box.selectAll()
    harness.qtbot.keyClicks(box, text)
    harness.qtbot.keyClick(box, Qt.Key.Key_Tab)


def stored(harness: Any, name: str) -> ProviderConfig:
    config: ProviderConfig | None = harness.run(harness.engine.store.get_provider(name))
    assert config is not None
    return config


def label_of(page: Any, field: QDoubleSpinBox) -> str:
    """The text of the form label beside ``field``."""
    for form in page.findChildren(QFormLayout):
        label = form.labelForField(field)
        if label is not None:
            return str(label.text())
    return ""


def test_timeouts_typed_in_settings_are_saved_and_shown_again(harness: Any) -> None:
    harness.open()
    dialog = open_settings(harness, "replay")
    page = dialog.providers
    assert page.name.text() == "replay"
    assert page.connect_timeout.text() == "default (10 s)"  # no value of its own yet
    assert page.first_byte_timeout.text() == "default (60 s)"
    assert label_of(page, page.connect_timeout) == CONNECT_SETTING  # the field the messages name
    assert label_of(page, page.first_byte_timeout) == FIRST_BYTE_SETTING
    assert page.timeouts_hint.isVisible() and "twice" in page.timeouts_hint.text()

    type_seconds(harness, page.connect_timeout, "4")
    type_seconds(harness, page.first_byte_timeout, "150")
    harness.qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: page.message.text() == "Saved replay.", timeout=15000)
    config = stored(harness, "replay")
    assert (config.connect_timeout, config.first_byte_timeout) == (4.0, 150.0)
    assert config.base_url == harness.server.openai_base_url  # the rest is kept
    close(harness, dialog)

    again = open_settings(harness, "replay").providers
    harness.qtbot.waitUntil(lambda: again.name.text() == "replay", timeout=15000)
    assert again.connect_timeout.value() == 4.0 and again.first_byte_timeout.value() == 150.0
    assert again.first_byte_timeout.text() == "150.0 s"

    type_seconds(harness, again.first_byte_timeout, "0")  # back to the default
    harness.qtbot.mouseClick(again.save_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: again.message.text() == "Saved replay.", timeout=15000)
    assert stored(harness, "replay").first_byte_timeout is None
    assert stored(harness, "replay").connect_timeout == 4.0
    assert again.first_byte_timeout.text() == "default (60 s)"


def test_a_new_provider_starts_with_the_defaults(harness: Any) -> None:
    harness.open()
    page = open_settings(harness, "replay").providers
    type_seconds(harness, page.first_byte_timeout, "90")
    harness.qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    assert page.name.text() == ""
    assert page.connect_timeout.value() == 0 and page.first_byte_timeout.value() == 0  # nothing carried over
