"""The tab says so when a turn's knowledge search fell back to keywords (the embedding server down)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.embedding_server import EmbeddingServer
from tests.support.knowledge_folders import knowledge_folder
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.knowledge import AttachScope
from threadline.engine.providers import CONTEXT_WINDOWS_SETTING


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
