"""Every chat is reachable from the sidebar: 5,000 generated chats, used as a person would.

The sidebar used to load the 500 most recent chats; older ones could not be opened
and the filter searched only those. Here the list is scrolled to its end (pages
are fetched on the way), the oldest chat opens by a click, the filter finds it
without any scrolling, and the date groups are in order.
"""

from __future__ import annotations

import itertools
from datetime import date, datetime, timedelta
from typing import Any

from PySide6.QtCore import QModelIndex, Qt
from tests.support.waiting import WAIT_MS
from tests.ui.conftest import AppHarness
from tests.ui.sessions.generated_sessions import Generated, generate, oldest_title

from threadline.core.messages import Message, MessageStatus
from threadline.ui.sessions.session_list_model import HEADER, PAGE_SIZE, KindRole, SessionRole

COUNT = 5000
STEP = timedelta(hours=12)
"""5,000 chats twelve hours apart reach back almost seven years: every kind of group shows."""


def _open_window(harness: AppHarness) -> Generated:
    made = generate(harness.data_dir, COUNT, step=STEP)
    harness.open()
    return made


def _click_row(harness: AppHarness, session_id: str) -> None:
    sidebar = harness.window.sidebar
    index = sidebar.model.index_of(session_id)
    sidebar.list.scrollTo(index)
    harness.qtbot.mouseClick(
        sidebar.list.viewport(), Qt.MouseButton.LeftButton, pos=sidebar.list.visualRect(index).center()
    )


def _open_tab_id(harness: AppHarness) -> str | None:
    tab = harness.window.tabs.current_tab()
    return None if tab is None else str(tab.session_id)


def test_scrolling_to_the_end_reaches_the_oldest_chat_which_opens(harness: AppHarness) -> None:
    _open_window(harness)
    sidebar = harness.window.sidebar
    model, bar = sidebar.model, sidebar.list.verticalScrollBar()
    assert model.loaded_count() < COUNT  # a first page, not everything
    oldest = Generated.session_id(COUNT - 1)
    pages = 0
    while not model.complete:
        before = model.loaded_count()

        def scrolled_further(b: int = before) -> bool:
            # Keep dragging the bar to the bottom, as a person would: right after a page
            # arrives the bar's range may not have grown yet, and setting the value it
            # already has would scroll nowhere (and so fetch nothing).
            bar.setValue(bar.maximum())
            return model.loaded_count() > b or model.complete

        harness.qtbot.waitUntil(scrolled_further, timeout=WAIT_MS)
        pages += 1
    assert model.loaded_count() == COUNT and pages >= COUNT // PAGE_SIZE - 1
    _click_row(harness, oldest)
    harness.qtbot.waitUntil(lambda: _open_tab_id(harness) == oldest, timeout=WAIT_MS)


def test_the_filter_finds_the_oldest_chat_without_scrolling(harness: AppHarness) -> None:
    _open_window(harness)
    sidebar = harness.window.sidebar
    oldest = Generated.session_id(COUNT - 1)
    assert sidebar.model.session(oldest) is None  # not loaded: only the store can find it
    sidebar.filter.setFocus()
    with harness.qtbot.waitSignal(sidebar.searchFinished, timeout=WAIT_MS):
        harness.qtbot.keyClicks(sidebar.filter, "zeppelin voyage")
    assert sidebar.stack.currentWidget() is sidebar.hits
    first = sidebar.results.result(0)
    assert first is not None and first.session_id == oldest and first.title == oldest_title(COUNT)
    rect = sidebar.hits.visualRect(sidebar.results.index(0, 0))
    harness.qtbot.mouseClick(sidebar.hits.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    harness.qtbot.waitUntil(lambda: _open_tab_id(harness) == oldest, timeout=WAIT_MS)


def _expected_label(day: date, today: date) -> str:
    """The group a person expects, written out independently of the app's code."""
    age = (today - day).days
    if age == 0:
        return "Today"
    if age == 1:
        return "Yesterday"
    if age <= 7:
        return "Previous 7 days"
    if age <= 30:
        return "Previous 30 days"
    if (today.year - day.year) * 12 + today.month - day.month < 12:
        return day.strftime("%B %Y")
    return str(day.year)


def test_date_groups_head_the_rows_in_order(harness: AppHarness) -> None:
    _open_window(harness)
    model = harness.window.sidebar.model
    harness.run(model.fetch_all(), timeout=60000)
    today = datetime.now().astimezone().date()
    headers: list[str] = []
    current = ""
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        if index.data(KindRole) == HEADER:
            current = str(index.data())
            headers.append(current)
            continue
        info = index.data(SessionRole)
        assert _expected_label(info.updated_at.astimezone().date(), today) == current, info.id
    assert headers[:4] == ["Today", "Yesterday", "Previous 7 days", "Previous 30 days"]
    months = [datetime.strptime(h, "%B %Y") for h in headers[4:] if not h.isdigit()]
    years = [int(h) for h in headers[4:] if h.isdigit()]
    assert headers[4:] == [f"{m:%B %Y}" for m in months] + [str(y) for y in years]  # months, then years
    assert len(months) >= 10 and len(years) >= 5
    assert all((a.year * 12 + a.month) - (b.year * 12 + b.month) == 1 for a, b in itertools.pairwise(months))
    assert years == list(range(years[0], years[0] - len(years), -1))


def test_the_preview_after_a_compaction_is_the_last_real_message(harness: AppHarness) -> None:
    generate(harness.data_dir, 3)
    harness.open()
    engine, sidebar = harness.engine, harness.window.sidebar
    info = harness.run(engine.sessions.new_session())
    prompt = Message.prompt("How do airships float?")
    reply = Message.reply(
        parent_id=prompt.id, text="Lifting gas, mostly helium.", status=MessageStatus.COMPLETE
    )
    summary = Message.summary(
        "The user asked about airships; the assistant explained.",
        parent_id=reply.id,
        summarised_through=reply.id,
    )
    harness.run(engine.store.append_messages(info.id, [prompt, reply]))
    harness.run(engine.store.append_messages(info.id, [summary]))
    harness.run(sidebar.load())
    index = sidebar.model.index_of(info.id)
    assert index.isValid()
    assert index.data(SessionRole).preview == "Lifting gas, mostly helium."
    assert sidebar.model.index(0, 0, QModelIndex()).data() == "Today"


def test_live_updates_reach_a_lazily_loaded_list(harness: AppHarness, qtmodeltester: Any) -> None:
    _open_window(harness)
    sidebar = harness.window.sidebar
    model = sidebar.model
    qtmodeltester.check(model)
    newest = Generated.session_id(0)
    harness.run(harness.engine.sessions.pin_session(newest, True))
    harness.qtbot.waitUntil(lambda: model.index(0, 0).data() == "Pinned", timeout=WAIT_MS)
    assert model.index(1, 0).data(SessionRole).id == newest
    unloaded = Generated.session_id(COUNT - 2)
    harness.run(harness.engine.sessions.rename_session(unloaded, "Renamed far below"))
    assert model.session(unloaded) is None  # below what is loaded: its page brings it
    harness.run(harness.engine.sessions.pin_session(unloaded, True))  # now it belongs at the top
    harness.qtbot.waitUntil(lambda: model.session(unloaded) is not None, timeout=WAIT_MS)
    assert model.row_of(unloaded) in (1, 2)
