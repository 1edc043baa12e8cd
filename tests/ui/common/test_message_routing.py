"""The message bridge decides where a message shows (docs/ui-layout.md, "Telling the user").

A site says what happened; the bridge routes: an error a handler claims by its kind goes
only there; a message about a chat goes to the window (its tab's banner and the status
bar); otherwise the topmost visible dialog that claimed the bridge shows it inline; else
the status bar. The last test keeps new sites from choosing a sink of their own.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

from threadline.engine.errors import SessionClosedError
from threadline.store.errors import CorruptDatabaseError
from threadline.ui.common.inline_messages import claim_while_open, show_in_label
from threadline.ui.common.message_bridge import MessageBridge, UserMessage

UI = Path(__file__).resolve().parents[3] / "desktop" / "threadline" / "ui"


class Dialog(QDialog):
    """A dialog that asks the engine for something and shows the answer in its own line."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.message = QLabel()
        self.message.hide()
        QVBoxLayout(self).addWidget(self.message)
        self.bridge = claim_while_open(self, self)

    def show_user_message(self, message: UserMessage) -> None:
        show_in_label(self.message, message)


def _window(qtbot: Any) -> tuple[QWidget, MessageBridge, list[UserMessage]]:
    window = QWidget()
    window.bridge = MessageBridge(window)  # type: ignore[attr-defined]
    qtbot.addWidget(window)
    window.show()
    shown: list[UserMessage] = []
    window.bridge.shown.connect(shown.append)  # type: ignore[attr-defined]
    return window, window.bridge, shown  # type: ignore[attr-defined]


def test_without_a_dialog_a_message_goes_to_the_window(qtbot: Any) -> None:
    _window_widget, bridge, shown = _window(qtbot)
    assert bridge.report(SessionClosedError(), context="Could not rename the chat")
    assert [m.text for m in shown] == [f"Could not rename the chat: {SessionClosedError.default_message}"]


def test_the_topmost_visible_dialog_shows_it_and_lets_go_when_closed(qtbot: Any) -> None:
    window, bridge, shown = _window(qtbot)
    settings = Dialog(window)
    settings.show()
    editor = Dialog(settings)
    assert editor.bridge is bridge and settings.bridge is bridge  # the window's, reached through parents
    editor.show()
    bridge.error("Not saved: the disk is full.")
    assert editor.message.text() == "Not saved: the disk is full." and editor.message.isVisible()
    assert settings.message.text() == "" and shown == []

    editor.hide()  # hidden (not closed): the next visible claim shows it
    bridge.error("Could not connect.")
    assert settings.message.text() == "Could not connect."

    editor.done(0)
    settings.done(0)  # closed: released
    bridge.info("Exported to /tmp/a.md")
    assert [m.text for m in shown] == ["Exported to /tmp/a.md"]


def test_a_message_about_a_chat_goes_to_the_window_even_with_a_dialog_open(qtbot: Any) -> None:
    window, bridge, shown = _window(qtbot)
    dialog = Dialog(window)
    dialog.show()
    bridge.report(SessionClosedError(), context="Could not change the model", session_id="s1")
    assert [(m.text.split(":")[0], m.session_id) for m in shown] == [("Could not change the model", "s1")]
    assert dialog.message.text() == ""


def test_a_dialog_without_a_window_gets_a_bridge_of_its_own(qtbot: Any) -> None:
    lone = QWidget()
    qtbot.addWidget(lone)
    dialog = Dialog(lone)
    dialog.show()
    dialog.bridge.report(SessionClosedError(), context="Not saved")
    assert dialog.message.text().startswith("Not saved: ")


def test_an_error_with_a_place_of_its_own_goes_only_there(qtbot: Any, tmp_path: Path) -> None:
    window, bridge, shown = _window(qtbot)
    dialog = Dialog(window)
    dialog.show()
    handled: list[BaseException] = []
    bridge.intercept(lambda err: isinstance(err, CorruptDatabaseError) and not handled.append(err))
    damaged = CorruptDatabaseError("file is not a database", database=tmp_path / "t.db")
    assert bridge.report(damaged, context="Could not open the chat")
    assert handled == [damaged] and shown == [] and dialog.message.text() == ""


def _spawn_calls(tree: ast.AST) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == "spawn" or getattr(node.func, "attr", None) == "spawn")
    ]


SHOWING = {"setText", "show_message", "show_error", "_say", "_error", "show_control_error", "emit"}
"""Calls that put text in front of the user: an ``on_failed`` must not make them."""


def test_no_spawn_site_picks_its_own_sink() -> None:
    """Every ``spawn`` in ui/ says how to reach the bridge (``tell``), none passes ``on_error``,
    and an ``on_failed`` given inline only puts state back: it shows no text."""
    problems: list[str] = []
    calls = 0
    for path in sorted(UI.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for call in _spawn_calls(tree):
            calls += 1
            where = f"{path.relative_to(UI)}:{call.lineno}"
            names = {kw.arg for kw in call.keywords}
            if "on_error" in names:
                problems.append(f"{where} passes on_error")
            if "tell" not in names:
                problems.append(f"{where} has no tell=")
            for kw in call.keywords:
                if kw.arg == "on_failed" and isinstance(kw.value, ast.Lambda):
                    shows = {
                        n.func.attr
                        for n in ast.walk(kw.value)
                        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    } & SHOWING
                    if shows:
                        problems.append(f"{where} on_failed shows text ({', '.join(sorted(shows))})")
    assert calls > 80  # the check saw the sites
    assert problems == []
