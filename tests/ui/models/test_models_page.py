"""The Models page, driven as a person does: File → Local Models…, search, pick a model and a
quantisation, Download, Pause, Resume, Cancel, Remove and Import — against a fake Hub on
127.0.0.1 (``tests/support/fake_hub.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QMenu, QWidget
from tests.support.fake_hub import FILE, REPO, FakeHub, point_at

WAIT = 30000


def click(qtbot: Any, button: QWidget) -> None:
    assert button.isEnabled(), button
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def click_row(qtbot: Any, view: QAbstractItemView, text: str) -> None:
    """Click the row whose first column reads ``text`` (or starts with it)."""
    model = view.model()
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        if str(index.data()).startswith(text):
            view.scrollTo(index)
            qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center())
            return
    raise AssertionError(f"no row {text!r}")


def open_page(harness: Any) -> Any:
    window = harness.window
    file_menu: QMenu = window.menus.titles["file"]
    (action,) = [a for a in file_menu.actions() if a.text() == "Local &Models…"]
    action.trigger()  # the menu's item, as a click on it does
    page = window.models_page
    harness.qtbot.waitUntil(lambda: page.isVisible() and page.installed.loaded >= 1, timeout=WAIT)
    return page


def search_and_pick(qtbot: Any, page: Any, file: str) -> None:
    page.search.box.setFocus()
    qtbot.keyClicks(page.search.box, "tiny")
    qtbot.keyClick(page.search.box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page.search.results.count() >= 1, timeout=WAIT)
    click_row(qtbot, page.search.results, REPO)
    qtbot.waitUntil(lambda: page.quants.tree.topLevelItemCount() == 2, timeout=WAIT)
    click_row(qtbot, page.quants.tree, file)


def test_find_download_pause_resume_and_remove_a_model(harness: Any, hub: FakeHub) -> None:
    point_at(harness.data_dir, hub)
    harness.open()
    qtbot = harness.qtbot
    page = open_page(harness)
    installed = harness.engine.models.runtime_installed()
    assert (
        "“On this computer”" if installed else "pip install 'threadline[local]'"
    ) in page.runtime_note.text()
    assert str(harness.data_dir / "models") in page.folder_label.text()

    search_and_pick(qtbot, page, FILE)
    row = page.quants.tree.currentItem()
    assert row.text(0) == FILE and row.text(1) == "571 KB"
    assert row.text(2).startswith("≈ ") and row.text(3) in ("fits in memory", "fits in GPU memory")
    assert page.quants.machine.text().startswith("This computer: memory ")

    hub.delay, hub.hold_after = 0.05, 200_000
    click(qtbot, page.quants.download)
    qtbot.waitUntil(lambda: f"{REPO}/{FILE}" in page.rows, timeout=WAIT)
    download = page.rows[f"{REPO}/{FILE}"]
    qtbot.waitUntil(
        lambda: "/s, " in download.status.text() and "left" in download.status.text(), timeout=WAIT
    )
    assert download.bar.value() > 0
    click(qtbot, download.pause)
    qtbot.waitUntil(lambda: download.pause.text() == "Resume", timeout=WAIT)
    assert download.status.text().endswith("— paused")
    part = harness.data_dir / "models" / ".partial" / (FILE + ".part")
    kept = part.stat().st_size
    assert kept > 0
    hub.release()
    click(qtbot, download.pause)  # now Resume
    qtbot.waitUntil(lambda: download.status.text() == "Downloaded and checked", timeout=WAIT)
    qtbot.waitUntil(lambda: page.installed.names() == [FILE], timeout=WAIT)
    assert hub.ranges(FILE)[-1] == f"bytes={kept}-"  # Resume asked only for the rest
    qtbot.waitUntil(
        lambda: any(
            page.quants.tree.topLevelItem(i).text(3) == "downloaded"
            for i in range(page.quants.tree.topLevelItemCount())
        ),
        timeout=WAIT,
    )

    page.installed.confirm = lambda name: name == FILE  # "Delete …?" answered Yes
    click_row(qtbot, page.installed.tree, FILE)
    click(qtbot, page.installed.remove)
    qtbot.waitUntil(lambda: page.installed.names() == [], timeout=WAIT)
    assert not (harness.data_dir / "models" / FILE).exists()


def test_cancel_deletes_the_part_and_the_row(harness: Any, hub: FakeHub) -> None:
    point_at(harness.data_dir, hub)
    harness.open()
    qtbot = harness.qtbot
    page = open_page(harness)
    search_and_pick(qtbot, page, FILE)
    hub.delay, hub.hold_after = 0.05, 100_000
    click(qtbot, page.quants.download)
    qtbot.waitUntil(lambda: f"{REPO}/{FILE}" in page.rows, timeout=WAIT)
    download = page.rows[f"{REPO}/{FILE}"]
    qtbot.waitUntil(lambda: download.bar.value() > 0, timeout=WAIT)
    click(qtbot, download.cancel)
    qtbot.waitUntil(lambda: not page.rows and page.no_downloads.isVisible(), timeout=WAIT)
    partial = harness.data_dir / "models" / ".partial"
    qtbot.waitUntil(lambda: not list(partial.iterdir()), timeout=WAIT)
    assert page.installed.names() == []


def test_import_refuses_a_file_that_is_not_gguf_and_takes_one_that_is(
    harness: Any, hub: FakeHub, tiny_model: bytes, tmp_path: Path
) -> None:
    point_at(harness.data_dir, hub)
    harness.open()
    qtbot = harness.qtbot
    page = open_page(harness)
    notes = tmp_path / "notes.gguf"
    notes.write_text("not a model")
    page.installed.ask_file = lambda: notes  # the file dialog's answer
    click(qtbot, page.installed.import_button)
    qtbot.waitUntil(lambda: page.message.isVisible(), timeout=WAIT)
    assert page.message.text().startswith("Not imported: notes.gguf is not a GGUF model file")

    mine = tmp_path / "mine.gguf"
    mine.write_bytes(tiny_model)
    page.installed.ask_file = lambda: mine
    click(qtbot, page.installed.import_button)
    qtbot.waitUntil(lambda: page.installed.names() == ["mine.gguf"], timeout=WAIT)
    item = page.installed.tree.topLevelItem(0)
    assert item.text(2) == "llama" and item.text(3) == "4,096 tokens" and item.text(4) == "import"


def test_a_file_being_downloaded_says_so_and_cannot_be_downloaded_twice(harness: Any, hub: FakeHub) -> None:
    """The file's row said "fits in memory" and Download stayed on while it downloaded; a
    second press was only refused with a message."""
    point_at(harness.data_dir, hub)
    harness.open()
    qtbot = harness.qtbot
    page = open_page(harness)
    search_and_pick(qtbot, page, FILE)
    fit = page.quants.tree.currentItem().text(3)
    hub.delay, hub.hold_after = 0.05, 100_000
    click(qtbot, page.quants.download)
    qtbot.waitUntil(lambda: f"{REPO}/{FILE}" in page.rows, timeout=WAIT)
    download = page.rows[f"{REPO}/{FILE}"]
    qtbot.waitUntil(lambda: page.quants.tree.currentItem().text(3) == "downloading", timeout=WAIT)
    assert not page.quants.download.isEnabled()
    click(qtbot, download.pause)
    qtbot.waitUntil(lambda: page.quants.tree.currentItem().text(3) == "paused", timeout=WAIT)
    assert not page.quants.download.isEnabled()
    click(qtbot, download.cancel)
    qtbot.waitUntil(lambda: page.quants.tree.currentItem().text(3) == fit, timeout=WAIT)
    assert page.quants.download.isEnabled()
    assert not page.message.isVisible()


def test_the_page_says_what_its_empty_lists_wait_for(harness: Any, hub: FakeHub) -> None:
    """The search list was blank while the Hub was asked (which can take many seconds), said
    "no match" as a row one could select, and the downloaded models' list was blank too."""
    point_at(harness.data_dir, hub)
    harness.open()
    qtbot = harness.qtbot
    page = open_page(harness)
    qtbot.waitUntil(lambda: page.installed.empty.isVisible(), timeout=WAIT)
    assert "import a .gguf file" in page.installed.empty.text()
    click(qtbot, page.search.button)  # nothing typed yet
    assert page.search.status.text().startswith("Type a few words") and page.search.box.hasFocus()

    qtbot.keyClicks(page.search.box, "nothing-like-this")
    qtbot.keyClick(page.search.box, Qt.Key.Key_Return)
    assert page.search.status.text() == "Searching the Hub for “nothing-like-this”…"
    qtbot.waitUntil(lambda: page.search.button.isEnabled(), timeout=WAIT)
    assert page.search.status.text().startswith("No GGUF model on the Hub matches “nothing-like-this”.")
    assert page.search.results.count() == 0

    page.search.box.clear()
    qtbot.keyClicks(page.search.box, "tiny")
    qtbot.keyClick(page.search.box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page.search.results.count() == 1, timeout=WAIT)
    assert not page.search.status.isVisible()


def test_tab_reaches_a_download_row_where_it_stands(harness: Any, hub: FakeHub) -> None:
    """Between the files' list and the downloaded models, not after every other control."""
    point_at(harness.data_dir, hub)
    harness.open()
    qtbot = harness.qtbot
    page = open_page(harness)
    search_and_pick(qtbot, page, FILE)
    hub.delay, hub.hold_after = 0.05, 100_000
    click(qtbot, page.quants.download)
    qtbot.waitUntil(lambda: f"{REPO}/{FILE}" in page.rows, timeout=WAIT)
    download = page.rows[f"{REPO}/{FILE}"]
    qtbot.waitUntil(lambda: not page.quants.download.isEnabled(), timeout=WAIT)
    page.quants.context.setFocus()
    seen = []
    for _ in range(3):
        qtbot.keyClick(page.focusWidget(), Qt.Key.Key_Tab)
        seen.append(page.focusWidget())
    assert seen == [download.pause, download.cancel, page.installed.tree]
    click(qtbot, download.cancel)
    qtbot.waitUntil(lambda: not page.rows, timeout=WAIT)


def test_the_runtime_row_reads_as_a_person_writes(harness: Any, hub: FakeHub, tiny_model: bytes) -> None:
    """ "15.0" after "Unload after (min)", a bare context figure, labels a screen reader could not
    tie to their boxes, "none: threadline[local]" in an empty program field, "1 GGUF files"."""
    hub.add("tiny/One-File-GGUF", "one.Q4_0.gguf", tiny_model)
    point_at(harness.data_dir, hub)
    harness.open()
    qtbot = harness.qtbot
    page = open_page(harness)
    runtime = page.runtime
    assert runtime.idle.text() == "15 min" and runtime.context.text().endswith(" tokens")
    runtime.idle.setFocus()
    runtime.idle.selectAll()
    qtbot.keyClicks(runtime.idle, "0.5")
    qtbot.keyClick(runtime.idle, Qt.Key.Key_Tab)
    assert runtime.idle.text() == "0.5 min"
    assert harness.engine.models.runtime_settings().idle_minutes == 0.5
    buddies = {label.text().replace("&", ""): label.buddy() for label in runtime.labels}
    assert buddies == {
        "Context": runtime.context,
        "GPU layers": runtime.gpu_layers,
        "Unload after": runtime.idle,
        "llama-server program": runtime.server,
    }
    assert "threadline[local]" in runtime.server.placeholderText()
    assert not runtime.server.placeholderText().startswith("none")
    search_and_pick(qtbot, page, FILE)
    assert page.quants.title.text() == f"{REPO}: 2 GGUF files"
    click_row(qtbot, page.search.results, "tiny/One-File-GGUF")
    qtbot.waitUntil(lambda: page.quants.title.text() == "tiny/One-File-GGUF: 1 GGUF file", timeout=WAIT)


def test_the_page_opens_with_the_search_box_ready_to_type_in(harness: Any, hub: FakeHub) -> None:
    """It opened with the runtime's context box focused: typed words went nowhere useful."""
    point_at(harness.data_dir, hub)
    harness.open()
    qtbot = harness.qtbot
    page = open_page(harness)
    assert page.focusWidget() is page.search.box
    box = page.search.box
    assert box.fontMetrics().horizontalAdvance(box.placeholderText()) < box.width() - 12
    qtbot.keyClicks(page.focusWidget(), "tiny")
    qtbot.keyClick(page.focusWidget(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page.search.results.count() == 1, timeout=WAIT)


def test_a_deep_models_folder_does_not_widen_the_page(harness: Any, hub: FakeHub, tmp_path: Path) -> None:
    """The folder's line was one unbreakable label: a deep folder made the page wider than a
    screen. It ends in "…" now, the whole path in its tooltip."""
    deep = tmp_path.joinpath(*[f"a-rather-long-folder-name-{n}" for n in range(12)])
    point_at(harness.data_dir, hub, folder=deep)
    harness.open()
    page = open_page(harness)
    assert page.minimumSizeHint().width() < 900
    assert str(deep) in page.folder_label.toolTip()
    assert page.folder_label.shown_text().endswith("…")


def test_show_log_twice_is_one_window_that_close_closes(harness: Any, hub: FakeHub) -> None:
    """Each press opened another window, and it had no Close button."""
    point_at(harness.data_dir, hub)
    harness.open()
    qtbot = harness.qtbot
    page = open_page(harness)
    click(qtbot, page.runtime.show_log)
    first = page.runtime.log_dialog
    qtbot.waitUntil(first.isVisible, timeout=WAIT)
    assert page.runtime.log_view.toPlainText() == ""
    assert "has not run yet" in page.runtime.log_view.placeholderText()
    log = harness.engine.models.runtime_log
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("Serving tiny.gguf\n", encoding="utf-8")
    click(qtbot, page.runtime.show_log)
    assert page.runtime.log_dialog is first
    assert page.runtime.log_view.toPlainText() == "Serving tiny.gguf\n"
    click(qtbot, page.runtime.log_close)
    qtbot.waitUntil(lambda: not first.isVisible(), timeout=WAIT)


def test_a_finished_download_is_cleared_by_its_one_button(harness: Any, hub: FakeHub) -> None:
    """A finished row kept a dead Pause and a dead Cancel for as long as the page was open."""
    point_at(harness.data_dir, hub)
    harness.open()
    qtbot = harness.qtbot
    page = open_page(harness)
    search_and_pick(qtbot, page, FILE)
    click(qtbot, page.quants.download)
    qtbot.waitUntil(lambda: f"{REPO}/{FILE}" in page.rows, timeout=WAIT)
    download = page.rows[f"{REPO}/{FILE}"]
    qtbot.waitUntil(lambda: download.status.text() == "Downloaded and checked", timeout=WAIT)
    assert not download.pause.isVisible()
    assert download.cancel.text() == "Clear" and download.cancel.accessibleName() == f"Clear {FILE}"
    click(qtbot, download.cancel)
    qtbot.waitUntil(lambda: not page.rows and page.no_downloads.isVisible(), timeout=WAIT)
    qtbot.waitUntil(lambda: page.installed.names() == [FILE], timeout=WAIT)
    page.close()
    page = open_page(harness)  # opened again: the finished download is in the list, not a row
    assert not page.rows and page.no_downloads.isVisible()
