"""Settings → Knowledge as a person reads it: its shape from one base to the next, and what it says
of a run that stopped before the end."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from tests.support.ui_driving import new_tab_by_click
from tests.support.waiting import WAIT_MS
from tests.ui.knowledge.test_flows_knowledge import handbook, open_knowledge_page

from threadline.knowledge import Progress
from threadline.ui.chat.controls.context_dialog import ContextDialog
from threadline.ui.knowledge.index_jobs import long_line


def test_the_list_of_bases_keeps_its_width_for_a_base_not_yet_indexed(harness: Any, tmp_path: Path) -> None:
    """The hint under "Files that could not be read" of a base never indexed was one long line:
    the page widened for it and the list of bases shrank to its narrowest."""
    folder = handbook(tmp_path / "handbook")
    harness.open()
    harness.run(harness.engine.knowledge.add("handbook", [folder]))
    dialog = open_knowledge_page(harness)
    dialog.resize(930, 640)
    page = dialog.knowledge
    harness.qtbot.waitUntil(
        lambda: page.list.count() == 1 and page.problems.none.text().startswith("Files that cannot be read"),
        timeout=WAIT_MS,
    )
    harness.qtbot.waitUntil(lambda: page.list.width() == page.list.maximumWidth(), timeout=WAIT_MS)
    assert page.problems.none.isVisible()


def test_a_paused_run_does_not_claim_every_file_could_be_read(harness: Any, tmp_path: Path) -> None:
    """Paused after its first file, the page said "Every file could be read at the last
    indexing" of a base whose other files had not been looked at."""
    folder = tmp_path / "notes"
    folder.mkdir()
    for n in range(20):
        (folder / f"note{n:02}.md").write_text(f"# Note {n}\n\n" + "Words. " * 50, encoding="utf-8")
    window = harness.open()
    qtbot = harness.qtbot
    harness.run(harness.engine.knowledge.add("notes", [folder]))
    page = open_knowledge_page(harness).knowledge
    qtbot.waitUntil(lambda: page.title.text() == "notes", timeout=WAIT_MS)
    with qtbot.waitSignal(window.indexing.jobs.finished, timeout=WAIT_MS) as paused:
        qtbot.mouseClick(page.index_button, Qt.MouseButton.LeftButton)
        qtbot.mouseClick(page.pause_button, Qt.MouseButton.LeftButton)
    assert paused.args[1].cancelled
    qtbot.waitUntil(lambda: page.totals.text().startswith("Indexed: 1 file"), timeout=WAIT_MS)
    assert page.problems.none.isVisible()
    assert page.problems.none.text().startswith("None so far")

    with qtbot.waitSignal(window.indexing.jobs.finished, timeout=WAIT_MS):
        qtbot.mouseClick(page.index_button, Qt.MouseButton.LeftButton)  # Resume
    qtbot.waitUntil(
        lambda: page.problems.none.text() == "Every file could be read at the last indexing.", timeout=WAIT_MS
    )


def test_the_speed_is_whole_files_a_second_once_it_is_fast() -> None:
    """ "787.3 files/s" flickered its tenths at every step; a whole number says as much."""
    progress = Progress(files_total=3000, files_done=800, started=time.monotonic() - 1)
    assert re.search(r"· \d{3} files/s", long_line(progress)), long_line(progress)
    slow = Progress(files_total=30, files_done=3, started=time.monotonic() - 2)
    assert "· 1.5 files/s" in long_line(slow)


def test_tab_goes_through_the_page_in_the_order_it_reads(harness: Any, tmp_path: Path) -> None:
    """Index now and Drop index were reached after the attach lists that stand under them."""
    folder = handbook(tmp_path / "handbook")
    harness.open()
    harness.run(harness.engine.knowledge.add("handbook", [folder]))
    page = open_knowledge_page(harness).knowledge
    harness.qtbot.waitUntil(lambda: page.title.text() == "handbook", timeout=WAIT_MS)
    page.list.setFocus()
    seen = []
    for _ in range(7):
        harness.qtbot.keyClick(page.focusWidget(), Qt.Key.Key_Tab)
        seen.append(page.focusWidget())
    assert seen == [
        page.add_button,
        page.index_button,
        page.rebuild_button,
        page.attach.projects,
        page.attach.agents,
        page.remove_button,
        page.edit_button,
    ]


def test_a_chats_context_lists_bases_as_roomily_as_settings(harness: Any, tmp_path: Path) -> None:
    """The chat's Context… listed the bases in rows of bare text (a box to hit the height of a
    line), unlike the same kind of list in Settings → Knowledge."""
    harness.open()
    qtbot = harness.qtbot
    harness.run(harness.engine.knowledge.add("handbook", [handbook(tmp_path / "handbook")]))
    tab = new_tab_by_click(harness)
    qtbot.mouseClick(tab.context_strip.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.findChild(ContextDialog) is not None, timeout=WAIT_MS)
    context = tab.findChild(ContextDialog)
    qtbot.waitUntil(lambda: context.knowledge.list.count() == 1, timeout=WAIT_MS)
    picker = context.knowledge.list
    row = picker.visualItemRect(picker.item(0)).height()
    context.reject()
    page = open_knowledge_page(harness).knowledge
    qtbot.waitUntil(lambda: page.attach.agents.count() >= 1, timeout=WAIT_MS)
    assert row == page.attach.agents.visualItemRect(page.attach.agents.item(0)).height()
