"""The tab says so when a turn's knowledge search fell back to keywords (the embedding server down,
refusing, or not answering in time)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from tests.support.embedding_server import EmbeddingServer
from tests.support.knowledge_folders import knowledge_folder
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.knowledge import AttachScope
from threadline.engine.providers import CONTEXT_WINDOWS_SETTING
from threadline.ui.chat.controls.context_dialog import ContextDialog


def test_a_keyword_only_search_is_noted_in_the_banner(harness: Any, tmp_path: Path) -> None:
    harness.open()
    tab = new_tab(harness)
    engine = harness.engine
    folder = knowledge_folder(tmp_path / "docs")
    for i in range(6):  # too much to send whole: the passages are searched for
        (folder / f"diary-{i}.md").write_text("Tomatoes, beans and weather.\n\n" * 200, encoding="utf-8")
    with EmbeddingServer() as embeddings:
        harness.run(engine.settings.set_setting(CONTEXT_WINDOWS_SETTING, {"replay/gpt-4o-mini": 8000}))
        harness.run(
            engine.providers.save_provider(
                ProviderConfig("embedder", ProviderKind.OPENAI, base_url=embeddings.base_url), None
            )
        )
        harness.run(engine.knowledge.add("handbook", [folder], embed_provider="embedder", embed_model="e"))
        harness.run(engine.knowledge.index("handbook"))
        harness.run(engine.knowledge.attach("handbook", AttachScope.SESSION, tab.session_id))
        embeddings.refuse = True
        harness.server.enqueue(sse_response(openai_text_stream(["42 N·m."])))
        type_and_send(harness.qtbot, tab, "What torque does the albatross valve need?")
        wait_idle(harness, tab)
    harness.qtbot.waitUntil(lambda: tab.banner.isVisible(), timeout=WAIT_MS)
    assert tab.banner.objectName() == "InfoBanner" and tab.banner.error is None
    text = tab.banner.label.text()
    assert "embedder refused the embedding request" in text and "Keyword search only" in text


@pytest.mark.parametrize("stall", ["hangs", "answers too late"])
def test_a_stalled_embedding_server_does_not_hold_the_send(harness: Any, tmp_path: Path, stall: str) -> None:
    """Attached in Context…, typed, Send pressed: the reply comes with keyword passages and the tab
    says the embedding server did not answer in time (``QUERY_EMBED_DEADLINE``, the product's own)."""
    harness.open()
    qtbot = harness.qtbot
    tab = new_tab(harness)
    engine = harness.engine
    folder = knowledge_folder(tmp_path / "docs")
    for i in range(6):  # too much to send whole: the passages are searched for
        (folder / f"diary-{i}.md").write_text("Tomatoes, beans and weather.\n\n" * 200, encoding="utf-8")
    with EmbeddingServer() as embeddings:
        harness.run(engine.settings.set_setting(CONTEXT_WINDOWS_SETTING, {"replay/gpt-4o-mini": 8000}))
        harness.run(
            engine.providers.save_provider(
                ProviderConfig("embedder", ProviderKind.OPENAI, base_url=embeddings.base_url), None
            )
        )
        harness.run(engine.knowledge.add("handbook", [folder], embed_provider="embedder", embed_model="e"))
        harness.run(engine.knowledge.index("handbook"))

        qtbot.mouseClick(tab.context_strip.button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: tab.findChild(ContextDialog) is not None, timeout=WAIT_MS)
        context = tab.findChild(ContextDialog)
        qtbot.waitUntil(lambda: context.knowledge.list.count() == 1, timeout=WAIT_MS)
        context.knowledge.list.setFocus()
        context.knowledge.list.setCurrentRow(0)
        qtbot.keyClick(context.knowledge.list, Qt.Key.Key_Space)  # tick "handbook"
        with qtbot.waitSignal(context.accepted, timeout=WAIT_MS):
            qtbot.mouseClick(context.save_button, Qt.MouseButton.LeftButton)

        if stall == "hangs":
            embeddings.hang = True  # accepts the request and never answers it
        else:
            embeddings.delay = 45.0  # answers, long after a person gave up waiting
        harness.server.enqueue(sse_response(openai_text_stream(["42 N·m [1]."])))
        tab.composer.edit.setFocus()
        qtbot.keyClicks(tab.composer.edit, "What torque does the albatross valve need?")
        qtbot.mouseClick(tab.composer.send_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: tab.banner.isVisible(), timeout=WAIT_MS)
        wait_idle(harness, tab)
        assert embeddings.requests[-1]["input"] == ["What torque does the albatross valve need?"]
    text = tab.banner.label.text()
    assert "embedder did not answer the embedding request within 5 s" in text, text
    assert "Keyword search only" in text and tab.banner.error is None
    system = harness.server.requests[-1].body["messages"][0]["content"]
    assert "handbook: manual.pdf, page 3" in system, "keyword search found the page"
    assert tab.live.conversation.path()[-1].text == "42 N·m [1]."
