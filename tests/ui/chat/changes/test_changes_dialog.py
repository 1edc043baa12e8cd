"""The turn's changes dialog, used as a person would: it opens on the first file, a click on
another file asks for its diff, the diff is coloured line by line, notes stand in for diffs
that cannot be shown, and the buttons say what was chosen."""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QTextFormat
from PySide6.QtWidgets import QDialog
from tests.support.file_change_samples import LOGO, ODD_NAME, ROOT, sample_diff, sample_turn

from threadline.core.file_changes import ChangeKind, FileChange, FileDiff
from threadline.ui.chat.changes.change_colours import change_colours
from threadline.ui.chat.changes.changes_dialog import TurnChangesDialog
from threadline.ui.chat.changes.diff_lines import LineKind
from threadline.ui.chat.changes.diff_pane import LOADING
from threadline.ui.chat.changes.diff_view import DiffView
from threadline.ui.chat.changes.file_list import ROW_ROLE
from threadline.ui.common.theme import DARK, LIGHT

CACHE = f"{ROOT}/src/fetcher/cache.py"


def open_dialog(qtbot: Any, *, answer: bool = True) -> tuple[TurnChangesDialog, list[FileChange]]:
    dialog = TurnChangesDialog(sample_turn(), LIGHT, root=ROOT)
    qtbot.addWidget(dialog)
    asked: list[FileChange] = []
    dialog.diffRequested.connect(asked.append)
    if answer:
        dialog.diffRequested.connect(lambda change: dialog.show_diff(sample_diff(change)))
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog, asked


def click_file(qtbot: Any, dialog: TurnChangesDialog, path: str) -> None:
    row = next(i for i, change in enumerate(dialog.changes) if change.path == path)
    item = dialog.files.item(row)
    dialog.files.scrollToItem(item)
    rect = dialog.files.visualItemRect(item)
    qtbot.mouseClick(dialog.files.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def shown_lines(dialog: TurnChangesDialog) -> list[str]:
    return dialog.pane.view.toPlainText().splitlines()


def test_the_dialog_opens_on_the_first_file_and_colours_its_diff(qtbot: Any) -> None:
    dialog, asked = open_dialog(qtbot)
    qtbot.waitUntil(lambda: dialog.pane.stack.currentWidget() is dialog.pane.view)
    assert [c.path for c in asked] == [CACHE]
    assert dialog.windowTitle() == "Changes in turn 3"
    assert dialog.pane.title.text() == "src/fetcher/cache.py"
    lines = shown_lines(dialog)
    assert lines[0].startswith("@@ -1,18 +1,24 @@")
    assert "+from __future__ import annotations" in lines
    assert "-    def get(self, key):" in lines
    assert not any(line.startswith(("---", "+++")) for line in lines)  # the file headers are left out
    colours = change_colours(LIGHT, LIGHT.code_bg)
    doc = dialog.pane.view.document()
    kinds = {LineKind.ADDED: colours.added_bg, LineKind.REMOVED: colours.removed_bg}
    seen = set()
    for number, row in enumerate(dialog.pane.view.rows):
        block = doc.findBlockByNumber(number)
        assert block.text() == row.text
        assert block.blockFormat().property(QTextFormat.Property.UserProperty) == row.kind.value
        if row.kind in kinds:
            assert block.blockFormat().background().color() == QColor(kinds[row.kind]), row
            seen.add(row.kind)
        elif row.kind is LineKind.CONTEXT:
            assert block.blockFormat().background().style() == Qt.BrushStyle.NoBrush
    assert seen == set(kinds)
    hunk = doc.findBlockByNumber(0)
    assert hunk.begin().fragment().charFormat().foreground().color() == QColor(LIGHT.muted)
    # Code colours on top of the backgrounds: "import" is not in the plain text colour.
    added = next(
        i for i, r in enumerate(dialog.pane.view.rows) if r.text == "+from __future__ import annotations"
    )
    block = doc.findBlockByNumber(added)
    colours_in_line = set()
    it = block.begin()
    while not it.atEnd():
        colours_in_line.add(it.fragment().charFormat().foreground().color().name())
        it += 1
    assert len(colours_in_line) >= 3, colours_in_line  # the green marker, keywords, names
    # An edited line marks what changed in it: ": int" and " -> None" in the new __init__.
    edited = next(
        i for i, r in enumerate(dialog.pane.view.rows) if "def __init__(self, capacity: int)" in r.text
    )
    block = doc.findBlockByNumber(edited)
    marked = ""
    it = block.begin()
    while not it.atEnd():
        fragment = it.fragment()
        if fragment.charFormat().background().color() == QColor(colours.added_word_bg):
            marked += fragment.text()
        it += 1
    assert marked == ": int -> None"
    # The gutter's numbers follow the hunks: a removed line has its old number only.
    removed = next(r for r in dialog.pane.view.rows if r.text == "-    def get(self, key):")
    assert (removed.old, removed.new) == (11, None)
    assert dialog.pane.view.gutter_width() > 0


def test_a_click_on_another_file_asks_for_its_diff_and_a_binary_file_says_so(qtbot: Any) -> None:
    dialog, asked = open_dialog(qtbot)
    qtbot.waitUntil(lambda: len(asked) == 1)
    with qtbot.waitSignal(dialog.diffRequested) as request:
        click_file(qtbot, dialog, LOGO)
    assert request.args[0].path == LOGO
    qtbot.waitUntil(lambda: dialog.pane.note == "Binary file changed\n14 KB \u2192 16 KB")
    assert dialog.pane.stack.currentWidget() is dialog.pane.message
    assert dialog.pane.title.text() == "assets/logo.png"
    assert dialog.files.item(dialog.files.currentRow()).data(ROW_ROLE).added == "bin"


def test_an_answer_for_a_file_no_longer_selected_waits_for_that_file(qtbot: Any) -> None:
    dialog, asked = open_dialog(qtbot, answer=False)
    qtbot.waitUntil(lambda: len(asked) == 1)
    readme = f"{ROOT}/README.md"
    click_file(qtbot, dialog, readme)
    assert dialog.pane.note == LOADING
    late = sample_diff(asked[0])  # cache.py's diff arrives after the user moved on
    dialog.show_diff(late)
    assert dialog.pane.note == LOADING
    assert dialog.pane.title.text() == "README.md"
    dialog.show_diff(FileDiff(readme, text="@@ -1 +1 @@\n-a\n+b\n"))
    assert shown_lines(dialog) == ["@@ -1 +1 @@", "-a", "+b"]
    click_file(qtbot, dialog, CACHE)  # kept: shown at once, not asked again
    assert dialog.pane.title.text() == "src/fetcher/cache.py"
    assert dialog.pane.stack.currentWidget() is dialog.pane.view
    assert [c.path for c in asked] == [CACHE, readme]


def test_a_rename_reads_as_a_rename(qtbot: Any) -> None:
    dialog, _asked = open_dialog(qtbot)
    helpers = f"{ROOT}/src/fetcher/helpers.py"
    click_file(qtbot, dialog, helpers)
    row = dialog.files.item(dialog.files.currentRow()).data(ROW_ROLE)
    assert (row.kind, row.name, row.detail) == (ChangeKind.RENAMED, "helpers.py", "\u2190 util.py")
    assert dialog.pane.title.text() == "src/fetcher/util.py \u2192 src/fetcher/helpers.py"
    assert dialog.pane.kind.text() == "renamed"
    qtbot.waitUntil(lambda: "content unchanged" in dialog.pane.note)


def test_undo_and_close_say_what_was_chosen(qtbot: Any) -> None:
    dialog, _asked = open_dialog(qtbot)
    with qtbot.waitSignal(dialog.undoRequested):
        qtbot.mouseClick(dialog.undo_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.close_button, Qt.MouseButton.LeftButton)
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert not dialog.isVisible()


def test_a_name_that_is_not_utf8_is_shown_with_replacement_characters(qtbot: Any) -> None:
    dialog, _asked = open_dialog(qtbot)
    click_file(qtbot, dialog, ODD_NAME)
    qtbot.waitUntil(lambda: dialog.pane.stack.currentWidget() is dialog.pane.view)
    title = dialog.pane.title.text()
    assert title == "notes/r\ufffdsum\ufffd\ufffd.txt"
    title.encode("utf-8")  # no lone surrogate left
    row = dialog.files.item(dialog.files.currentRow()).data(ROW_ROLE)
    assert row.name == "r\ufffdsum\ufffd\ufffd.txt"
    assert dialog.selected is not None and dialog.selected.path == ODD_NAME  # the real path is kept
    assert not dialog.grab().isNull()  # every row painted, the odd name among them


def test_the_dark_theme_recolours_the_diff(qtbot: Any) -> None:
    dialog, _asked = open_dialog(qtbot)
    qtbot.waitUntil(lambda: dialog.pane.stack.currentWidget() is dialog.pane.view)
    dialog.set_colors(DARK)
    added = next(i for i, r in enumerate(dialog.pane.view.rows) if r.kind is LineKind.ADDED)
    block = dialog.pane.view.document().findBlockByNumber(added)
    assert block.blockFormat().background().color() == QColor(change_colours(DARK, DARK.code_bg).added_bg)
    assert QColor(change_colours(DARK, DARK.code_bg).added_bg).lightness() < 100


def test_content_that_is_not_utf8_shows_replacement_characters_and_keeps_tabs(qtbot: Any) -> None:
    view = DiffView(LIGHT)
    qtbot.addWidget(view)
    content = os.fsdecode(b"\tcaf\xe9 = 1")  # a Latin-1 line, kept as surrogate escapes
    view.show_diff(f"@@ -1 +1 @@\n-{content}\n+\tcafe = 1\x07\n", "notes.py")
    view.show()
    qtbot.waitExposed(view)
    assert view.toPlainText().splitlines() == ["@@ -1 +1 @@", "-\tcaf\ufffd = 1", "+\tcafe = 1\u2407"]
    assert not view.grab().isNull()
