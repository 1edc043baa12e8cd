"""A closed tab's idle conversation leaves the engine's memory; reopening reads it again."""

from __future__ import annotations

from typing import Any

from tests.support.ui_driving import new_tab_by_shortcut


def test_closing_an_idle_tab_releases_its_conversation_and_it_reopens(harness: Any) -> None:
    window = harness.open()
    qtbot = harness.qtbot
    tab = new_tab_by_shortcut(harness)
    session_id = tab.session_id
    assert harness.engine.live(session_id) is not None
    window.tabs.close_tab(tab)
    qtbot.waitUntil(lambda: harness.engine.live(session_id) is None, timeout=15000)
    reopened = harness.run(window._open(session_id, focus=True))
    assert reopened is not None
    assert harness.engine.live(session_id) is not None
