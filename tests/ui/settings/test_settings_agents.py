"""Settings → Agents and the composer's agent picker, driven as a person would with the real engine."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click, type_and_send
from tests.support.waiting import WAIT_MS


def test_create_an_agent_in_settings_then_pick_it_in_the_composer(harness: Any) -> None:
    window = harness.open()
    qtbot = harness.qtbot
    window.open_settings("agents")
    dialog = window._settings_dialog
    qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=WAIT_MS)
    page = dialog.agents
    assert dialog.pages.currentWidget() is page
    qtbot.mouseClick(page.new_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.list.count() == 2 and page.form.name.hasFocus(), timeout=WAIT_MS)
    qtbot.keyClicks(page.form.name, "Reviewer")  # the suggested name is selected: typing replaces it
    qtbot.mouseClick(page.form.system_prompt.viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClicks(page.form.system_prompt, "You review code.")
    page.form.top_p.setFocus()
    page.form.top_p.selectAll()
    qtbot.keyClicks(page.form.top_p, "0.5")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.message.text() == "Saved Reviewer.", timeout=WAIT_MS)
    assert [page.list.item(i).text() for i in range(page.list.count())] == ["Default", "Reviewer"]
    dialog.close()

    tab = new_tab_by_click(harness)
    picker = tab.composer.agent_picker.combo
    qtbot.waitUntil(lambda: picker.findText("Reviewer") >= 0, timeout=WAIT_MS)
    picker.setFocus()
    qtbot.keyClicks(picker, "Rev")  # typing a name selects it, as in any list
    qtbot.waitUntil(lambda: tab.agent.agent_name == "Reviewer", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: tab.model.rowCount() == 1, timeout=WAIT_MS)  # the marker
    assert "Agent: Reviewer" in tab.status

    harness.server.enqueue(sse_response(openai_text_stream(["Looks fine."])))
    type_and_send(qtbot, tab, "Review this")
    qtbot.waitUntil(lambda: tab.model.rowCount() == 3 and not tab.busy, timeout=WAIT_MS)
    body = [r for r in harness.server.requests if r.method == "POST"][-1].body
    assert body["messages"][0] == {"role": "system", "content": "You review code."}
    assert body["top_p"] == 0.5


def test_an_agent_made_in_settings_shows_in_the_picker_of_a_tab_already_open(harness: Any) -> None:
    window = harness.open()
    qtbot = harness.qtbot
    tab = new_tab_by_click(harness)
    picker = tab.composer.agent_picker.combo
    qtbot.waitUntil(lambda: picker.count() == 1, timeout=WAIT_MS)
    window.open_settings("agents")
    dialog = window._settings_dialog
    qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=WAIT_MS)
    page = dialog.agents
    qtbot.mouseClick(page.new_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.form.name.hasFocus(), timeout=WAIT_MS)
    qtbot.keyClicks(page.form.name, "Translator")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.message.text() == "Saved Translator.", timeout=WAIT_MS)
    dialog.close()
    qtbot.waitUntil(lambda: picker.findText("Translator") >= 0, timeout=WAIT_MS)  # no reopening needed


def test_an_agent_added_by_another_process_shows_when_the_picker_opens(harness: Any) -> None:
    from threadline.core.config import AgentConfig

    harness.open()
    qtbot = harness.qtbot
    tab = new_tab_by_click(harness)
    picker = tab.composer.agent_picker.combo
    qtbot.waitUntil(lambda: picker.count() == 1, timeout=WAIT_MS)
    # As ``threadline agent add`` in a terminal would: stored, and no window told.
    harness.run(harness.engine.store.save_agent(AgentConfig("poet", "Poet", system_prompt="Rhyme.")))
    picker.showPopup()
    qtbot.waitUntil(lambda: picker.findText("Poet") >= 0, timeout=WAIT_MS)
    picker.hidePopup()
