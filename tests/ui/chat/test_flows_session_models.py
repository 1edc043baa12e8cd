"""A chat keeps its own model: new chats start with the last one used, adding or removing a
provider never moves a chat, a chat whose model is gone says so; drafts survive a restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import texts, type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.engine.events import ErrorAction

UNREACHABLE = "http://127.0.0.1:9/v1"


def reply(text: str, model: str = "gpt-4o-mini") -> Any:
    return sse_response(openai_text_stream(split_text(text, 4), model=model))


def chat_requests(harness: Any) -> list[Any]:
    return [r for r in harness.server.requests if r.method == "POST"]


def open_provider_settings(harness: Any) -> Any:
    window = harness.window
    window.menus.act_settings.trigger()
    dialog = window._settings_dialog
    harness.qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=WAIT_MS)
    dialog.open_page("providers")
    return dialog


def close_settings(harness: Any, dialog: Any) -> None:
    dialog.close_and_save()
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)


def add_provider_in_settings(harness: Any, name: str, url: str, model: str = "") -> None:
    dialog = open_provider_settings(harness)
    page = dialog.providers
    harness.qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    harness.qtbot.keyClicks(page.name, name)
    harness.qtbot.keyClicks(page.base_url, url)
    if model:
        page.model.setEditText(model)
    harness.qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: page.message.text().startswith("Saved"), timeout=WAIT_MS)
    close_settings(harness, dialog)


def pick_model(harness: Any, tab: Any, label: str) -> None:
    picker = tab.composer.model_picker
    picker.showPopup()
    harness.qtbot.waitUntil(lambda: picker.findText(label) >= 0, timeout=WAIT_MS)
    index = picker.findText(label)
    picker.hidePopup()
    picker.setCurrentIndex(index)
    picker.activated.emit(index)  # what a click on the item does


def test_adding_a_provider_named_aaa_leaves_an_old_chat_on_its_provider(harness: Any) -> None:
    harness.server.enqueue(reply("First answer."), reply("Second answer."))
    window = harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Hello")
    wait_idle(harness, tab)
    add_provider_in_settings(harness, "aaa", UNREACHABLE, model="a-model")
    harness.qtbot.waitUntil(lambda: window.catalog.find("aaa", "a-model") is not None, timeout=WAIT_MS)
    assert tab.composer.model_picker.currentText() == "gpt-4o-mini  ·  replay"
    type_and_send(harness.qtbot, tab, "Still with me?")
    wait_idle(harness, tab)
    assert texts(tab)[-1] == "Second answer."
    assert chat_requests(harness)[-1].body["model"] == "gpt-4o-mini"
    assert tab.banner.error is None


def test_a_new_chat_starts_with_the_model_used_last(harness: Any) -> None:
    harness.server.models = ["gpt-4o-mini", "gpt-4o"]
    harness.server.enqueue(reply("From the big model.", model="gpt-4o"))
    harness.open()
    first = new_tab(harness)
    pick_model(harness, first, "gpt-4o  ·  replay")
    harness.qtbot.waitUntil(lambda: first.info.model == "gpt-4o", timeout=WAIT_MS)
    second = new_tab(harness)
    assert second.composer.model_picker.currentText() == "gpt-4o  ·  replay"
    type_and_send(harness.qtbot, second, "Which model?")
    wait_idle(harness, second)
    assert chat_requests(harness)[-1].body["model"] == "gpt-4o"


def test_a_chat_whose_provider_was_removed_says_so_and_asks_for_a_model(harness: Any) -> None:
    harness.server.enqueue(reply("Hello from replay."))
    window = harness.open()
    harness.run(
        harness.engine.providers.save_provider(
            ProviderConfig("gone", ProviderKind.OPENAI, base_url=UNREACHABLE, default_model="g-1"), "k"
        )
    )
    harness.run(window.catalog.load(harness.engine))
    tab = new_tab(harness)
    tab.composer.model_picker.setCurrentIndex(tab.composer.model_picker.findText("g-1  ·  gone"))
    tab.composer.model_picker.activated.emit(tab.composer.model_picker.currentIndex())
    harness.qtbot.waitUntil(lambda: tab.info.provider == "gone", timeout=WAIT_MS)
    # remove "gone" in Settings: the chat says so at once, everywhere
    dialog = open_provider_settings(harness)
    page = dialog.providers
    page.list.setCurrentRow(next(i for i in range(page.list.count()) if page.list.item(i).text() == "gone"))
    harness.qtbot.mouseClick(page.remove_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(
        lambda: page.remove_question is not None and page.remove_question.isVisible(), timeout=WAIT_MS
    )
    confirm = next(b for b in page.remove_question.buttons() if b.text() == "Remove")
    harness.qtbot.mouseClick(confirm, Qt.MouseButton.LeftButton)  # "Remove the provider “gone”?"
    harness.qtbot.waitUntil(lambda: page.message.text().startswith("Removed"), timeout=WAIT_MS)
    expected = "Pick a model — 'gone' was removed"
    harness.qtbot.waitUntil(lambda: tab.banner.error is not None, timeout=WAIT_MS)
    assert tab.banner.error.message == expected
    assert tab.banner.button(ErrorAction.PICK_MODEL) is not None
    assert tab.composer.model_picker.currentText() == expected
    assert expected in window.status_label.text()
    close_settings(harness, dialog)
    # sending asks for a model: nothing is staged or sent, the text stays
    type_and_send(harness.qtbot, tab, "Are you there?")
    assert tab.banner.error is not None and tab.banner.error.message == expected
    assert texts(tab) == [] and tab.composer.text() == "Are you there?"
    assert chat_requests(harness) == []
    # picking a model clears it, and the text goes out
    pick_model(harness, tab, "gpt-4o-mini  ·  replay")
    harness.qtbot.waitUntil(lambda: tab.banner.error is None, timeout=WAIT_MS)
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Return)
    wait_idle(harness, tab)
    assert texts(tab) == ["Are you there?", "Hello from replay."]


def test_a_new_chat_never_shows_a_model_its_first_send_would_reject(harness: Any) -> None:
    window = harness.open(provider=False)
    add_provider_in_settings(harness, "local", harness.server.openai_base_url)  # no default model
    harness.qtbot.waitUntil(lambda: window.empty.new_button.isVisible(), timeout=WAIT_MS)
    harness.qtbot.mouseClick(window.empty.new_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: window.tabs.current_tab() is not None, timeout=WAIT_MS)
    tab = window.tabs.current_tab()
    picker = tab.composer.model_picker
    picker.showPopup()  # the provider lists its models
    harness.qtbot.waitUntil(lambda: picker.findText("gpt-4o-mini  ·  local") >= 0, timeout=WAIT_MS)
    picker.hidePopup()
    assert picker.currentText() == "Pick a model"
    posts = len(chat_requests(harness))
    type_and_send(harness.qtbot, tab, "hello")
    assert tab.banner.error is not None and tab.banner.button(ErrorAction.PICK_MODEL) is not None
    assert texts(tab) == [] and len(chat_requests(harness)) == posts
    harness.server.enqueue(reply("Hi."))
    pick_model(harness, tab, "gpt-4o-mini  ·  local")
    harness.qtbot.waitUntil(lambda: tab.info.model == "gpt-4o-mini", timeout=WAIT_MS)
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Return)
    wait_idle(harness, tab)
    assert texts(tab) == ["hello", "Hi."]


def test_a_draft_and_its_attachment_survive_a_restart(harness: Any, tmp_path: Path, monkeypatch: Any) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("The launch code is PELICAN-42.\n", encoding="utf-8")
    harness.open()
    tab = new_tab(harness)
    sid = tab.session_id
    tab.composer.edit.setFocus()
    harness.qtbot.keyClicks(tab.composer.edit, "Half a thought about")
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(notes)], ""))
    harness.qtbot.mouseClick(tab.composer.attach_button, Qt.MouseButton.LeftButton)
    harness.close()

    window = harness.open()
    restored = window.tabs.tab_for(sid)
    assert restored is not None
    harness.qtbot.waitUntil(lambda: restored.composer.text() == "Half a thought about", timeout=WAIT_MS)
    [attached] = restored.composer.attachments()
    assert attached.name == "notes.txt" and "PELICAN-42" in attached.text
    assert restored.composer.chips.isVisible()


def test_windows_the_servers_listed_last_time_count_from_the_start(harness: Any) -> None:
    from threadline.ui.chat.composer.model_catalog import CACHE_KEY

    window = harness.open()
    saved = {"replay": [{"id": "qwen-local", "context_window": 512, "supports_images": False}]}
    harness.run(harness.engine.settings.set_setting(CACHE_KEY, saved))
    harness.run(window.catalog.load(harness.engine))  # what the next start does, without asking a server
    assert window.catalog.find("replay", "qwen-local") is not None
    assert harness.engine.hub.context_window("replay", "qwen-local") == 512
    assert not [r for r in harness.server.requests if r.path.endswith("/models")]
