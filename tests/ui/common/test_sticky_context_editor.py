"""The sticky context editor, typed into and clicked as a person would (no engine needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog
from tests.support.waiting import WAIT_MS

from threadline.core.sticky import ContextHook, ContextSource, HookTiming, StickyContext
from threadline.ui.common.sticky_context_editor import StickyContextEditor


def make(qtbot: Any, *, show_share: bool) -> StickyContextEditor:
    editor = StickyContextEditor(None, show_share=show_share)
    qtbot.addWidget(editor)
    editor.show()
    qtbot.waitExposed(editor)
    return editor


def test_typed_sources_and_a_hook_make_the_value(qtbot: Any) -> None:
    editor = make(qtbot, show_share=True)
    with qtbot.waitSignal(editor.changed, timeout=WAIT_MS):
        qtbot.keyClicks(editor.source_edit, "~/notes/todo.md")
        qtbot.mouseClick(editor.add_source_button, Qt.MouseButton.LeftButton)
    assert editor.source_edit.text() == ""
    qtbot.keyClicks(editor.source_edit, "src/**/*.py")
    qtbot.keyClick(editor.source_edit, Qt.Key.Key_Return)
    qtbot.keyClicks(editor.source_edit, "src/**/*.py")  # a duplicate is not added twice
    qtbot.keyClick(editor.source_edit, Qt.Key.Key_Return)

    qtbot.mouseClick(editor.add_hook_button, Qt.MouseButton.LeftButton)
    row = editor.hook_rows[-1]
    qtbot.keyClicks(row.command, "git status --short")
    row.timing.setCurrentIndex(row.timing.findData(HookTiming.SESSION_START.value))
    row.timeout.setValue(5)
    editor.share_spin.setValue(50)

    assert editor.value() == StickyContext(
        sources=(ContextSource("~/notes/todo.md"), ContextSource("src/**/*.py")),
        hooks=(ContextHook("git status --short", timing=HookTiming.SESSION_START, timeout=5.0),),
    )
    assert editor.share() == 0.5

    editor.sources.setCurrentRow(0)
    qtbot.mouseClick(editor.remove_source_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(row.remove, Qt.MouseButton.LeftButton)
    assert editor.value() == StickyContext(sources=(ContextSource("src/**/*.py"),))


def test_set_value_round_trips_and_keeps_hidden_fields(qtbot: Any) -> None:
    editor = make(qtbot, show_share=False)
    assert not editor.share_spin.isVisible()
    context = StickyContext(
        sources=(ContextSource("a.txt", base="/srv/p"), ContextSource("/etc/hosts")),
        hooks=(ContextHook("date", timing=HookTiming.EVERY_PROMPT, timeout=3, output_cap=100, name="Clock"),),
    )
    changes: list[None] = []
    editor.changed.connect(lambda: changes.append(None))
    editor.set_value(context, 0.755)
    assert changes == []  # showing a value is not an edit
    assert editor.value() == context
    assert editor.share() == 0.755
    editor.set_value(StickyContext(), None)
    assert editor.value() == StickyContext()
    assert editor.hook_rows == []


def test_file_and_folder_buttons_add_what_was_picked(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = make(qtbot, show_share=True)
    picked = [str(tmp_path / "one.md"), str(tmp_path / "two.md")]
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(lambda *a, **k: (picked, "")))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(tmp_path)))
    qtbot.mouseClick(editor.browse_file_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(editor.browse_folder_button, Qt.MouseButton.LeftButton)
    assert [s.pattern for s in editor.value().sources] == [*picked, str(tmp_path)]
