"""Flows around a prompt: jump to a hit on another branch, images and dropped files, the model picker."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDragEnterEvent, QDropEvent, QImage, QTextDocument
from PySide6.QtWidgets import QApplication, QFileDialog
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import click_action, texts, type_and_send, wait_idle
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.waiting import WAIT_MS

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.ui.chat.composer.model_catalog import CACHE_KEY
from threadline.ui.chat.view.chat_view import IMAGE_SCHEME


def reply(text: str, model: str = "gpt-4o-mini") -> Any:
    return sse_response(openai_text_stream(split_text(text, 4), model=model))


def last_chat_request(harness: Any) -> Any:
    return [r for r in harness.server.requests if r.method == "POST"][-1]


def test_jump_to_a_search_hit_on_another_branch_makes_it_the_active_path(harness: Any) -> None:
    harness.server.enqueue(reply("The first answer talks about quokkas."), reply("The second answer."))
    window = harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Question one")
    wait_idle(harness, tab)
    first_answer = tab.live.conversation.path()[-1]
    prompt = tab.live.conversation.path()[0]
    click_action(harness.qtbot, tab, prompt.id, "edit")
    tab.composer.edit.selectAll()
    harness.qtbot.keyClicks(tab.composer.edit, "Question two")
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Return)
    wait_idle(harness, tab)
    assert texts(tab) == ["Question two", "The second answer."]
    # search finds the answer on the old branch; choosing it shows that branch
    harness.qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    harness.qtbot.keyClicks(window.sidebar.filter, "quokkas")
    harness.qtbot.waitUntil(lambda: window.sidebar.results.rowCount() > 0, timeout=WAIT_MS)
    hit = window.sidebar.results.result(0)
    assert hit is not None and hit.message_id == first_answer.id
    view = window.sidebar.hits
    rect = view.visualRect(window.sidebar.results.index(0, 0))
    harness.qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    harness.qtbot.waitUntil(
        lambda: texts(tab) == ["Question one", "The first answer talks about quokkas."], timeout=WAIT_MS
    )
    assert window.tabs.current_tab() is tab
    harness.qtbot.waitUntil(lambda: first_answer.id in tab.view.visible_message_ids(), timeout=WAIT_MS)
    # the engine stored the move: reopening the session shows the same branch
    sessions = {s.id: s for s in harness.run(harness.engine.sessions.list_sessions())}
    assert sessions[tab.session_id].active_leaf == first_answer.id


def _png(path: Path, w: int = 400, h: int = 300) -> Path:
    image = QImage(w, h, QImage.Format.Format_RGB32)
    image.fill(QColor("#d04020"))
    assert image.save(str(path), "PNG")
    return path


def test_an_attached_image_shows_in_the_prompt_and_is_sent_as_an_image_part(
    harness: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    picture = _png(tmp_path / "sunset.png")
    harness.server.enqueue(reply("A red picture."))
    harness.open()
    tab = new_tab(harness)
    # Attach… opens the file dialog; the user picks the picture
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(picture)], ""))
    harness.qtbot.mouseClick(tab.composer.attach_button, Qt.MouseButton.LeftButton)
    assert tab.composer.chips.isVisible()
    [attached] = tab.composer.attachments()
    assert attached.media_type == "image/png" and attached.name == "sunset.png"
    type_and_send(harness.qtbot, tab, "What colour is this?")
    wait_idle(harness, tab)
    prompt = tab.live.conversation.path()[0]
    assert [i.name for i in prompt.images] == ["sunset.png"]
    assert not tab.composer.attachments() and not tab.composer.chips.isVisible()
    # the prompt shows the picture itself (a thumbnail added to its document, nothing loaded)
    harness.qtbot.waitUntil(lambda: prompt.id in tab.view.visible_message_ids(), timeout=WAIT_MS)
    doc = tab.view._docs[prompt.id].doc
    thumb = doc.resource(QTextDocument.ResourceType.ImageResource, QUrl(f"{IMAGE_SCHEME}:{prompt.id}:0"))
    assert isinstance(thumb, QImage)
    assert (thumb.width(), thumb.height()) == (213, 160)  # 400×300 fitted in 240×160
    assert "sunset.png" in doc.toPlainText()
    # …and the request carried it as an image part
    body = last_chat_request(harness).body
    user = [m for m in body["messages"] if m["role"] == "user"][-1]
    parts = user["content"]
    assert {"type": "text", "text": "What colour is this?"} in parts
    images = [p for p in parts if p["type"] == "image_url"]
    assert len(images) == 1
    url = images[0]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(picture.read_bytes()).decode("ascii")


def _drop(widget: Any, paths: list[Path]) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    pos = QPointF(widget.rect().center())
    enter = QDragEnterEvent(
        pos.toPoint(),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted()
    drop = QDropEvent(
        pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(widget, drop)
    assert drop.isAccepted()


def test_a_dropped_text_file_is_attached_as_context_and_sent(harness: Any, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("The launch code is PELICAN-42.\n", encoding="utf-8")
    harness.server.enqueue(reply("Noted."))
    harness.open()
    tab = new_tab(harness)
    _drop(tab.composer, [notes])
    [attached] = tab.composer.attachments()
    assert attached.name == "notes.txt" and "PELICAN-42" in attached.text
    assert tab.composer.chips.isVisible()
    assert tab.composer.text() == ""  # a dropped file is attached, not pasted
    type_and_send(harness.qtbot, tab, "Summarise the file")
    wait_idle(harness, tab)
    prompt = tab.live.conversation.path()[0]
    assert [c.name for c in prompt.context] == ["notes.txt"]
    assert "notes.txt" in tab.view._docs[prompt.id].doc.toPlainText()
    body = last_chat_request(harness).body
    sent = str([m for m in body["messages"] if m["role"] == "user"][-1]["content"])
    assert "PELICAN-42" in sent and "Summarise the file" in sent


def test_the_model_picker_changes_the_model_of_the_next_request(harness: Any) -> None:
    harness.server.enqueue(reply("From the mini model."), reply("From the big model.", model="gpt-4o"))
    harness.server.models = ["gpt-4o-mini", "gpt-4o"]
    window = harness.open()
    assert harness.server.requests == []  # nothing listed models at start (no SDK, no network)
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Hello")
    wait_idle(harness, tab)
    assert last_chat_request(harness).body["model"] == "gpt-4o-mini"
    picker = tab.composer.model_picker
    assert [picker.itemText(i) for i in range(picker.count())] == ["gpt-4o-mini  ·  replay", "Refresh models"]
    # opening the picker asks the provider for its models
    picker.showPopup()
    harness.qtbot.waitUntil(lambda: picker.findText("gpt-4o  ·  replay") >= 0, timeout=WAIT_MS)
    assert any(r.method == "GET" and r.path.endswith("/models") for r in harness.server.requests)
    index = picker.findText("gpt-4o  ·  replay")
    assert index >= 0
    picker.hidePopup()
    picker.setCurrentIndex(index)
    picker.activated.emit(index)  # what a click on the item does
    harness.qtbot.waitUntil(
        lambda: harness.run(harness.engine.sessions.list_sessions())[0].model == "gpt-4o", timeout=WAIT_MS
    )
    type_and_send(harness.qtbot, tab, "And now?")
    wait_idle(harness, tab)
    assert last_chat_request(harness).body["model"] == "gpt-4o"
    assert texts(tab)[-1] == "From the big model."
    assert tab.live.conversation.path()[-1].metadata.model == "gpt-4o"
    # the list is kept for the next start: the picker offers both without asking again
    cached = harness.run(harness.engine.settings.get_setting(CACHE_KEY, None))
    assert sorted(m["id"] for m in cached["replay"]) == ["gpt-4o", "gpt-4o-mini"]
    harness.close()
    requests = len(harness.server.requests)
    window = harness.open()
    harness.qtbot.waitUntil(lambda: window.catalog.loaded, timeout=WAIT_MS)
    assert [(c.provider, c.model) for c in window.catalog.choices()] == [
        ("replay", "gpt-4o-mini"),
        ("replay", "gpt-4o"),
    ]
    assert len(harness.server.requests) == requests


def test_catalog_keeps_the_saved_list_of_a_provider_it_cannot_reach(harness: Any) -> None:
    window = harness.open()
    gone_provider = ProviderConfig(
        "gone", ProviderKind.OPENAI, base_url="http://127.0.0.1:9/v1", default_model="m1"
    )
    harness.run(harness.engine.providers.save_provider(gone_provider, "sk-x"))
    saved = {"gone": [{"id": "m1"}, {"id": "m2", "context_window": 8000}], "replay": "not a list"}
    harness.run(harness.engine.settings.set_setting(CACHE_KEY, saved))
    harness.run(window.catalog.load(harness.engine))
    gone = [c for c in window.catalog.choices() if c.provider == "gone"]
    assert [(c.model, c.context_window) for c in gone] == [("m1", None), ("m2", 8000)]
    harness.run(window.catalog.refresh(harness.engine))
    assert [c.model for c in window.catalog.choices() if c.provider == "gone"] == ["m1", "m2"]
    assert [c.model for c in window.catalog.choices() if c.provider == "replay"] == [
        "gpt-4o-mini",
        "claude-sonnet-4-5",
    ]
