"""Sticky context in the window: the Context dialog and the strip, typed and clicked as a person would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.sticky import ContextSource, StickyContext
from threadline.ui.chat.controls.context_dialog import ContextDialog


def stored_context(harness: Any, session_id: str) -> StickyContext:
    info = harness.run(harness.engine.store.get_session(session_id))
    assert info is not None
    context: StickyContext = info.context
    return context


def test_add_a_file_in_the_context_dialog_send_and_see_the_strip(harness: Any, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("release-checklist-text")
    harness.open()
    tab = new_tab(harness)
    strip = tab.context_strip
    assert strip.isVisible() and strip.text.text() == ""

    harness.qtbot.mouseClick(strip.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: tab.findChild(ContextDialog) is not None, timeout=WAIT_MS)
    dialog = tab.findChild(ContextDialog)
    harness.qtbot.waitExposed(dialog)
    assert not dialog.editor.share_spin.isVisible()  # a session uses its agent's share
    harness.qtbot.keyClicks(dialog.editor.source_edit, str(notes))
    harness.qtbot.keyClick(dialog.editor.source_edit, Qt.Key.Key_Return)  # adds it; does not save
    assert dialog.isVisible() and dialog.editor.sources.count() == 1
    with harness.qtbot.waitSignal(dialog.accepted, timeout=WAIT_MS):  # closed (and deleted) once stored
        harness.qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert stored_context(harness, tab.session_id) == StickyContext(sources=(ContextSource(str(notes)),))
    harness.qtbot.waitUntil(lambda: strip.text.text().startswith("Context: 1 source"), timeout=WAIT_MS)

    harness.server.enqueue(sse_response(openai_text_stream(["Noted."])))
    type_and_send(harness.qtbot, tab, "What is on the checklist?")
    wait_idle(harness, tab)
    system = harness.server.requests[-1].body["messages"][0]
    assert system["role"] == "system" and "release-checklist-text" in system["content"]
    assert strip.text.text() == "Context: 1 file" and strip.text.objectName() == "Hint"

    notes.unlink()  # the file disappears: flagged in the strip, the turn goes on
    harness.server.enqueue(sse_response(openai_text_stream(["Still here."])))
    type_and_send(harness.qtbot, tab, "And now?")
    wait_idle(harness, tab)
    assert tab.live.conversation.path()[-1].text == "Still here."
    assert "release-checklist-text" not in str(harness.server.requests[-1].body["messages"][0])
    assert strip.text.text() == "⚠ notes.md missing"
    assert strip.text.objectName() == "ContextWarning"
    assert "the file does not exist" in strip.text.toolTip()
