"""Slash commands in the composer, typed as a person would: the list, picking, running, refusing.

Real Engine, real SQLite, the replay server as the provider; every request it gets is
recorded, so "nothing was sent" is checked where the model would have seen it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from tests.support.sse_server import ScriptedResponse, openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.messages import MessageKind
from threadline.core.slash_commands import COMMANDS, CommandName
from threadline.ui.chat.view.conversation_model import MessageRole

SUMMARY = "Q1 and Q2 were about plants."


def reply(text: str) -> ScriptedResponse:
    return sse_response(openai_text_stream([text]))


def shown(tab: Any) -> list[Any]:
    model = tab.view.model()
    return [model.data(model.index(row, 0), MessageRole) for row in range(model.rowCount())]


def chat(harness: Any, *prompts: str) -> Any:
    harness.server.enqueue(*(reply(f"A{p[1:]}") for p in prompts))
    harness.open()
    tab = new_tab(harness)
    for prompt in prompts:
        type_and_send(harness.qtbot, tab, prompt)
        wait_idle(harness, tab)
    return tab


def test_typing_a_slash_lists_the_commands_and_filters_as_you_type(harness: Any) -> None:
    tab = chat(harness)
    edit, qtbot = tab.composer.edit, harness.qtbot
    assert tab._slash_completer is None  # built by the first "/" typed, not by every open
    edit.setFocus()
    qtbot.keyClicks(edit, "/")
    popup = tab._slash_completer
    assert popup is not None
    qtbot.waitUntil(popup.isVisible, timeout=WAIT_MS)  # the first "/" already opens it
    assert [s.name for s in popup.specs()] == [s.name for s in COMMANDS]
    assert popup.list.accessibleName() == "Slash commands"
    first = popup.list.item(0)
    assert first.data(Qt.ItemDataRole.AccessibleTextRole).startswith("/compact [instructions]: Summarise")
    assert popup.geometry().bottom() < edit.mapTo(tab, edit.rect().topLeft()).y()  # above the box

    qtbot.keyClicks(edit, "c")
    assert [s.name for s in popup.specs()] == [
        CommandName.COMPACT,
        CommandName.CLEAR,
        CommandName.CHECKPOINT,
        CommandName.CONTEXT,
        CommandName.COMPARE,
    ]
    qtbot.keyClicks(edit, "l")
    assert [s.name for s in popup.specs()] == [CommandName.CLEAR]
    qtbot.keyClick(edit, Qt.Key.Key_Escape)
    assert not popup.isVisible() and edit.toPlainText() == "/cl"
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    assert popup.isVisible()  # the text changed: it is back
    qtbot.keyClicks(edit, "x")
    assert not popup.isVisible()  # nothing starts with /cx
    for _ in range(3):
        qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(edit, "/usr/bin")
    assert not popup.isVisible()  # a path is not a command
    assert harness.server.requests == []


def test_pick_compact_with_keys_and_enter_summarises_without_sending_a_prompt(harness: Any) -> None:
    tab = chat(harness, "Q1", "Q2", "Q3")
    edit, popup, qtbot = tab.composer.edit, tab.slash_completer, harness.qtbot
    edit.setFocus()
    qtbot.keyClicks(edit, "/")
    qtbot.waitUntil(popup.isVisible, timeout=WAIT_MS)
    qtbot.keyClick(edit, Qt.Key.Key_Down)
    qtbot.keyClick(edit, Qt.Key.Key_Up)  # moved and back: /compact
    assert popup.current() is not None and popup.current().name is CommandName.COMPACT
    qtbot.keyClick(edit, Qt.Key.Key_Tab)
    assert edit.toPlainText() == "/compact " and not popup.isVisible()
    assert edit.hasFocus() or not tab.isActiveWindow()

    requests = len(harness.server.requests)
    harness.server.enqueue(reply(SUMMARY))
    qtbot.keyClicks(edit, "keep the plant names")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: any(m.kind is MessageKind.SUMMARY and m.text == SUMMARY for m in shown(tab)), timeout=WAIT_MS
    )
    qtbot.waitUntil(lambda: edit.toPlainText() == "", timeout=WAIT_MS)
    assert len(harness.server.requests) == requests + 1  # the summary request, no prompt
    summary_request = harness.server.requests[-1].body["messages"][-1]["content"]
    assert "keep the plant names" in summary_request
    assert all(m.kind is not MessageKind.PROMPT or not m.text.startswith("/") for m in shown(tab))
    assert "summarised" in tab.slash.notice.text()

    harness.server.enqueue(reply("A4"))
    type_and_send(qtbot, tab, "Q4")
    wait_idle(harness, tab)
    sent = harness.server.requests[-1].body["messages"]
    assert SUMMARY in sent[0]["content"]
    assert [m["content"] for m in sent[1:]] == ["Q2", "A2", "Q3", "A3", "Q4"]


def test_an_unknown_command_says_so_keeps_the_text_and_sends_nothing(harness: Any) -> None:
    tab = chat(harness, "Q1")
    requests = len(harness.server.requests)
    type_and_send(harness.qtbot, tab, "/foo bar")
    assert tab.banner.isVisible() and tab.banner.error is not None
    assert tab.banner.label.text().startswith("Unknown command /foo — type /help")
    assert tab.composer.edit.toPlainText() == "/foo bar"
    assert len(harness.server.requests) == requests
    assert [m.text for m in shown(tab)] == ["Q1", "A1"]

    tab.composer.edit.clear()
    type_and_send(harness.qtbot, tab, "/help")
    harness.qtbot.waitUntil(lambda: "/checkpoint NAME" in tab.slash.notice.text(), timeout=WAIT_MS)
    assert tab.composer.edit.toPlainText() == "" and not tab.banner.isVisible()
    assert len(harness.server.requests) == requests

    harness.server.enqueue(reply("A2"))
    type_and_send(harness.qtbot, tab, "//usr is a folder")  # escaped: sent as text
    wait_idle(harness, tab)
    assert harness.server.requests[-1].body["messages"][-1]["content"] == "/usr is a folder"
    assert not tab.slash.notice.isVisible()  # a sent message closes the last command's note


def test_engine_commands_show_their_result_and_errors_keep_the_text(harness: Any, tmp_path: Path) -> None:
    tab = chat(harness, "Q1")
    requests = len(harness.server.requests)
    type_and_send(harness.qtbot, tab, "/model nowhere/x")
    harness.qtbot.waitUntil(lambda: tab.banner.error is not None, timeout=WAIT_MS)
    assert "No provider named “nowhere”" in tab.banner.label.text()
    assert tab.composer.edit.toPlainText() == "/model nowhere/x"

    tab.composer.edit.clear()
    target = tmp_path / "exported.md"
    type_and_send(harness.qtbot, tab, f"/export markdown {target}")
    harness.qtbot.waitUntil(lambda: target.exists(), timeout=WAIT_MS)
    harness.qtbot.waitUntil(
        lambda: f"Exported this chat to {target}" in tab.slash.notice.text(), timeout=WAIT_MS
    )
    assert "A1" in target.read_text(encoding="utf-8")
    assert tab.composer.edit.toPlainText() == "" and not tab.banner.isVisible()
    assert len(harness.server.requests) == requests


def test_slash_clear_clears_like_the_menu_and_offers_undo(harness: Any) -> None:
    tab = chat(harness, "Q1")
    requests = len(harness.server.requests)
    tab.composer.edit.setFocus()
    harness.qtbot.keyClicks(tab.composer.edit, "/clear")
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Escape)  # close the list; the text stays
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Return)
    path = tab.live.conversation.path
    harness.qtbot.waitUntil(lambda: path()[-1].marker is not None, timeout=WAIT_MS)
    assert path()[-1].marker.type.value == "clear"
    harness.qtbot.waitUntil(tab.controls.clear_notice.isVisible, timeout=WAIT_MS)
    assert tab.composer.text() == "" and len(harness.server.requests) == requests
    harness.qtbot.mouseClick(tab.controls.clear_notice.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: path()[-1].text == "A1", timeout=WAIT_MS)


def test_slash_compare_opens_the_compare_menu(harness: Any) -> None:
    from PySide6.QtWidgets import QApplication, QMenu

    tab = chat(harness)
    requests = len(harness.server.requests)
    tab.composer.edit.setFocus()
    harness.qtbot.keyClicks(tab.composer.edit, "/compare")
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Escape)
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Return)
    harness.qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu), timeout=WAIT_MS)
    menu = QApplication.activePopupWidget()
    assert menu is tab.composer.compare_button.menu()
    menu.close()
    assert tab.composer.text() == "" and len(harness.server.requests) == requests


def run_typed(harness: Any, tab: Any, text: str, note: str) -> None:
    """Type ``text`` in the message box, press Enter, and wait for the note that says it ran."""
    edit = tab.composer.edit
    edit.setFocus()
    harness.qtbot.keyClicks(edit, text)
    harness.qtbot.keyClick(edit, Qt.Key.Key_Return)
    harness.qtbot.waitUntil(lambda: note in tab.slash.notice.text(), timeout=WAIT_MS)
    assert edit.toPlainText() == "" and not tab.banner.isVisible()


def send(harness: Any, tab: Any, text: str) -> list[str]:
    """Send ``text``, wait for the reply, and return the non-system texts the server got."""
    harness.server.enqueue(reply(f"re {text}"))
    type_and_send(harness.qtbot, tab, text)
    wait_idle(harness, tab)
    return [str(m["content"]) for m in harness.server.requests[-1].body["messages"] if m["role"] != "system"]


def test_slash_checkpoint_tangent_and_restore_typed_with_enter(harness: Any) -> None:
    """Each typed in full and run with Enter (the list lets Enter through for a whole name);
    the request after each shows what it did, and none of them reached the model."""
    tab = chat(harness, "Q1")
    a1 = tab.live.conversation.path()[-1].id
    requests = len(harness.server.requests)
    run_typed(harness, tab, "/checkpoint first", "Checkpoint “first” set")
    harness.qtbot.waitUntil(lambda: tab.model.named_checkpoints() == {"first": a1}, timeout=WAIT_MS)
    assert len(harness.server.requests) == requests
    assert send(harness, tab, "Q2") == ["Q1", "A1", "Q2"]

    run_typed(harness, tab, "/tangent", "Tangent started")
    banner = tab.controls.tangent_banner
    harness.qtbot.waitUntil(banner.isVisible, timeout=WAIT_MS)
    assert send(harness, tab, "T1") == ["Q1", "A1", "Q2", "re Q2", "T1"]

    run_typed(harness, tab, "/restore first", "Restored “first”")
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].id == a1, timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: not banner.isVisible(), timeout=WAIT_MS)  # the restore left the tangent
    assert send(harness, tab, "Q3") == ["Q1", "A1", "Q3"]  # the restored path only

    run_typed(harness, tab, "/checkpoint first", "moved here (it named “A1”)")
    latest = tab.live.conversation.path()[-1]
    assert latest.text == "re Q3"
    harness.qtbot.waitUntil(lambda: tab.model.named_checkpoints() == {"first": latest.id}, timeout=WAIT_MS)
    assert all(not m.text.startswith("/") for m in shown(tab))  # no command became a message


def test_plain_text_is_sent_without_the_commands_and_a_command_note_takes_its_tab_place(harness: Any) -> None:
    tab = chat(harness, "Q1")
    qtbot = harness.qtbot
    assert tab._slash is None and tab._slash_completer is None  # plain text built neither
    assert len(harness.server.requests) == 1
    type_and_send(qtbot, tab, "/help")
    notice = tab.slash.notice
    qtbot.waitUntil(lambda: "/checkpoint NAME" in notice.text(), timeout=WAIT_MS)
    assert len(harness.server.requests) == 1  # the command ran here; nothing was sent
    # Tab reaches the note's close button just before the message box, as when it was built
    # with the tab.
    notice.close_button.setFocus()
    qtbot.waitUntil(notice.close_button.hasFocus, timeout=WAIT_MS)
    qtbot.keyClick(notice.close_button, Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: tab.composer.isAncestorOf(tab.window().focusWidget()), timeout=WAIT_MS)


def test_a_commands_note_closes_when_regenerate_or_an_edited_resend_starts_a_turn(harness: Any) -> None:
    from tests.support.ui_driving import click_action

    tab = chat(harness, "Q1")
    run_typed(harness, tab, "/help", "/checkpoint NAME")
    assert tab.slash.notice.isVisible()
    harness.server.enqueue(reply("A1 again"))
    answer = tab.live.conversation.path()[-1]
    click_action(harness.qtbot, tab, answer.id, "regenerate")
    harness.qtbot.waitUntil(lambda: not tab.slash.notice.isVisible(), timeout=WAIT_MS)
    wait_idle(harness, tab)

    run_typed(harness, tab, "/help", "/checkpoint NAME")
    harness.server.enqueue(reply("A1 for the edit"))
    prompt = tab.live.conversation.path()[0]
    click_action(harness.qtbot, tab, prompt.id, "edit")
    harness.qtbot.waitUntil(lambda: tab.composer.editing == prompt.id, timeout=WAIT_MS)
    harness.qtbot.keyClicks(tab.composer.edit, " edited")
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Return)
    harness.qtbot.waitUntil(lambda: not tab.slash.notice.isVisible(), timeout=WAIT_MS)
    wait_idle(harness, tab)


def test_slash_export_without_a_file_opens_the_windows_export_dialog_for_this_chat(harness: Any) -> None:
    from PySide6.QtWidgets import QApplication

    from threadline.ui.window.export_dialog import ExportDialog

    tab = chat(harness, "Q1")
    seen: list[tuple[bool, bool]] = []

    def look() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, ExportDialog) or not dialog.isVisible():
            QTimer.singleShot(10, look)
            return
        seen.append((dialog.parent() is harness.window, dialog.this_chat.isChecked()))
        dialog.reject()

    QTimer.singleShot(0, look)
    type_and_send(harness.qtbot, tab, "/export")
    harness.qtbot.waitUntil(lambda: bool(seen), timeout=WAIT_MS)
    assert seen == [(True, True)]  # the window's dialog, this chat chosen
