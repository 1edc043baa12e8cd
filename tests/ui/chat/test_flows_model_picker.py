"""The model picker shows only what is real: opening it asks the provider again (no ten-minute
cache), a "Refresh models" entry does too, a "Loading models…" entry shows while the list
loads, and a model the server's list lacks is marked on the chat that uses it — and, the one
rule for such names wherever they are given, still sent as typed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tests.support.sse_server import (
    json_response,
    openai_models_body,
    openai_text_stream,
    split_text,
    sse_response,
)
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import texts, type_and_send
from tests.support.waiting import WAIT_MS

from threadline.engine.events import ErrorAction
from threadline.ui.chat.composer.composer import LOADING_MODELS, REFRESH_MODELS

LLAMA = "llama-3.2-3b  ·  replay"


def reply(text: str) -> Any:
    return sse_response(openai_text_stream(split_text(text, 4)))


def listings(harness: Any) -> int:
    return sum(1 for r in harness.server.requests if r.method == "GET" and r.path == "/v1/models")


def entries(picker: Any) -> list[str]:
    return [picker.itemText(i) for i in range(picker.count())]


def open_picker_until(harness: Any, tab: Any, done: Any) -> None:
    """Open the picker as a click does, wait for the listing to land, close it again."""
    picker = tab.composer.model_picker
    picker.showPopup()
    harness.qtbot.waitUntil(lambda: done() and not harness.window.catalog.refreshing, timeout=WAIT_MS)
    picker.hidePopup()


def choose(harness: Any, tab: Any, text: str) -> None:
    picker = tab.composer.model_picker
    index = picker.findText(text)
    assert index >= 0, entries(picker)
    picker.setCurrentIndex(index)
    picker.activated.emit(index)  # what a click on the item does


def test_a_model_loaded_into_the_server_shows_the_next_time_the_picker_opens(harness: Any) -> None:
    harness.server.models = ["gpt-4o-mini"]
    harness.open()
    tab = new_tab(harness)
    picker = tab.composer.model_picker
    open_picker_until(harness, tab, lambda: listings(harness) == 1)
    assert picker.findText(LLAMA) < 0
    harness.server.models.append("llama-3.2-3b")  # loaded into the local server a moment later
    open_picker_until(harness, tab, lambda: picker.findText(LLAMA) >= 0)
    assert listings(harness) == 2
    assert picker.currentText() == "gpt-4o-mini  ·  replay"


def test_a_model_the_server_dropped_is_marked_on_the_chat_and_still_sent(harness: Any) -> None:
    harness.server.models = ["gpt-4o-mini", "llama-3.2-3b"]
    harness.open()
    tab = new_tab(harness)
    open_picker_until(harness, tab, lambda: tab.composer.model_picker.findText(LLAMA) >= 0)
    choose(harness, tab, LLAMA)
    harness.qtbot.waitUntil(lambda: tab.info.model == "llama-3.2-3b", timeout=WAIT_MS)
    harness.server.models.remove("llama-3.2-3b")  # unloaded from the server
    picker = tab.composer.model_picker
    expected = "'llama-3.2-3b' is not in replay's model list — it is sent as typed"
    open_picker_until(harness, tab, lambda: tab.banner.error is not None)
    assert tab.banner.error is not None and tab.banner.error.message == expected
    assert tab.banner.button(ErrorAction.PICK_MODEL) is not None
    assert picker.currentText() == LLAMA and picker.toolTip() == expected  # the chat's model, marked
    assert "not in replay's model list" in tab._status
    harness.server.enqueue(reply("Still here."))
    type_and_send(harness.qtbot, tab, "hello?")
    harness.qtbot.waitUntil(lambda: texts(tab)[-1:] == ["Still here."], timeout=WAIT_MS)
    assert harness.server.stream_requests()[-1].body["model"] == "llama-3.2-3b"
    # the server lists it again: the mark goes away
    harness.server.models.append("llama-3.2-3b")
    open_picker_until(harness, tab, lambda: tab.banner.error is None and picker.toolTip() != expected)
    assert picker.currentText() == LLAMA


def test_a_name_no_listing_has_works_the_same_from_the_model_command(harness: Any) -> None:
    """``/model fast-20``: accepted, the chat warns that the list lacks it, and it is sent."""
    harness.server.models = ["gpt-4o-mini"]
    harness.open()
    tab = new_tab(harness)
    open_picker_until(harness, tab, lambda: listings(harness) == 1)
    type_and_send(harness.qtbot, tab, "/model fast-20")
    harness.qtbot.waitUntil(
        lambda: tab.info.model == "fast-20" and tab.composer.text() == "", timeout=WAIT_MS
    )
    expected = "'fast-20' is not in replay's model list — it is sent as typed"
    harness.qtbot.waitUntil(
        lambda: tab.banner.error is not None and tab.banner.error.message == expected, timeout=WAIT_MS
    )
    assert "any more" not in tab.banner.error.message  # a model never listed was never "offered"
    harness.server.enqueue(reply("Fast answer."))
    type_and_send(harness.qtbot, tab, "hi")
    harness.qtbot.waitUntil(lambda: texts(tab)[-1:] == ["Fast answer."], timeout=WAIT_MS)
    assert harness.server.stream_requests()[-1].body["model"] == "fast-20"


def test_the_providers_default_model_is_marked_too_when_the_server_drops_it(harness: Any) -> None:
    harness.server.models = ["gpt-4o-mini", "gpt-4o"]
    harness.open()
    tab = new_tab(harness)
    assert tab.info.model == "gpt-4o-mini"  # the provider's default model
    harness.server.models.remove("gpt-4o-mini")
    picker = tab.composer.model_picker
    open_picker_until(harness, tab, lambda: "model list" in picker.toolTip())
    assert picker.toolTip() == "'gpt-4o-mini' is not in replay's model list — it is sent as typed"
    assert picker.currentText() == "gpt-4o-mini  ·  replay"
    assert picker.findText("gpt-4o  ·  replay") >= 0


def test_the_cached_list_shows_while_a_slow_listing_loads_and_one_listing_runs_at_a_time(
    harness: Any,
) -> None:
    harness.server.models = ["gpt-4o-mini"]
    harness.open()
    tab = new_tab(harness)
    picker = tab.composer.model_picker
    open_picker_until(harness, tab, lambda: listings(harness) == 1)
    slow = json_response(200, openai_models_body(["gpt-4o-mini", "qwen-2.5"]))
    harness.server.models_response = replace(slow, first_byte_delay=1.5)
    picker.showPopup()
    harness.qtbot.waitUntil(lambda: LOADING_MODELS in entries(picker), timeout=WAIT_MS)
    index = picker.findText(LOADING_MODELS)
    assert not picker.model().item(index).isEnabled()
    assert picker.findText("gpt-4o-mini  ·  replay") >= 0  # the cached list meanwhile
    picker.hidePopup()
    picker.showPopup()  # opened again while the listing runs: it joins, no second request
    picker.hidePopup()
    harness.qtbot.waitUntil(lambda: LOADING_MODELS not in entries(picker), timeout=WAIT_MS)
    assert picker.findText("qwen-2.5  ·  replay") >= 0
    assert listings(harness) == 2
    assert picker.currentText() == "gpt-4o-mini  ·  replay"


def test_refresh_models_asks_the_server_and_keeps_the_chats_model(harness: Any) -> None:
    harness.server.models = ["gpt-4o-mini"]
    harness.open()
    tab = new_tab(harness)
    picker = tab.composer.model_picker
    open_picker_until(harness, tab, lambda: listings(harness) == 1)
    harness.server.models.append("phi-4")
    choose(harness, tab, REFRESH_MODELS)
    assert picker.currentText() == "gpt-4o-mini  ·  replay"  # not a model: the selection stays
    harness.qtbot.waitUntil(lambda: picker.findText("phi-4  ·  replay") >= 0, timeout=WAIT_MS)
    assert listings(harness) == 2
    assert tab.info.model == "gpt-4o-mini"
    assert picker.currentText() == "gpt-4o-mini  ·  replay"
