"""The branch map beside the chat, driven as a person would, with the real engine and the replay server."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import click_action, texts, type_and_send, wait_idle
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.waiting import WAIT_MS

from threadline.core.tree_layout import NO_PARENT


def reply(text: str, **faults: Any) -> Any:
    return sse_response(openai_text_stream(split_text(text, 4)), **faults)


def open_map(harness: Any, tab: Any) -> Any:
    """Ctrl+Shift+B, as a person opens it; returns the panel once it is laid out."""
    harness.qtbot.keyClick(
        tab.composer.edit,
        Qt.Key.Key_B,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    panel = tab.branch_map
    harness.qtbot.waitUntil(lambda: panel.isVisible() and len(panel.map.tree_layout) > 0, timeout=WAIT_MS)
    return panel


def next_tab_stops(widget: Any, count: int) -> list[Any]:
    """The next ``count`` shown widgets that Tab would reach after ``widget`` (its focus chain)."""
    stops: list[Any] = []
    step = widget.nextInFocusChain()
    while len(stops) < count and step is not widget:
        if step.isVisible() and step.isEnabled() and step.focusPolicy() & Qt.FocusPolicy.TabFocus:
            stops.append(step)
        step = step.nextInFocusChain()
    return stops


def shown(tab: Any) -> list[str]:
    """The texts the chat view's model shows now (what is on screen, not only in the tree)."""
    model = tab.model
    return [model.data(model.index(row)) for row in range(model.rowCount())]


def click_node(harness: Any, panel: Any, message_id: str) -> None:
    point = panel.map.message_point(message_id)
    assert point is not None and panel.map.viewport().rect().contains(point)
    harness.qtbot.mouseClick(panel.map.viewport(), Qt.MouseButton.LeftButton, pos=point)


def two_versions_then_more(harness: Any, tab: Any) -> dict[str, str]:
    """Q1 → A1, A1 regenerated as A1b, then Q2 → A2 under A1b (the shown path)."""
    type_and_send(harness.qtbot, tab, "Question one")
    wait_idle(harness, tab)
    first = tab.live.conversation.path()[-1]
    click_action(harness.qtbot, tab, first.id, "regenerate")
    wait_idle(harness, tab)
    type_and_send(harness.qtbot, tab, "Question two")
    wait_idle(harness, tab)
    path = tab.live.conversation.path()
    return {"q1": path[0].id, "a1": first.id, "a1b": path[1].id, "q2": path[2].id, "a2": path[3].id}


def test_click_a_version_on_another_branch_shows_that_path(harness: Any) -> None:
    harness.server.enqueue(reply("First answer."), reply("Second answer."), reply("Answer two."))
    window = harness.open()
    tab = new_tab(harness)
    ids = two_versions_then_more(harness, tab)
    assert not tab.branch_map.isVisible()

    panel = open_map(harness, tab)
    assert window.menus.act_branch_map.isChecked()
    assert panel.map.hasFocus()
    layout = panel.map.tree_layout
    assert len(layout) == 5
    assert layout.columns[layout.index_of[ids["a2"]]] == 0  # the shown path runs down the left
    assert layout.columns[layout.index_of[ids["a1"]]] == 1
    assert "5 messages · 1 branch" in panel.counts.text()

    # What hovering tells: who, which version, an excerpt, and what a click will do.
    tip = panel.map.describe_node(layout.index_of[ids["a1"]], rich=True)
    assert "Assistant" in tip and "version 1 of 2" in tip and "First answer." in tip
    assert "Click to show this branch" in tip

    click_node(harness, panel, ids["a1"])
    harness.qtbot.waitUntil(lambda: tab.live.conversation.tree.active_leaf == ids["a1"], timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: shown(tab) == ["Question one", "First answer."], timeout=WAIT_MS)
    assert texts(tab) == ["Question one", "First answer."]
    assert harness.engine.sessions.live(tab.session_id).conversation.tree.active_leaf == ids["a1"]
    # The map follows: the clicked branch is now the shown path, in column 0.
    harness.qtbot.waitUntil(
        lambda: panel.map.tree_layout.columns[panel.map.tree_layout.index_of[ids["a1"]]] == 0
    )
    assert panel.map.tree_layout.on_active_path[panel.map.tree_layout.index_of[ids["a1"]]]


def test_keyboard_moves_between_branches_and_enter_shows_one(harness: Any) -> None:
    harness.server.enqueue(reply("First answer."), reply("Second answer."), reply("Answer two."))
    harness.open()
    tab = new_tab(harness)
    ids = two_versions_then_more(harness, tab)
    panel = open_map(harness, tab)
    view = panel.map
    assert view.current_id == ids["a2"]  # the selection starts where the shown path ends
    qtbot = harness.qtbot
    qtbot.keyClick(view, Qt.Key.Key_Up)
    qtbot.keyClick(view, Qt.Key.Key_Up)
    assert view.current_id == ids["a1b"]
    qtbot.keyClick(view, Qt.Key.Key_Right)  # the other version at that depth
    assert view.current_id == ids["a1"]
    assert "version 1 of 2" in view.accessibleDescription()
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: shown(tab) == ["Question one", "First answer."], timeout=WAIT_MS)
    # Back to the longer branch: Left to its version, Down to its question, Enter.
    qtbot.waitUntil(lambda: view.tree_layout.columns[view.tree_layout.index_of[ids["a1"]]] == 0)
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert view.current_id == ids["a1b"]
    qtbot.keyClick(view, Qt.Key.Key_Down)
    assert view.current_id == ids["q2"]
    qtbot.keyClick(view, Qt.Key.Key_Enter)
    expected = ["Question one", "Second answer.", "Question two", "Answer two."]
    qtbot.waitUntil(lambda: shown(tab) == expected, timeout=WAIT_MS)
    assert tab.live.conversation.tree.active_leaf == ids["a2"]
    # On the shown path, Enter only scrolls the chat there: the path stays.
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.current_id == ids["q1"]
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert tab.live.conversation.tree.active_leaf == ids["a2"]


def test_the_map_grows_while_a_reply_streams_without_relayout_per_token(harness: Any) -> None:
    harness.server.enqueue(reply("Short."))
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Hello")
    wait_idle(harness, tab)
    panel = open_map(harness, tab)
    assert len(panel.map.tree_layout) == 2

    long_text = " ".join(f"word{i}" for i in range(300))
    harness.server.enqueue(reply(long_text, chunk_delay=0.01))
    type_and_send(harness.qtbot, tab, "Tell me more")
    qtbot = harness.qtbot
    qtbot.waitUntil(lambda: len(panel.map.tree_layout) == 4, timeout=WAIT_MS)
    streaming = tab.live.conversation.path()[-1]
    assert panel.map.tree_layout.active_leaf == panel.map.tree_layout.index_of[streaming.id]
    qtbot.waitUntil(lambda: len(streaming.text) > 40, timeout=WAIT_MS)
    before = panel.relayouts
    qtbot.waitUntil(lambda: len(streaming.text) > 600, timeout=WAIT_MS)
    # Dozens of tokens arrived meanwhile; at most one unrelated update (the title) relaid the map.
    assert panel.relayouts - before <= 1
    wait_idle(harness, tab)
    qtbot.waitUntil(lambda: not panel._timer.isActive(), timeout=WAIT_MS)
    assert len(panel.map.tree_layout) == 4
    assert panel.map.tree_layout.ids[panel.map.tree_layout.active_leaf] == streaming.id


def test_the_choice_is_remembered_with_the_window(harness: Any) -> None:
    harness.server.enqueue(reply("Hi."))
    window = harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Hello")
    wait_idle(harness, tab)
    open_map(harness, tab)
    assert window.window_state()["branch_map"] is True
    # The panel's own close button hides it and unchecks the menu entry.
    harness.qtbot.mouseClick(tab.branch_map.close_button, Qt.MouseButton.LeftButton)
    assert not tab.branch_map.isVisible() and not window.menus.act_branch_map.isChecked()
    window.menus.act_branch_map.trigger()
    assert tab.branch_map.isVisible()
    harness.close()

    window = harness.open()
    harness.qtbot.waitUntil(lambda: window.tabs.current_tab() is not None, timeout=WAIT_MS)
    assert window.menus.act_branch_map.isChecked()
    reopened = window.tabs.current_tab()
    harness.qtbot.waitUntil(lambda: reopened.branch_map.isVisible(), timeout=WAIT_MS)
    layout = reopened.branch_map.map.tree_layout
    assert len(layout) == 2 and layout.active_leaf != NO_PARENT
    assert reopened.branch_map.map.accessibleName() == "Branch map"
    assert "2 messages" in reopened.branch_map.map.accessibleDescription()


def test_a_tangent_and_a_checkpoint_show_up_as_they_happen(harness: Any) -> None:
    harness.server.enqueue(reply("Main answer."), reply("Side answer."), reply("Back on track."))
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Main question")
    wait_idle(harness, tab)
    panel = open_map(harness, tab)
    main_reply = tab.live.conversation.path()[-1].id
    qtbot, engine, sid = harness.qtbot, harness.engine, tab.session_id

    harness.run(engine.controls.set_checkpoint(sid, "before the detour"))
    qtbot.waitUntil(
        lambda: panel.map._flags.get(panel.map.tree_layout.index_of[main_reply]) == "before the detour"
    )
    marker = harness.run(engine.controls.start_tangent(sid))
    type_and_send(qtbot, tab, "A side question")
    wait_idle(harness, tab)
    in_tangent = tab.live.conversation.path()[-1].id
    qtbot.waitUntil(lambda: in_tangent in panel.map.tree_layout.index_of, timeout=WAIT_MS)
    layout = panel.map.tree_layout
    assert layout.tangent[layout.index_of[marker.id]] and layout.tangent[layout.index_of[in_tangent]]
    assert layout.columns[layout.index_of[in_tangent]] == 0  # the tangent is what the chat shows now

    harness.run(engine.controls.end_tangent(sid))
    type_and_send(qtbot, tab, "Back to the main line")
    wait_idle(harness, tab)
    back = tab.live.conversation.path()[-1].id
    qtbot.waitUntil(lambda: back in panel.map.tree_layout.index_of, timeout=WAIT_MS)
    layout = panel.map.tree_layout
    assert layout.columns[layout.index_of[back]] == 0
    assert layout.columns[layout.index_of[in_tangent]] > 0  # the tangent stays browsable, to the right
    assert not layout.tangent[layout.index_of[back]]
    click_node(harness, panel, in_tangent)
    qtbot.waitUntil(lambda: shown(tab)[-1] == "Side answer.", timeout=WAIT_MS)


def test_the_panel_is_built_the_first_time_it_is_shown(harness: Any) -> None:
    """A chat opened with the map hidden makes no panel; the first Ctrl+Shift+B builds a working one."""
    from threadline.ui.chat.branch_map.branch_map_panel import BranchMapPanel

    harness.server.enqueue(reply("Hi."))
    window = harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Hello")
    wait_idle(harness, tab)
    assert tab.findChild(BranchMapPanel) is None
    assert tab.shown_branch_map is None

    panel = open_map(harness, tab)
    assert tab.findChild(BranchMapPanel) is panel
    assert tab.chat_split.indexOf(panel) == 1  # beside the chat, on its right
    assert panel.map.hasFocus() and panel.map.accessibleName() == "Branch map"
    assert "2 messages" in panel.counts.text()
    # Tab from the chat goes into the panel, as when it was built with the tab.
    assert next_tab_stops(tab.view, 2) == [panel.close_button, panel.map]
    # A tab opened while the map is shown has it from the start.
    other = new_tab(harness)
    harness.qtbot.waitUntil(lambda: other.shown_branch_map is not None, timeout=WAIT_MS)
    window.menus.act_branch_map.trigger()
    assert tab.shown_branch_map is None and other.shown_branch_map is None
