"""Settings → Memory, typed and clicked in the real window (docs/memory.md).

Add (typed), edit, filter by scope and delete memories; what is listed is what the engine
holds and what the next request carries. The switch turns memory off: the next request has
no memory part. A project's box offers ``search_past_chats`` in its chats.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QProgressBar
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click, type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.memory import MEMORY_HEADING, MemoryScope
from threadline.core.meter import MeterPart
from threadline.ui.chat.composer.context_meter_button import MeterBreakdown
from threadline.ui.settings.settings_memory_page import MemoryPage


def click(harness: Any, button: Any) -> None:
    assert button.isVisible() and button.isEnabled(), button.text()
    harness.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def open_page(harness: Any) -> MemoryPage:
    harness.window.open_settings("memory")
    dialog = harness.window._settings_dialog
    harness.qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=WAIT_MS)
    assert dialog.pages.currentWidget() is dialog.memory
    return dialog.memory  # type: ignore[no-any-return]


def listed(page: MemoryPage) -> list[tuple[str, str]]:
    return [
        (page.table.item(row, 0).text(), page.table.item(row, 1).text())
        for row in range(page.table.rowCount())
    ]


def select_row(harness: Any, page: MemoryPage, row: int) -> None:
    rect = page.table.visualRect(page.table.model().index(row, 0))
    harness.qtbot.mouseClick(page.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def add(harness: Any, page: MemoryPage, text: str, scope_label: str) -> None:
    click(harness, page.add_button)
    harness.qtbot.waitUntil(lambda: page.form.isVisible() and page.text.hasFocus(), timeout=WAIT_MS)
    harness.qtbot.keyClicks(page.text, text)
    page.scope.setCurrentIndex(page.scope.findText(scope_label))
    click(harness, page.save_button)
    harness.qtbot.waitUntil(lambda: any(t == text for t, _ in listed(page)), timeout=WAIT_MS)


def system_of_a_new_chat(harness: Any) -> str:
    harness.server.enqueue(sse_response(openai_text_stream(["Hello."])))
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, "hi")
    wait_idle(harness, tab)
    first = harness.server.stream_requests()[-1].body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


def test_memories_are_added_edited_filtered_and_deleted(harness: Any) -> None:
    harness.open()
    project = harness.run(harness.engine.projects.create_project("Work"))
    page = open_page(harness)
    assert page.enabled.isChecked() and listed(page) == []
    add(harness, page, "Likes short answers", "All chats")
    add(harness, page, "The service is Heron", "Project Work")
    assert listed(page) == [("Likes short answers", "All chats"), ("The service is Heron", "Project Work")]
    stored = harness.run(harness.engine.memory.memories())
    assert [(m.scope, m.target) for m in stored] == [
        (MemoryScope.GLOBAL, ""),
        (MemoryScope.PROJECT, project.id),
    ]

    page.filter.setCurrentIndex(page.filter.findText("Project Work"))
    assert listed(page) == [("The service is Heron", "Project Work")]
    page.filter.setCurrentIndex(page.filter.findText("All memories"))

    select_row(harness, page, 0)
    click(harness, page.edit_button)
    harness.qtbot.waitUntil(
        lambda: page.text.hasFocus() and page.text.text() == "Likes short answers", timeout=WAIT_MS
    )
    page.text.selectAll()
    harness.qtbot.keyClicks(page.text, "Likes very short answers")
    harness.qtbot.keyClick(page.text, Qt.Key.Key_Return)
    harness.qtbot.waitUntil(lambda: listed(page)[0][0] == "Likes very short answers", timeout=WAIT_MS)

    select_row(harness, page, 1)
    click(harness, page.delete_button)
    harness.qtbot.waitUntil(lambda: len(listed(page)) == 1, timeout=WAIT_MS)
    assert [m.text for m in harness.run(harness.engine.memory.memories())] == ["Likes very short answers"]
    page.window().close()
    system = system_of_a_new_chat(harness)
    assert "- Likes very short answers" in system and "Heron" not in system


def test_an_empty_memory_is_refused_in_the_pages_line(harness: Any) -> None:
    harness.open()
    page = open_page(harness)
    click(harness, page.add_button)
    harness.qtbot.waitUntil(lambda: page.text.hasFocus(), timeout=WAIT_MS)
    harness.qtbot.keyClicks(page.text, "   ")
    click(harness, page.save_button)
    harness.qtbot.waitUntil(lambda: "A memory needs some text." in page.message.text(), timeout=WAIT_MS)
    assert page.form.isVisible() and harness.run(harness.engine.memory.memories()) == []


def test_the_switch_turns_memory_off_and_a_project_offers_past_chat_search(harness: Any) -> None:
    harness.open()
    harness.run(harness.engine.memory.add("Likes short answers"))
    project = harness.run(harness.engine.projects.create_project("Work"))
    page = open_page(harness)
    box = page.enabled  # clicked on its box: a check box stretched across the page ends at its label
    harness.qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))
    harness.qtbot.waitUntil(lambda: page.saving is not None and page.saving.done(), timeout=WAIT_MS)
    assert not harness.engine.memory.enabled
    item = page.past_chat_projects.item(0)
    assert item.text() == "Work"
    item.setCheckState(Qt.CheckState.Checked)
    harness.qtbot.waitUntil(
        lambda: project.id in harness.run(harness.engine.memory.settings()).past_chat_projects,
        timeout=WAIT_MS,
    )
    page.window().close()
    assert MEMORY_HEADING not in system_of_a_new_chat(harness)


def test_a_memory_is_its_own_part_of_the_context_meter(harness: Any) -> None:
    harness.open()
    page = open_page(harness)
    add(harness, page, "Likes short answers" + " and plain words" * 10, "All chats")
    page.window().close()
    tab = new_tab_by_click(harness)
    meter = tab.composer.meter
    harness.qtbot.waitUntil(lambda: meter.current() is not None, timeout=WAIT_MS)
    current = meter.current()
    assert current is not None and current.tokens(MeterPart.MEMORY) > 40
    harness.qtbot.mouseClick(meter, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: meter.findChild(MeterBreakdown) is not None, timeout=WAIT_MS)
    popup = meter.findChild(MeterBreakdown)
    bars = [bar.accessibleName() for bar in popup.findChildren(QProgressBar)]
    assert f"Memory: {current.tokens(MeterPart.MEMORY):,} tokens" in bars
    popup.close()


def test_a_memory_saved_by_another_instance_shows_in_the_open_page_and_the_meter(harness: Any) -> None:
    """Two instances on one database: what the other saves reaches this window through the
    change feed — listed in the open Settings → Memory and counted by an open chat's meter —
    with no restart and nothing reopened."""
    from threadline.engine.engine import Engine

    harness.open()
    tab = new_tab_by_click(harness)
    meter = tab.composer.meter
    harness.qtbot.waitUntil(lambda: meter.current() is not None, timeout=WAIT_MS)
    assert meter.current().tokens(MeterPart.MEMORY) == 0
    page = open_page(harness)
    assert listed(page) == []
    watch = harness.engine.change_watch
    harness.qtbot.waitUntil(lambda: watch is not None and watch.feed is not None, timeout=WAIT_MS)

    async def elsewhere(text: str) -> None:
        other = await Engine.open(harness.data_dir / "other", database_url=harness.engine.store.url)
        try:
            await other.memory.add(text)
        finally:
            await other.aclose()

    harness.run(elsewhere("Prefers metric units" + " in every answer" * 10))
    harness.qtbot.waitUntil(lambda: len(listed(page)) == 1, timeout=WAIT_MS)
    assert listed(page)[0][1] == "All chats" and listed(page)[0][0].startswith("Prefers metric units")
    harness.qtbot.waitUntil(lambda: meter.current().tokens(MeterPart.MEMORY) > 40, timeout=WAIT_MS)
