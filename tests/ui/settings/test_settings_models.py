"""Settings → Models: the user's prices and context windows, typed and clicked as a person would."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from threadline.core.pricing import PRICES_TAKEN

TIMEOUT = 15000


def open_models_page(harness: Any) -> Any:
    window = harness.open()
    window.open_settings("models")
    dialog = window._settings_dialog
    harness.qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=TIMEOUT)
    page = dialog.models
    assert dialog.pages.currentWidget() is page
    assert dialog.pages.tabText(dialog.pages.currentIndex()) == "Models"
    return page


def type_into(qtbot: Any, edit: Any, text: str) -> None:
    qtbot.mouseClick(edit, Qt.MouseButton.LeftButton)
    edit.selectAll()
    qtbot.keyClicks(edit, text)


def test_a_price_added_on_the_models_page_costs_that_model(harness: Any) -> None:
    page = open_models_page(harness)
    qtbot = harness.qtbot
    assert page.price_provider.currentText() == "replay"  # the configured provider
    assert PRICES_TAKEN in page.shipped_note.text()
    assert page.shipped.rowCount() > 10
    # A local server gets no shipped price, whatever its model is called.
    assert harness.run(harness.engine.library.price_book()).price("replay", "local-llama") is None

    type_into(qtbot, page.price_model, "local-llama")
    type_into(qtbot, page.price_input, "0.5")
    type_into(qtbot, page.price_output, "1,5")  # a decimal comma is a number too
    qtbot.mouseClick(page.add_price_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.price_message.text() == "Saved the price of local-llama.", timeout=TIMEOUT)

    assert harness.run(harness.engine.settings.get_setting("prices")) == [
        {"provider": "replay", "model": "local-llama", "input_per_mtok": 0.5, "output_per_mtok": 1.5}
    ]
    price = harness.run(harness.engine.library.price_book()).price("replay", "local-llama")
    assert price is not None
    assert (price.input_per_mtok, price.output_per_mtok, price.source) == (0.5, 1.5, "your price")
    assert page.prices.rowCount() == 1
    assert [page.prices.item(0, c).text() for c in range(4)] == ["replay", "local-llama", "0.5", "1.5"]

    # Remove it again: select the row, click Remove.
    qtbot.mouseClick(
        page.prices.viewport(),
        Qt.MouseButton.LeftButton,
        pos=page.prices.visualRect(page.prices.model().index(0, 1)).center(),
    )
    qtbot.waitUntil(page.remove_price_button.isEnabled, timeout=TIMEOUT)
    qtbot.mouseClick(page.remove_price_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.prices.rowCount() == 0, timeout=TIMEOUT)
    assert harness.run(harness.engine.settings.get_setting("prices")) == []
    assert harness.run(harness.engine.library.price_book()).price("replay", "local-llama") is None


def test_a_bad_price_shows_a_message_and_saves_nothing(harness: Any) -> None:
    page = open_models_page(harness)
    qtbot = harness.qtbot
    type_into(qtbot, page.price_model, "local-llama")
    type_into(qtbot, page.price_input, "-1")
    type_into(qtbot, page.price_output, "2")
    qtbot.mouseClick(page.add_price_button, Qt.MouseButton.LeftButton)
    assert page.price_message.text() == "Input price must be a number of 0 or more, e.g. 0.5."
    assert page.price_input.hasFocus()
    type_into(qtbot, page.price_input, "1")
    type_into(qtbot, page.price_output, "cheap")
    qtbot.keyClick(page.price_output, Qt.Key.Key_Return)
    assert page.price_message.text() == "Output price must be a number of 0 or more, e.g. 1.5."
    assert harness.run(harness.engine.settings.get_setting("prices", "unset")) == "unset"
    assert page.prices.rowCount() == 0


def test_a_context_window_added_on_the_models_page_is_used_at_once(harness: Any) -> None:
    page = open_models_page(harness)
    qtbot = harness.qtbot
    assert harness.engine.hub.context_window("replay", "local-llama") is None

    type_into(qtbot, page.window_model, "local-llama")
    type_into(qtbot, page.window_tokens, "0")
    qtbot.mouseClick(page.add_window_button, Qt.MouseButton.LeftButton)
    assert page.window_message.text() == "Tokens must be a whole number above 0, e.g. 32768."
    assert harness.run(harness.engine.settings.get_setting("context_windows", "unset")) == "unset"

    type_into(qtbot, page.window_tokens, "32,768")
    qtbot.mouseClick(page.add_window_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: page.window_message.text() == "Saved the context window of local-llama.", timeout=TIMEOUT
    )
    assert harness.run(harness.engine.settings.get_setting("context_windows")) == {
        "replay/local-llama": 32768
    }
    assert harness.engine.hub.context_window("replay", "local-llama") == 32768
    assert [page.window_table.item(0, c).text() for c in range(3)] == ["replay", "local-llama", "32,768"]

    table = page.window_table
    qtbot.mouseClick(
        table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(table.model().index(0, 1)).center()
    )
    qtbot.waitUntil(page.remove_window_button.isEnabled, timeout=TIMEOUT)
    qtbot.mouseClick(page.remove_window_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: table.rowCount() == 0, timeout=TIMEOUT)
    assert harness.run(harness.engine.settings.get_setting("context_windows")) == {}
    assert harness.engine.hub.context_window("replay", "local-llama") is None
