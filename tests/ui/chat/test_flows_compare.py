"""Comparing models in the window, as a person would: tick three models under "Compare", send,
watch three columns (one fails, one uses a tool, one streams slowly), continue with one, and the
next request carries only that reply. PNGs of the columns (wide and narrow) land in the pytest
temporary folder for a look."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from tests.integration.engine.test_compare import SLOW_TEXT, three_workers
from tests.integration.engine.test_engine_turns import LookupTool
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.ui.chat.test_flows_model_picker import open_picker_until

from threadline.core.compare import WorkerState
from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.engine.usage_report import PRICES_SETTING

TIMEOUT = 30000


def tick_in_compare_menu(harness: Any, tab: Any, labels: list[str]) -> None:
    """Open the Compare menu by clicking it, tick ``labels`` one click at a time — the menu
    stays open between the clicks — then close it with Esc."""
    menu = tab.composer.compare_button.menu()
    stayed_open: list[bool] = []

    def click_entries() -> None:
        if QApplication.activePopupWidget() is not menu:
            QTimer.singleShot(10, click_entries)
            return
        for label in labels:
            entry = next(a for a in menu.actions() if a.text() == label)
            QTest.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(entry).center())
            stayed_open.append(menu.isVisible() and entry.isChecked())
        QTest.keyClick(menu, Qt.Key.Key_Escape)

    QTimer.singleShot(0, click_entries)
    harness.qtbot.mouseClick(tab.composer.compare_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: not menu.isVisible(), timeout=TIMEOUT)
    assert stayed_open == [True] * len(labels)


def open_with_three_workers(harness: Any, lookup: Approval) -> Any:
    """The window on the replay server's three workers, the lookup tool offered with ``lookup``."""
    harness.server.models = ["gpt-4o-mini", "fails", "tools", "slow"]
    harness.server.responder = three_workers
    harness.open()
    harness.engine.tools.register(LookupTool())
    rules = (ApprovalRule("lookup", lookup),)
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig("default", "Default", enabled_tools=("lookup",), approval_rules=rules)
        )
    )
    # A known price for the slow model only (its stream reports 12 tokens in, 7 out).
    price = {"provider": "replay", "model": "slow", "input_per_mtok": 1000, "output_per_mtok": 2000}
    harness.run(harness.engine.settings.set_setting(PRICES_SETTING, [price]))
    return new_tab(harness)


def test_three_models_side_by_side_then_continue_with_one(harness: Any, tmp_path: Path) -> None:
    tab = open_with_three_workers(harness, Approval.ALLOW)
    open_picker_until(harness, tab, lambda: tab.composer.model_picker.findText("slow  ·  replay") >= 0)
    tick_in_compare_menu(harness, tab, ["fails  ·  replay", "tools  ·  replay", "slow  ·  replay"])
    assert tab.composer.compare_button.text() == "Compare · 3"

    busy: list[bool] = []
    tab.busyChanged.connect(busy.append)
    type_and_send(harness.qtbot, tab, "What is a threadline?")
    view = tab.compare_view
    harness.qtbot.waitUntil(lambda: view.isVisible() and len(view.columns) == 3, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: not view.running, timeout=TIMEOUT)
    wait_idle(harness, tab)
    assert busy == [True, False]  # one turn: busy from the prompt until every worker ended

    failed, tools, slow = view.columns
    assert failed.title.text() == "replay/fails" and failed.state.text() == WorkerState.FAILED.label
    assert "Model 'fails' was not found" in failed.body.toPlainText()  # the reason, in its column
    assert not failed.pick_button.isEnabled()  # nothing to continue with
    assert tools.state.text() == "Done" and "lookup: ok" in tools.body.toPlainText()
    assert "It means a long thread." in tools.body.toPlainText()
    assert slow.state.text() == "Done" and slow.body.toPlainText() == "".join(SLOW_TEXT).strip()
    assert "tokens" in slow.figures.text()  # the reply header's figures
    # Its cost, as the chat's reply header shows it: 12 × $1,000 + 7 × $2,000 per million.
    harness.qtbot.waitUntil(lambda: "$0.026" in slow.figures.text(), timeout=TIMEOUT)
    assert slow.figures.text().startswith("12 in · 7 out")
    assert "$" not in tools.figures.text()  # no price known for that model
    assert all(not c.stop_button.isVisible() for c in view.columns)

    shots = Path(os.environ.get("THREADLINE_SHOTS", tmp_path))
    harness.window.resize(1280, 820)
    harness.qtbot.waitUntil(lambda: view.columns[0].x() < view.columns[1].x(), timeout=TIMEOUT)
    tab.grab().save(str(shots / "compare-wide.png"))
    harness.window.resize(620, 900)
    harness.qtbot.waitUntil(lambda: view.columns[0].y() < view.columns[1].y(), timeout=TIMEOUT)
    tab.grab().save(str(shots / "compare-narrow.png"))
    harness.window.resize(1100, 760)

    slow_id = tab.live.conversation.tree.children(
        next(m.id for m in tab.live.conversation.tree if m.text == "What is a threadline?")
    )
    chosen = next(m for m in slow_id if m.metadata and m.metadata.model == "slow")
    harness.qtbot.mouseClick(slow.pick_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: not view.isVisible(), timeout=TIMEOUT)
    assert tab.live.conversation.tree.active_leaf == chosen.id
    harness.qtbot.waitUntil(lambda: tab.model.rowCount() == 2, timeout=TIMEOUT)

    # Continuing with one reply ends comparing: the next prompt goes to that model alone.
    assert tab.composer.compare_button.text() == "Compare" and not tab.composer.compare_button.targets()
    sent = len(harness.server.requests)
    type_and_send(harness.qtbot, tab, "And then?")
    wait_idle(harness, tab)
    request = next(r for r in harness.server.requests[sent:] if r.method == "POST")
    assert request.body["model"] == "slow"
    body = json.dumps(request.body["messages"])
    assert "slow0" in body and "long thread" not in body and "lookup" not in body


def test_a_workers_approval_says_which_model_asks(harness: Any) -> None:
    tab = open_with_three_workers(harness, Approval.ASK)
    open_picker_until(harness, tab, lambda: tab.composer.model_picker.findText("tools  ·  replay") >= 0)
    tick_in_compare_menu(harness, tab, ["tools  ·  replay", "slow  ·  replay"])
    type_and_send(harness.qtbot, tab, "What is a threadline?")
    harness.qtbot.waitUntil(lambda: tab.approval.isVisible(), timeout=TIMEOUT)
    assert tab.approval.title.text().startswith("replay/tools wants to")  # the column that asks
    row = tab.approval.rows[0]
    harness.qtbot.mouseClick(row.allow_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: not tab.compare_view.running, timeout=TIMEOUT)
    wait_idle(harness, tab)
    assert "lookup: ok" in tab.compare_view.columns[0].body.toPlainText()


def test_an_agent_and_a_model_side_by_side(harness: Any) -> None:
    """The Compare menu lists agents beside models; an agent's column answers with its own
    instructions (its request carries the agent's system prompt, the model's does not)."""
    harness.server.models = ["gpt-4o-mini", "slow"]
    harness.server.responder = three_workers
    harness.open()
    harness.run(
        harness.engine.agents.create_agent(AgentConfig("", "Pirate", system_prompt="Answer as a pirate."))
    )
    tab = new_tab(harness)
    open_picker_until(harness, tab, lambda: tab.composer.model_picker.findText("slow  ·  replay") >= 0)
    harness.qtbot.waitUntil(
        lambda: any(a.text() == "Pirate  ·  agent" for a in tab.composer.compare_button.menu().actions()),
        timeout=TIMEOUT,
    )
    tick_in_compare_menu(harness, tab, ["Pirate  ·  agent", "slow  ·  replay"])
    assert tab.composer.compare_button.text() == "Compare · 2"

    sent = len(harness.server.requests)
    type_and_send(harness.qtbot, tab, "Who are you?")
    view = tab.compare_view
    harness.qtbot.waitUntil(lambda: view.isVisible() and len(view.columns) == 2, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: not view.running, timeout=TIMEOUT)
    wait_idle(harness, tab)
    pirate, slow = view.columns
    assert pirate.title.text() == "Pirate" and pirate.state.text() == "Done"
    assert pirate.body.toPlainText() == "Next answer."
    assert slow.title.text() == "replay/slow" and slow.state.text() == "Done"
    bodies = {r.body["model"]: r.body for r in harness.server.requests[sent:] if r.method == "POST"}
    assert sorted(bodies) == ["gpt-4o-mini", "slow"]  # the agent names no model: the chat's
    assert bodies["gpt-4o-mini"]["messages"][0] == {"role": "system", "content": "Answer as a pirate."}
    assert "pirate" not in json.dumps(bodies["slow"]["messages"])


def test_the_compare_view_is_built_when_a_compare_starts(harness: Any) -> None:
    """No compare view until a compare starts; the one built then shows every column from the
    start, with the known price, and Tab reaches it right after the chat, as when every tab built it."""
    from threadline.ui.chat.compare.compare_view import CompareView

    tab = open_with_three_workers(harness, Approval.ALLOW)
    assert tab.findChild(CompareView) is None
    open_picker_until(harness, tab, lambda: tab.composer.model_picker.findText("slow  ·  replay") >= 0)
    tick_in_compare_menu(harness, tab, ["fails  ·  replay", "slow  ·  replay"])
    type_and_send(harness.qtbot, tab, "What is a threadline?")

    def built() -> Any:
        view = tab.findChild(CompareView)
        return view if view is not None and view.isVisible() else None

    harness.qtbot.waitUntil(lambda: built() is not None, timeout=TIMEOUT)
    view = built()
    assert view is tab.compare_view and len(view.columns) == 2
    harness.qtbot.waitUntil(lambda: not view.running, timeout=TIMEOUT)
    wait_idle(harness, tab)
    failed, slow = view.columns
    assert failed.state.text() == WorkerState.FAILED.label
    assert slow.state.text() == "Done" and slow.body.toPlainText() == "".join(SLOW_TEXT).strip()
    harness.qtbot.waitUntil(lambda: "$0.026" in slow.figures.text(), timeout=TIMEOUT)
    step = tab.view.nextInFocusChain()
    while not (step.isVisible() and step.focusPolicy() & Qt.FocusPolicy.TabFocus):
        step = step.nextInFocusChain()
    assert step is view.close_button
    harness.qtbot.mouseClick(view.close_button, Qt.MouseButton.LeftButton)
    assert not view.isVisible()


def test_the_compare_view_follows_a_theme_change(harness: Any) -> None:
    """A compare view already built takes the new colours when the user switches the theme
    (View → Theme), like the rest of the chat; it kept the old theme's before."""
    from threadline.ui.common.theme import DARK, LIGHT, ThemeChoice

    tab = open_with_three_workers(harness, Approval.ALLOW)
    harness.window.set_theme(ThemeChoice.LIGHT)
    view = tab.compare_view
    assert f"background: {LIGHT.base}" in view.styleSheet()
    harness.window.set_theme(ThemeChoice.DARK)
    harness.qtbot.waitUntil(lambda: f"background: {DARK.base}" in view.styleSheet(), timeout=TIMEOUT)
    harness.window.set_theme(ThemeChoice.LIGHT)
