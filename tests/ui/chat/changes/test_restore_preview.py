"""The restore preview, used as a person would: it lists what would happen to each file, the
conflicts are left alone until ticked one by one, the button counts the files, and pressing
it gives the forced set; Cancel gives nothing."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QCheckBox, QDialog, QLabel, QScrollArea
from tests.support.file_change_samples import ODD_NAME, ROOT, sample_plan

from threadline.core.file_changes import ABSENT, FileState, RestoreAction, RestorePlan, RestoreStep
from threadline.ui.chat.changes.restore_dialog import RestorePreviewDialog
from threadline.ui.common.theme import DARK, LIGHT

README = f"{ROOT}/README.md"


def open_preview(qtbot: Any, plan: RestorePlan, **kwargs: Any) -> RestorePreviewDialog:
    dialog = RestorePreviewDialog(plan, LIGHT, root=ROOT, **kwargs)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def texts(dialog: RestorePreviewDialog) -> list[str]:
    return [label.text() for label in dialog.findChildren(QLabel) if label.isVisible()]


def tick(qtbot: Any, box: QCheckBox) -> None:
    """Click the box where a person would: on its indicator, once it is scrolled into view."""
    scroll = box.window().findChild(QScrollArea)
    scroll.ensureWidgetVisible(box)
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))


def test_the_preview_lists_each_file_and_why(qtbot: Any) -> None:
    dialog = open_preview(qtbot, sample_plan())
    shown = texts(dialog)
    assert "Files as they were before turn 3" in shown
    assert "Will get their earlier content back (1)" in shown
    assert "Will be created again (1)" in shown
    assert "Will be deleted (1)" in shown
    assert "Changed since the tool wrote them (2)" in shown
    assert "Cannot be restored (1)" in shown
    for path in ("src/fetcher/cache.py", "old_notes.txt", "src/fetcher/lru/__init__.py", "assets/logo.png"):
        assert path in shown
    assert "Content not kept: larger than 2 MB" in shown
    assert any(t.startswith("Changed after the tool wrote it (you or another program") for t in shown)
    assert "notes/r\ufffdsum\ufffd\ufffd.txt" in shown  # a non-UTF-8 name, shown
    assert set(dialog.checks) == {README, ODD_NAME}  # only conflicts can be ticked; blocked cannot
    assert not any(box.isChecked() for box in dialog.checks.values())
    assert dialog.restore_button.text() == "Restore 3 files"


def test_ticking_conflicts_counts_them_and_restore_gives_the_forced_set(qtbot: Any) -> None:
    dialog = open_preview(qtbot, sample_plan())
    box = dialog.checks[README]
    tick(qtbot, box)
    assert box.isChecked()
    assert dialog.restore_button.text() == "Restore 4 files"
    tick(qtbot, dialog.checks[ODD_NAME])
    assert dialog.restore_button.text() == "Restore 5 files"
    tick(qtbot, dialog.checks[ODD_NAME])
    assert dialog.restore_button.text() == "Restore 4 files"
    with qtbot.waitSignal(dialog.restoreAccepted) as accepted:
        qtbot.mouseClick(dialog.restore_button, Qt.MouseButton.LeftButton)
    assert accepted.args == [frozenset({README})]
    assert dialog.result() == QDialog.DialogCode.Accepted


def test_cancel_restores_nothing(qtbot: Any) -> None:
    dialog = open_preview(qtbot, sample_plan())
    got: list[object] = []
    dialog.restoreAccepted.connect(got.append)
    tick(qtbot, dialog.checks[README])
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert dialog.result() == QDialog.DialogCode.Rejected
    assert got == []


def test_only_conflicts_waits_for_a_tick_and_undo_restore_uses_the_same_dialog(qtbot: Any) -> None:
    now, kept = FileState("bb", 2, kept=True), FileState("aa", 1, kept=True)
    plan = RestorePlan(
        "s1",
        "Files as they were before the restore",
        (
            RestoreStep(README, RestoreAction.CHANGE, kept, now, conflict="Changed after the restore"),
            RestoreStep(
                f"{ROOT}/gone.txt", RestoreAction.CREATE, kept, ABSENT, blocked="Snapshots are on laptop"
            ),
        ),
    )
    dialog = open_preview(qtbot, plan, title="Undo restore")
    assert dialog.windowTitle() == "Undo restore"
    assert dialog.restore_button.text() == "Restore 0 files"
    assert not dialog.restore_button.isEnabled()
    tick(qtbot, dialog.checks[README])
    assert dialog.restore_button.text() == "Restore 1 file"
    assert dialog.restore_button.isEnabled()
    dialog.set_colors(DARK)  # re-themed in place, ticks kept
    assert dialog.checks[README].isChecked()
