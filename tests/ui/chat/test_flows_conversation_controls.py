"""Compact, clear, tangents and checkpoints, driven through the chat tab as a person would:
the conversation menu ("⋯" beside the context meter), a message's menu, the dialogs and the
checkpoint list, with the real Engine on a SQLite file and the replay server playing the
provider. Each control is judged by the request that follows it, as the server saw it.

Set ``THREADLINE_SHOTS`` to a folder to keep the screenshots the tests take.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QWidget
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle

from threadline.core.messages import MessageKind
from threadline.ui.chat.view.context_marks import (
    CLEAR_LABEL,
    SUMMARY_TITLE,
    is_clear,
    is_tangent,
    summary_key,
)

TIMEOUT = 15000
SUMMARY_TEXT = "**Earlier:** the user asked Q1 and Q2; answers A1 and A2 covered both."


def reply(text: str) -> Any:
    return sse_response(openai_text_stream(split_text(text, 4)))


def chat_with(harness: Any, turns: int) -> Any:
    """A new chat with ``turns`` answered turns (Q1/A1, Q2/A2, …)."""
    harness.server.enqueue(*(reply(f"A{n}") for n in range(1, turns + 1)))
    harness.open()
    tab = new_tab(harness)
    for n in range(1, turns + 1):
        type_and_send(harness.qtbot, tab, f"Q{n}")
        wait_idle(harness, tab)
    harness.qtbot.waitUntil(lambda: tab.model.rowCount() == 2 * turns, timeout=TIMEOUT)
    return tab


def send_and_capture(harness: Any, tab: Any, text: str, answer: str) -> list[Any]:
    """Send ``text``, wait for ``answer``, and return the messages of the request the server got."""
    before = len(harness.server.requests)
    harness.server.enqueue(reply(answer))
    type_and_send(harness.qtbot, tab, text)
    wait_idle(harness, tab)
    harness.qtbot.waitUntil(lambda: len(harness.server.requests) > before, timeout=TIMEOUT)
    return list(harness.server.requests[-1].body["messages"])


def contents(messages: list[Any]) -> list[str]:
    """The text of each sent message but the system one."""
    return [m["content"] for m in messages if m["role"] != "system"]


def choose_from_popup_menu(object_name: str) -> None:
    """Once a menu pops up, click its entry ``object_name``."""

    def click_entry() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(10, click_entry)
            return
        entry = next(a for a in menu.actions() if a.objectName() == object_name)
        assert entry.isEnabled(), f"{object_name} is disabled"
        QTest.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(entry).center())

    QTimer.singleShot(0, click_entry)


def use_conversation_menu(harness: Any, tab: Any, entry: str) -> None:
    """Click the "⋯" conversation menu beside the context meter, then its entry."""
    choose_from_popup_menu(f"conversation-{entry}")
    harness.qtbot.mouseClick(tab.controls.menu_button, Qt.MouseButton.LeftButton)


def use_message_menu(harness: Any, tab: Any, message_id: str, action: str) -> None:
    """Right-click a message and choose ``action`` from its menu."""
    view = tab.view
    assert view.set_current_message(message_id)
    geo = next(g for g in view._visible if g.message_id == message_id)
    pos = QPoint(int(geo.doc_rect.center().x()), int(geo.top + 6))
    choose_from_popup_menu(f"message-action-{action}")
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), event)


def message_id(tab: Any, text: str) -> str:
    return next(m.id for m in tab.live.conversation.path() if m.text == text)


def focus_is_in_composer(tab: Any) -> bool:
    return tab.window().focusWidget() is tab.composer.edit


def save_shot(widget: QWidget, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    assert widget.grab().save(str(path))
    keep = os.environ.get("THREADLINE_SHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return path


# -- compaction --------------------------------------------------------------------------------


def test_compact_through_the_dialog_keeps_the_chosen_turns_and_sends_the_summary(
    harness: Any, tmp_path: Path
) -> None:
    tab = chat_with(harness, 3)
    use_conversation_menu(harness, tab, "compact")
    harness.qtbot.waitUntil(lambda: tab.controls.dialog is not None, timeout=TIMEOUT)
    dialog = tab.controls.dialog
    assert dialog.keep.value() == 2  # the default
    dialog.keep.setFocus()
    dialog.keep.selectAll()
    harness.qtbot.keyClicks(dialog.keep, "1")
    dialog.instructions.setFocus()
    harness.qtbot.keyClicks(dialog.instructions, "keep the numbers")
    requests_before = len(harness.server.requests)
    harness.server.enqueue(reply(SUMMARY_TEXT))
    harness.qtbot.mouseClick(dialog.compact_button, Qt.MouseButton.LeftButton)

    harness.qtbot.waitUntil(
        lambda: any(m.kind is MessageKind.SUMMARY for m in tab.live.conversation.path()), timeout=TIMEOUT
    )
    summary_request = harness.server.requests[requests_before].body["messages"]
    asked = "\n".join(str(m["content"]) for m in summary_request)
    assert "keep the numbers" in asked  # the instructions steer the summary
    harness.qtbot.waitUntil(lambda: not tab.compacting, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: focus_is_in_composer(tab), timeout=TIMEOUT)

    # The summary row: one line, closed, reads as a summary; the summarised rows are set back.
    summary = tab.live.conversation.path()[-1]
    assert summary.kind is MessageKind.SUMMARY
    model = tab.model
    assert model.first_sent_row() == model.row_of(message_id(tab, "Q3"))
    doc = tab.view.rendered_document(summary.id)
    assert doc is not None and "Show the summary" in doc.toPlainText()
    assert "Earlier:" in doc.toPlainText()  # its first words, on the same line
    tab.view.scroll_to_bottom()
    save_shot(tab, tmp_path, "summary-collapsed")

    # Opened with the keyboard (Space on the current message): the Markdown shows.
    tab.view.setFocus()
    assert tab.view.set_current_message(summary.id)
    harness.qtbot.keyClick(tab.view, Qt.Key.Key_Space)
    doc = tab.view.rendered_document(summary.id)
    assert doc is not None and "Hide the summary" in doc.toPlainText()
    assert "Earlier: the user asked" in doc.toPlainText()  # rendered: no ** left
    assert summary_key(summary.id) in tab.view._expanded
    save_shot(tab, tmp_path, "summary-expanded")

    # The next request: the summary in the system text, then the kept turn, then the new one.
    sent = send_and_capture(harness, tab, "Q4", "A4")
    system = next(m["content"] for m in sent if m["role"] == "system")
    assert "the user asked Q1 and Q2" in system
    assert contents(sent) == ["Q3", "A3", "Q4"]


def click_compact_now(harness: Any, tab: Any) -> None:
    """Click the context meter, then "Compact now" in the breakdown it pops up."""
    from threadline.ui.chat.composer.context_meter_button import MeterBreakdown

    meter = tab.composer.meter
    harness.qtbot.waitUntil(lambda: meter.current() is not None, timeout=TIMEOUT)

    def shown() -> list[Any]:
        return [p for p in meter.findChildren(MeterBreakdown) if p.isVisible()]

    harness.qtbot.mouseClick(meter, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: len(shown()) == 1, timeout=TIMEOUT)
    [popup] = shown()
    assert popup.compact_button.text() == "Compact now"
    harness.qtbot.mouseClick(popup.compact_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: not shown(), timeout=TIMEOUT)


def test_the_meters_compact_now_button_opens_the_dialog_that_compacts(harness: Any) -> None:
    tab = chat_with(harness, 3)
    requests_before = len(harness.server.requests)
    click_compact_now(harness, tab)
    harness.qtbot.waitUntil(lambda: tab.controls.dialog is not None, timeout=TIMEOUT)
    dialog = tab.controls.dialog
    assert dialog.isVisible() and dialog.keep.value() == 2
    harness.qtbot.keyClick(dialog.keep, Qt.Key.Key_Escape)  # Cancel compacts nothing
    harness.qtbot.waitUntil(lambda: tab.controls.dialog is None, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: focus_is_in_composer(tab), timeout=TIMEOUT)
    assert len(harness.server.requests) == requests_before and not tab.compacting

    click_compact_now(harness, tab)  # again, and this time Compact
    harness.qtbot.waitUntil(lambda: tab.controls.dialog is not None, timeout=TIMEOUT)
    harness.server.enqueue(reply(SUMMARY_TEXT))
    harness.qtbot.mouseClick(tab.controls.dialog.compact_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(
        lambda: any(m.kind is MessageKind.SUMMARY for m in tab.live.conversation.path()), timeout=TIMEOUT
    )
    harness.qtbot.waitUntil(lambda: not tab.compacting, timeout=TIMEOUT)
    sent = send_and_capture(harness, tab, "Q4", "A4")
    assert "the user asked Q1 and Q2" in next(m["content"] for m in sent if m["role"] == "system")
    assert contents(sent) == ["Q2", "A2", "Q3", "A3", "Q4"]  # the two kept turns, then the new one


# -- clear -------------------------------------------------------------------------------------


def test_clear_context_sends_nothing_from_before_and_undo_brings_it_back(
    harness: Any, tmp_path: Path
) -> None:
    tab = chat_with(harness, 2)
    use_conversation_menu(harness, tab, "clear")
    harness.qtbot.waitUntil(lambda: is_clear(tab.live.conversation.path()[-1]), timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: tab.controls.clear_notice.isVisible(), timeout=TIMEOUT)
    assert focus_is_in_composer(tab)
    marker = tab.live.conversation.path()[-1]
    assert tab.model.first_sent_row() == tab.model.row_of(marker.id) + 1  # everything above is set back
    assert tab.view.accessible_message(marker.id) is not None
    tab.view.scroll_to_bottom()
    save_shot(tab, tmp_path, "clear-divider")

    # Undo moves the chat back to where it was: the earlier turns are sent again.
    harness.qtbot.mouseClick(tab.controls.clear_notice.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].text == "A2", timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: tab.model.first_sent_row() == 0, timeout=TIMEOUT)  # the view follows

    # Cleared again, the next request starts after the marker.
    use_conversation_menu(harness, tab, "clear")
    harness.qtbot.waitUntil(lambda: is_clear(tab.live.conversation.path()[-1]), timeout=TIMEOUT)
    sent = send_and_capture(harness, tab, "Q3", "A3")
    assert contents(sent) == ["Q3"]
    assert not tab.controls.clear_notice.isVisible()  # a new message ends the offer
    assert any(m.text == "Q1" for m in tab.live.conversation.path())  # still shown above the marker


def test_the_clear_divider_says_what_happened(harness: Any) -> None:
    tab = chat_with(harness, 1)
    use_conversation_menu(harness, tab, "clear")
    harness.qtbot.waitUntil(lambda: is_clear(tab.live.conversation.path()[-1]), timeout=TIMEOUT)
    marker = tab.live.conversation.path()[-1]
    from threadline.ui.chat.view.chat_accessibility import message_name

    assert message_name(marker).startswith(CLEAR_LABEL)


# -- tangents ----------------------------------------------------------------------------------


def test_a_tangent_leaves_out_the_main_lines_later_turns_until_it_returns(
    harness: Any, tmp_path: Path
) -> None:
    tab = chat_with(harness, 3)
    assert not tab.controls.tangent_banner.isVisible()
    use_message_menu(harness, tab, message_id(tab, "A1"), "tangent_here")
    harness.qtbot.waitUntil(lambda: tab.controls.tangent_banner.isVisible(), timeout=TIMEOUT)
    assert "#TangentBanner {" in tab.controls.tangent_banner.styleSheet()  # in its hue from the first show
    harness.qtbot.waitUntil(lambda: focus_is_in_composer(tab), timeout=TIMEOUT)
    assert any(is_tangent(m) for m in tab.live.conversation.path())

    sent = send_and_capture(harness, tab, "T1", "TA1")
    assert contents(sent) == ["Q1", "A1", "T1"]  # Q2..A3 are on the main line, not here
    tab.view.scroll_to_bottom()
    save_shot(tab, tmp_path, "tangent-banner")

    harness.qtbot.mouseClick(tab.controls.tangent_banner.return_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: not tab.controls.tangent_banner.isVisible(), timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].text == "A3", timeout=TIMEOUT)
    assert focus_is_in_composer(tab)
    sent = send_and_capture(harness, tab, "Q4", "A4")
    assert contents(sent) == ["Q1", "A1", "Q2", "A2", "Q3", "A3", "Q4"]


def test_bring_the_last_exchange_ticked_before_return_carries_it_to_the_main_line(harness: Any) -> None:
    tab = chat_with(harness, 2)
    use_message_menu(harness, tab, message_id(tab, "A1"), "tangent_here")
    banner = tab.controls.tangent_banner
    harness.qtbot.waitUntil(banner.isVisible, timeout=TIMEOUT)
    send_and_capture(harness, tab, "T1", "TA1")
    assert contents(send_and_capture(harness, tab, "T2", "TA2")) == ["Q1", "A1", "T1", "TA1", "T2"]

    harness.qtbot.mouseClick(banner.bring, Qt.MouseButton.LeftButton)
    assert banner.bring.isChecked()
    harness.qtbot.mouseClick(banner.return_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: not banner.isVisible(), timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].text == "TA2", timeout=TIMEOUT)
    assert not banner.bring.isChecked()  # the next tangent starts unticked
    sent = send_and_capture(harness, tab, "Q3", "A3")
    # The main line where it was left (A2), then only the tangent's last exchange, then Q3.
    assert contents(sent) == ["Q1", "A1", "Q2", "A2", "T2", "TA2", "Q3"]


def test_the_tangent_banner_comes_back_after_a_restart(harness: Any) -> None:
    tab = chat_with(harness, 1)
    use_conversation_menu(harness, tab, "tangent")
    harness.qtbot.waitUntil(lambda: tab.controls.tangent_banner.isVisible(), timeout=TIMEOUT)
    session_id = tab.session_id
    harness.close()
    harness.open()
    harness.qtbot.waitUntil(lambda: harness.window.tabs.current_tab() is not None, timeout=TIMEOUT)
    again = harness.window.tabs.current_tab()
    assert again.session_id == session_id
    harness.qtbot.waitUntil(lambda: again.controls.tangent_banner.isVisible(), timeout=TIMEOUT)
    use_conversation_menu(harness, again, "return")
    harness.qtbot.waitUntil(lambda: not again.controls.tangent_banner.isVisible(), timeout=TIMEOUT)


# -- checkpoints -------------------------------------------------------------------------------


def test_a_checkpoint_set_from_a_message_and_restored_from_the_list(harness: Any, tmp_path: Path) -> None:
    tab = chat_with(harness, 2)
    a1 = message_id(tab, "A1")
    use_message_menu(harness, tab, a1, "checkpoint_here")
    harness.qtbot.waitUntil(lambda: tab.controls.dialog is not None, timeout=TIMEOUT)
    dialog = tab.controls.dialog
    harness.qtbot.keyClicks(dialog.name, "base")
    harness.qtbot.keyClick(dialog.name, Qt.Key.Key_Return)
    harness.qtbot.waitUntil(lambda: tab.model.named_checkpoints() == {"base": a1}, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: focus_is_in_composer(tab), timeout=TIMEOUT)

    # A second one from the conversation menu names the latest message.
    use_conversation_menu(harness, tab, "checkpoint")
    harness.qtbot.waitUntil(lambda: tab.controls.dialog is not None, timeout=TIMEOUT)
    harness.qtbot.keyClicks(tab.controls.dialog.name, "after two")
    harness.qtbot.keyClick(tab.controls.dialog.name, Qt.Key.Key_Return)
    a2 = message_id(tab, "A2")
    harness.qtbot.waitUntil(lambda: tab.model.named_checkpoints().get("after two") == a2, timeout=TIMEOUT)

    send_and_capture(harness, tab, "Q3", "A3")
    use_conversation_menu(harness, tab, "checkpoints")
    harness.qtbot.waitUntil(lambda: tab.controls.checkpoint_list is not None, timeout=TIMEOUT)
    listing = tab.controls.checkpoint_list
    harness.qtbot.waitUntil(listing.isVisible, timeout=TIMEOUT)
    assert list(listing.restore_buttons) == ["base", "after two"]  # conversation order, not by name
    save_shot(listing, tmp_path, "checkpoint-list")
    harness.qtbot.mouseClick(listing.restore_buttons["base"], Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].id == a1, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: focus_is_in_composer(tab), timeout=TIMEOUT)

    sent = send_and_capture(harness, tab, "Q2b", "A2b")
    assert contents(sent) == ["Q1", "A1", "Q2b"]  # the restored path, not the later turns
    tab.view.scroll_to_message(message_id(tab, "Q1"), flash=False)
    save_shot(tab, tmp_path, "checkpoint-flag")

    # Removed from the list, it is gone (the messages stay).
    use_conversation_menu(harness, tab, "checkpoints")
    harness.qtbot.waitUntil(lambda: tab.controls.checkpoint_list is not None, timeout=TIMEOUT)
    listing = tab.controls.checkpoint_list
    harness.qtbot.mouseClick(listing.remove_buttons["base"], Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: "base" not in tab.model.named_checkpoints(), timeout=TIMEOUT)
    assert any(m.id == a1 for m in tab.live.conversation.path())


def test_summary_title_is_the_rows_accessible_name(harness: Any) -> None:
    from threadline.ui.chat.view.message_labels import speaker

    tab = chat_with(harness, 2)
    harness.server.enqueue(reply(SUMMARY_TEXT))
    tab.compact(keep_turns=1)
    harness.qtbot.waitUntil(
        lambda: any(m.kind is MessageKind.SUMMARY for m in tab.live.conversation.path()), timeout=TIMEOUT
    )
    summary = tab.live.conversation.path()[-1]
    assert speaker(summary) == SUMMARY_TITLE
    assert "toggle_summary" in tab.view.offered_commands(summary.id)
