"""The status line's session totals: "5 files changed +40 −12", hidden while nothing changed;
a click lists the files, and picking one names its real path."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMainWindow, QWidget
from tests.support.file_change_samples import ODD_NAME, ROOT, sample_totals

from threadline.ui.chat.changes.file_list import ROW_ROLE
from threadline.ui.chat.changes.session_totals import SessionTotalsButton, totals_parts
from threadline.ui.common.theme import LIGHT


def status_window(qtbot: Any) -> tuple[QMainWindow, SessionTotalsButton]:
    window = QMainWindow()
    qtbot.addWidget(window)
    window.setCentralWidget(QWidget())
    window.statusBar().addWidget(QLabel("gpt-4o-mini (replay)"), 1)
    totals = SessionTotalsButton(LIGHT, ROOT)
    window.statusBar().addPermanentWidget(totals)
    window.resize(800, 300)
    window.show()
    qtbot.waitExposed(window)
    return window, totals


def test_the_totals_show_only_once_a_file_changed(qtbot: Any) -> None:
    _window, totals = status_window(qtbot)
    assert not totals.isVisible()
    totals.set_totals(sample_totals())
    assert totals.isVisible()
    assert totals.text() == "5 files changed +40 \u221212"
    assert [t for t, _ in totals_parts(totals.totals, LIGHT)] == ["5 files changed", "+40", "\u221212"]
    assert totals.width() >= totals.sizeHint().width()
    totals.set_totals([])
    assert not totals.isVisible()


def test_a_click_lists_the_files_and_picking_one_names_its_path(qtbot: Any) -> None:
    _window, totals = status_window(qtbot)
    totals.set_totals(sample_totals())
    qtbot.mouseClick(totals, Qt.MouseButton.LeftButton)
    popup = totals.popup
    qtbot.waitUntil(popup.isVisible)
    rows = [popup.list.item(i).data(ROW_ROLE) for i in range(popup.list.count())]
    assert [(r.name, r.detail, r.added, r.removed) for r in rows][:2] == [
        ("cache.py", "src/fetcher", "+28", "\u22129"),
        ("README.md", "", "+4", "\u22121"),
    ]
    assert rows[-1].name == "r\ufffdsum\ufffd\ufffd.txt"
    odd = popup.list.item(popup.list.count() - 1)
    assert "changed once" in odd.toolTip()
    rect = popup.list.visualItemRect(odd)
    with qtbot.waitSignal(totals.fileClicked) as picked:
        qtbot.mouseClick(popup.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert picked.args == [ODD_NAME]  # the real path, surrogate escapes and all
    qtbot.waitUntil(lambda: not popup.isVisible())


def test_escape_closes_the_list(qtbot: Any) -> None:
    _window, totals = status_window(qtbot)
    totals.set_totals(sample_totals())
    totals.show_popup()
    qtbot.waitUntil(totals.popup.isVisible)
    qtbot.keyClick(totals.popup.list, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not totals.popup.isVisible())


def test_the_list_works_from_the_keyboard(qtbot: Any) -> None:
    _window, totals = status_window(qtbot)
    totals.set_totals(sample_totals())
    totals.setFocus()
    qtbot.keyClick(totals, Qt.Key.Key_Space)
    qtbot.waitUntil(totals.popup.isVisible)
    qtbot.keyClick(totals.popup.list, Qt.Key.Key_Down)
    with qtbot.waitSignal(totals.fileClicked) as picked:
        qtbot.keyClick(totals.popup.list, Qt.Key.Key_Return)
    assert picked.args == [f"{ROOT}/README.md"]
