"""A table wider than the message column scrolls sideways in place: Shift+wheel, a sideways
wheel or swipe, dragging or clicking its thin bar, Shift+Left/Right on the current message.
Driven with real wheel, mouse and key events on the chat view; what is painted is checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QImage, QWheelEvent
from PySide6.QtWidgets import QApplication
from tests.support.ui_fakes import FakeLive
from tests.support.waiting import WAIT_MS
from tests.ui.chat.test_wide_tables import NARROW, WIDE

from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.chat.view.table_scroll import ScrolledTable
from threadline.ui.common.theme import DARK


def make(qtbot: Any, live: FakeLive, width: int = 760) -> ChatView:
    view = ChatView()
    view.setModel(ConversationModel(live, view))
    view.resize(width, 560)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    return view


def wide_table(qtbot: Any, view: ChatView, message_id: str) -> ScrolledTable:
    found: list[ScrolledTable] = []

    def painted() -> bool:
        view.ensure_visible_geometry()
        found[:] = [t for g in view._visible if g.message_id == message_id for t in g.tables]
        return bool(found)

    qtbot.waitUntil(painted, timeout=WAIT_MS)
    return found[0]


def current(view: ChatView, message_id: str) -> ScrolledTable:
    view.ensure_visible_geometry()
    return next(t for g in view._visible if g.message_id == message_id for t in g.tables)


def wheel(view: ChatView, at: QPointF, *, x: int = 0, y: int = 0, shift: bool = False) -> None:
    modifiers = Qt.KeyboardModifier.ShiftModifier if shift else Qt.KeyboardModifier.NoModifier
    event = QWheelEvent(
        at,
        QPointF(view.viewport().mapToGlobal(at.toPoint())),
        QPoint(0, 0),
        QPoint(x, y),
        Qt.MouseButton.NoButton,
        modifiers,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(view.viewport(), event)


def table_pixels(view: ChatView, table: ScrolledTable) -> QImage:
    return view.viewport().grab(table.rect.toRect()).toImage()


def test_shift_wheel_scrolls_the_table_and_only_the_table(qtbot: Any, tmp_path: Path) -> None:
    live = FakeLive()
    _prompt, reply = live.exchange("Compare the regions", WIDE)
    view = make(qtbot, live)
    table = wide_table(qtbot, view, reply.id)
    assert table.offset == 0 and table.max_offset > 500, "the table runs far past the column"
    before = table_pixels(view, table)
    chat_scroll = view.verticalScrollBar().value()

    wheel(view, table.rect.center(), y=-120, shift=True)  # one notch down = to the right
    moved = current(view, reply.id)
    assert moved.offset > 0
    assert table_pixels(view, moved) != before, "the table is painted shifted"
    assert view.verticalScrollBar().value() == chat_scroll, "the chat did not scroll"
    assert moved.thumb.left() > table.thumb.left(), "the bar's thumb follows"

    wheel(view, table.rect.center(), x=-240)  # a sideways wheel or swipe scrolls it too
    assert current(view, reply.id).offset > moved.offset
    wheel(view, table.rect.center(), y=-120)  # a plain wheel is the chat's, not the table's
    assert current(view, reply.id).offset > moved.offset
    offset = current(view, reply.id).offset
    assert offset == view.tables.offsets.get(reply.id, table.index, table.max_offset)

    for _ in range(200):  # past the end: it stops at the table's right edge
        wheel(view, table.rect.center(), y=-120, shift=True)
    assert current(view, reply.id).offset == current(view, reply.id).max_offset
    view.viewport().grab().save(str(tmp_path / "wide-table-scrolled-end.png"))


def test_dragging_the_bar_and_clicking_its_track(qtbot: Any, tmp_path: Path) -> None:
    live = FakeLive()
    _prompt, reply = live.exchange("Compare the regions", WIDE)
    view = make(qtbot, live)
    table = wide_table(qtbot, view, reply.id)
    grab = table.thumb.center().toPoint()
    qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=grab)
    middle = QPoint(int(table.bar.center().x()), grab.y())
    qtbot.mouseMove(view.viewport(), pos=middle)
    dragged = current(view, reply.id)
    assert 0.3 * dragged.max_offset < dragged.offset < 0.7 * dragged.max_offset
    qtbot.mouseMove(view.viewport(), pos=QPoint(int(table.bar.right()) + 50, grab.y()))
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=middle)
    assert current(view, reply.id).offset == dragged.max_offset, "dragged to the end, held there"
    view.set_colors(DARK)
    view.viewport().grab().save(str(tmp_path / "wide-table-dragged-dark.png"))

    end = current(view, reply.id)
    left_of_thumb = QPoint(int(end.bar.left()) + 4, grab.y())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=left_of_thumb)
    paged = current(view, reply.id)
    assert paged.offset == max(0.0, end.offset - end.rect.width() * 0.9), "a click beside the thumb pages"


def test_shift_arrows_scroll_the_current_messages_table(qtbot: Any) -> None:
    live = FakeLive()
    _prompt, reply = live.exchange("Compare the regions", WIDE)
    view = make(qtbot, live)
    table = wide_table(qtbot, view, reply.id)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=table.rect.center().toPoint())
    assert view.current_message_id() == reply.id
    qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    right = current(view, reply.id).offset
    assert right > 0
    qtbot.keyClick(view, Qt.Key.Key_Left, Qt.KeyboardModifier.ShiftModifier)
    assert 0 < current(view, reply.id).offset < right
    assert view.current_message_id() == reply.id, "the arrows did not move to another message"


def test_a_table_that_fits_has_no_bar_and_a_wider_window_shows_more(qtbot: Any) -> None:
    live = FakeLive()
    _p1, narrow = live.exchange("Small", NARROW)
    _p2, wide = live.exchange("Compare the regions", WIDE)
    view = make(qtbot, live, width=700)
    table = wide_table(qtbot, view, wide.id)
    view.ensure_visible_geometry()
    assert not [t for g in view._visible if g.message_id == narrow.id for t in g.tables]
    for _ in range(200):
        wheel(view, table.rect.center(), y=-120, shift=True)
    at_end = current(view, wide.id)
    assert at_end.offset == at_end.max_offset
    view.resize(1100, 560)  # more of the table fits: the offset is clamped to the new end
    qtbot.waitUntil(lambda: current(view, wide.id).max_offset < at_end.max_offset, timeout=WAIT_MS)
    wider = current(view, wide.id)
    assert wider.offset == wider.max_offset


def test_find_scrolls_a_wide_table_to_its_match(qtbot: Any, tmp_path: Path) -> None:
    from tests.ui.chat.test_find import find, open_host

    live = FakeLive()
    _prompt, reply = live.exchange("Compare the regions", WIDE)
    host = open_host(qtbot, live)
    table = wide_table(qtbot, host.view, reply.id)
    assert table.offset == 0
    bar = find(qtbot, host, "311 units")  # the last column, far past the column's edge
    qtbot.waitUntil(lambda: current(host.view, reply.id).offset > 0, timeout=WAIT_MS)
    shown = current(host.view, reply.id)
    assert shown.offset > 0.8 * shown.max_offset, "the last column is brought into view"
    assert bar.count.text().startswith("1 of 1")
    host.view.viewport().grab().save(str(tmp_path / "wide-table-find.png"))
    qtbot.keyClick(bar.edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(bar.edit, "region 0")  # the first column: back to the left
    qtbot.waitUntil(lambda: current(host.view, reply.id).offset < shown.offset, timeout=WAIT_MS)
