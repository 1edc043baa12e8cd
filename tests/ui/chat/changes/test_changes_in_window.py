"""What the assistant changed on disk, met in the window as a user meets it.

A real turn through the replayed SSE provider: the model asks for ``write_file`` and
``shell`` (allowed by rule), which write, create and delete files in the agent's folder.
The reply's header then reads "+N −M in K files"; a click opens the turn's changes with
the diff the engine makes; "Undo these changes…" shows the restore preview and restores;
the notice's "Undo restore" puts the turn's state back; a checkpoint restore offers the
files too; a file edited by the user after the tool wrote it is a conflict, left alone
unless ticked; the status bar keeps the chat's totals.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.ui_driving import click_action, type_and_send, wait_idle
from tests.support.ui_driving import new_tab_by_click as new_tab

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.file_changes import ChangeSource
from threadline.ui.chat.changes.header_counts import CHANGES_ACTION, UNDO_CHANGES_ACTION
from threadline.ui.chat.changes.session_totals import RESTORED_TEXT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the shell tool runs POSIX commands here")

WAIT = 20000
ADD_LINE = "printf 'four\\n' >> notes.txt && printf 'x\\n' > extra.txt"


def files_in(folder: Path) -> dict[str, bytes]:
    """The folder's files and their bytes, as a person would see them once a restore is done.

    A restore writes each file beside itself first (``.threadline-restore.*``) and renames it
    into place: a look while it runs may list such a file that is gone by the time it is read,
    so those are left out and a file that vanished meanwhile is skipped (the wait looks again).
    """
    found: dict[str, bytes] = {}
    for path in folder.iterdir():
        if path.name.startswith(".threadline-restore."):
            continue
        try:
            found[path.name] = path.read_bytes()
        except FileNotFoundError:
            continue
    return found


def tool_reply(*calls: tuple[str, str, dict[str, Any]]) -> Any:
    return sse_response(openai_tool_call_stream(list(calls), text_pieces=["On it."]))


def text_reply(text: str) -> Any:
    return sse_response(openai_text_stream([text]))


def allow_tools(harness: Any, folder: Path, *tools: str) -> None:
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=tools,
                allowed_folders=(str(folder),),
                approval_rules=tuple(ApprovalRule(t, Approval.ALLOW) for t in tools),
            )
        )
    )


def click(harness: Any, button: Any) -> None:
    harness.qtbot.waitUntil(lambda: button.isVisible() and button.isEnabled(), timeout=WAIT)
    harness.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def use_message_menu(tab: Any, message_id: str, action: str) -> None:
    """Right-click a message and choose ``action`` from its menu."""
    view = tab.view
    assert view.set_current_message(message_id)
    geo = view.geometry_of(message_id)
    pos = QPoint(int(geo.doc_rect.center().x()), int(geo.doc_rect.center().y()))

    def choose() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(10, choose)
            return
        entry = next(a for a in menu.actions() if a.objectName() == f"message-action-{action}")
        QTest.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(entry).center())

    QTimer.singleShot(0, choose)
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), event)


def allow_until_idle(harness: Any, tab: Any) -> None:
    """Press "Allow" on each tool call the approval bar asks about, until the turn is over."""

    def answered() -> bool:
        if tab.awaiting_approval and tab.approval.isVisible():
            row = next((r for r in tab.approval.rows if r.allow_button.isVisible()), None)
            if row is not None:
                harness.qtbot.mouseClick(row.allow_button, Qt.MouseButton.LeftButton)
        return tab.live.conversation.ready_for_input and not harness.engine.turns.running(tab.session_id)

    harness.qtbot.waitUntil(answered, timeout=60000)


def last_reply_id(tab: Any) -> str:
    return tab.live.conversation.path()[-1].id


def wait_counts(harness: Any, tab: Any, reply_id: str, summary: str) -> None:
    harness.qtbot.waitUntil(
        lambda: reply_id in tab.view.change_counts and tab.view.change_counts[reply_id].summary == summary,
        timeout=WAIT,
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("one\ntwo\n")
    (folder / "doomed.txt").write_text("bye\n")
    return folder


def run_edit_turn(harness: Any, work: Path) -> Any:
    harness.server.enqueue(
        tool_reply(
            ("c1", "write_file", {"path": "notes.txt", "content": "one\n2\nthree\n"}),
            ("c2", "shell", {"command": "rm doomed.txt && printf 'made\\n' > made.txt"}),
        ),
        text_reply("Edited the notes."),
    )
    harness.open()
    allow_tools(harness, work, "write_file", "shell")
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Edit the notes")
    wait_idle(harness, tab, WAIT)
    return tab


def test_header_counts_open_the_diff_and_undo_the_turn_then_the_restore(harness: Any, work: Path) -> None:
    tab = run_edit_turn(harness, work)
    reply_id = last_reply_id(tab)
    wait_counts(harness, tab, reply_id, "+3 \u22122 in 3 files")
    counts = tab.view.change_counts[reply_id]
    assert sorted(Path(f.path).name for f in counts.files) == ["doomed.txt", "made.txt", "notes.txt"]
    # The pointer over the counts: a hand, and the files in the tooltip.
    rect = tab.view.action_rect(reply_id, CHANGES_ACTION)
    assert rect is not None
    QTest.mouseMove(tab.view.viewport(), rect.center())
    harness.qtbot.waitUntil(lambda: "notes.txt" in tab.view.viewport().toolTip(), timeout=WAIT)
    # A click opens the turn's changes, with the first file's diff from the engine.
    click_action(harness.qtbot, tab, reply_id, CHANGES_ACTION)
    harness.qtbot.waitUntil(lambda: tab.file_changes.dialog is not None, timeout=WAIT)
    dialog = tab.file_changes.dialog
    assert dialog.windowTitle() == "Changes in turn 1"
    harness.qtbot.waitUntil(lambda: "three" in dialog.pane.view.toPlainText(), timeout=WAIT)
    assert dialog.select(str(Path(work, "made.txt").resolve()))
    harness.qtbot.waitUntil(lambda: "made" in dialog.pane.view.toPlainText(), timeout=WAIT)
    after_turn = files_in(work)
    # Undo these changes: the preview lists them, Restore puts the files back.
    click(harness, dialog.undo_button)
    harness.qtbot.waitUntil(lambda: tab.file_changes.preview is not None, timeout=WAIT)
    preview = tab.file_changes.preview
    assert preview.restore_button.text() == "Restore 3 files"
    click(harness, preview.restore_button)
    harness.qtbot.waitUntil(lambda: tab.file_changes.notice.isVisible(), timeout=WAIT)
    assert tab.file_changes.notice.label.text() == "Restored 3 files."
    assert (work / "notes.txt").read_text() == "one\ntwo\n"
    assert (work / "doomed.txt").read_text() == "bye\n"
    assert not (work / "made.txt").exists()
    # The restore is listed with the chat's changes; Undo restore gives the turn's state back.
    harness.qtbot.waitUntil(
        lambda: any(s.source is ChangeSource.RESTORE for s in tab.file_changes.change_sets), timeout=WAIT
    )
    tab.file_changes.preview = None
    click(harness, tab.file_changes.notice.undo_button)
    harness.qtbot.waitUntil(lambda: tab.file_changes.preview is not None, timeout=WAIT)
    assert tab.file_changes.preview.windowTitle() == "Undo restore"
    click(harness, tab.file_changes.preview.restore_button)
    harness.qtbot.waitUntil(lambda: files_in(work) == after_turn, timeout=WAIT)


def test_a_checkpoint_restore_offers_the_files_and_a_conflict_is_left_alone_unless_ticked(
    harness: Any, work: Path
) -> None:
    tab = run_edit_turn(harness, work)
    first_reply = last_reply_id(tab)
    wait_counts(harness, tab, first_reply, "+3 \u22122 in 3 files")
    harness.run(harness.engine.controls.set_checkpoint(tab.session_id, "edited", first_reply))
    at_checkpoint = files_in(work)
    harness.server.enqueue(
        tool_reply(("c3", "shell", {"command": ADD_LINE})),
        text_reply("Added a line."),
    )
    type_and_send(harness.qtbot, tab, "Add a line")
    wait_idle(harness, tab, WAIT)
    second_reply = last_reply_id(tab)
    wait_counts(harness, tab, second_reply, "+2 \u22120 in 2 files")
    assert tab.view.change_counts[first_reply].summary == "+3 \u22122 in 3 files"  # each turn its own
    # The status bar keeps the chat's totals; a file picked there opens the changes at it.
    totals = harness.window.file_totals.button
    harness.qtbot.waitUntil(lambda: totals.isVisible() and "4 files changed" in totals.text(), timeout=WAIT)
    harness.qtbot.mouseClick(totals, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(totals.popup.isVisible, timeout=WAIT)
    popup_list = totals.popup.list
    row = next(i for i in range(popup_list.count()) if popup_list.item(i).text().endswith("extra.txt"))
    rect = popup_list.visualItemRect(popup_list.item(row))
    harness.qtbot.mouseClick(popup_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    harness.qtbot.waitUntil(
        lambda: tab.file_changes.dialog is not None and tab.file_changes.dialog.isVisible(), timeout=WAIT
    )
    dialog = tab.file_changes.dialog
    assert dialog.selected is not None and dialog.selected.path.endswith("extra.txt")
    harness.qtbot.mouseClick(dialog.close_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(
        lambda: QApplication.activePopupWidget() is None and QApplication.activeModalWidget() is None,
        timeout=WAIT,
    )
    # The user edits a file the tool wrote: a restore must not overwrite it unasked.
    (work / "extra.txt").write_text("my own words\n")
    listing = tab.controls.show_checkpoints()  # the conversation menu's "Checkpoints…"
    harness.qtbot.waitUntil(listing.isVisible, timeout=WAIT)
    harness.qtbot.mouseClick(listing.restore_buttons["edited"], Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].id == first_reply, timeout=WAIT)
    # Then: restore the files as well?
    harness.qtbot.waitUntil(
        lambda: tab.file_changes.question is not None and tab.file_changes.question.isVisible(), timeout=WAIT
    )
    question = tab.file_changes.question
    assert "2 files were changed" in question.text()
    show = next(b for b in question.buttons() if b.text().startswith("Show the files"))
    harness.qtbot.mouseClick(show, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: tab.file_changes.preview is not None, timeout=WAIT)
    preview = tab.file_changes.preview
    assert list(preview.checks) == [str((work / "extra.txt").resolve())]  # the conflict
    assert preview.restore_button.text() == "Restore 1 file"
    harness.qtbot.mouseClick(preview.restore_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: tab.file_changes.notice.isVisible(), timeout=WAIT)
    assert (work / "notes.txt").read_bytes() == at_checkpoint["notes.txt"]
    assert (work / "extra.txt").read_text() == "my own words\n"  # left alone
    # Asked again, with the conflict ticked this time, the user's file goes too.
    tab.file_changes.preview = None
    tab.file_changes.offer_checkpoint_files("edited")
    harness.qtbot.waitUntil(lambda: tab.file_changes.question is not question, timeout=WAIT)
    question = tab.file_changes.question
    show = next(b for b in question.buttons() if b.text().startswith("Show the files"))
    harness.qtbot.mouseClick(show, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: tab.file_changes.preview is not None, timeout=WAIT)
    preview = tab.file_changes.preview
    (box,) = preview.checks.values()
    harness.qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    assert preview.restore_button.text() == "Restore 1 file"
    harness.qtbot.mouseClick(preview.restore_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: not (work / "extra.txt").exists(), timeout=WAIT)
    assert files_in(work) == at_checkpoint


def test_another_windows_turn_shows_its_counts_in_this_tab(harness: Any, work: Path) -> None:
    """A second engine on the same database (another window) runs a turn in the chat this
    window has open: the change feed brings its messages, and with them the counts."""
    from tests.integration.engine.helpers import turn
    from tests.support.engines import open_engine

    harness.open()
    allow_tools(harness, work, "write_file", "shell")
    tab = new_tab(harness)
    harness.qtbot.waitUntil(lambda: tab.file_changes.loaded, timeout=WAIT)
    session_id = tab.session_id
    harness.run(
        harness.engine.sessions.rename_session(session_id, "Shared chat")
    )  # stored: the other sees it
    harness.server.enqueue(
        tool_reply(("c1", "write_file", {"path": "elsewhere.txt", "content": "a\nb\n"})),
        text_reply("Written elsewhere."),
    )
    other = harness.run(open_engine(harness.data_dir, harness.server))
    try:
        harness.run(turn(other, session_id, "Write it from the other window"))
    finally:
        harness.run(other.aclose())
    harness.qtbot.waitUntil(
        lambda: [m.text for m in tab.live.conversation.path()][-1:] == ["Written elsewhere."], timeout=WAIT
    )
    reply_id = last_reply_id(tab)
    wait_counts(harness, tab, reply_id, "+2 \u22120 in 1 file")
    totals = harness.window.file_totals.button
    harness.qtbot.waitUntil(lambda: totals.isVisible() and "1 file changed" in totals.text(), timeout=WAIT)


def test_the_filesystem_mcp_servers_writes_are_counted_shown_and_undone(harness: Any, work: Path) -> None:
    """The real ``@modelcontextprotocol/server-filesystem`` from npm writes and moves files in the
    allowed folder; its calls are recorded by a scan, shown in the header and undone."""
    from tests.support.npm_servers import filesystem_server

    from threadline.tools.mcp.config import McpServerConfig

    node, script = filesystem_server()
    folder = work.resolve()
    harness.open()
    harness.run(
        harness.engine.tool_servers.save_server(
            McpServerConfig("fs", command=node, args=(script, str(folder)))
        )
    )
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=("fs/write_file", "fs/move_file", "fs/read_text_file"),
                allowed_folders=(str(folder),),
                approval_rules=(ApprovalRule("fs/*", Approval.ALLOW),),
            )
        )
    )
    harness.server.enqueue(
        tool_reply(
            ("m1", "fs__write_file", {"path": str(folder / "from_mcp.txt"), "content": "written by mcp\n"}),
            (
                "m2",
                "fs__move_file",
                {"source": str(folder / "notes.txt"), "destination": str(folder / "moved.txt")},
            ),
            ("m3", "fs__read_text_file", {"path": str(folder / "moved.txt")}),
        ),
        text_reply("Moved and wrote."),
    )
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Use the filesystem server")
    allow_until_idle(harness, tab)  # the server's writing tools ask each time (not trusted by a rule)
    assert (folder / "from_mcp.txt").read_text() == "written by mcp\n"
    assert (folder / "moved.txt").exists() and not (folder / "notes.txt").exists()
    reply_id = last_reply_id(tab)
    wait_counts(harness, tab, reply_id, "+1 \u22120 in 2 files")  # a new file, and a rename
    tools = [s.tool_name for s in tab.file_changes.change_sets]
    assert tools == ["fs__write_file", "fs__move_file"]  # the read-only call is not recorded
    click_action(harness.qtbot, tab, reply_id, CHANGES_ACTION)
    harness.qtbot.waitUntil(lambda: tab.file_changes.dialog is not None, timeout=WAIT)
    dialog = tab.file_changes.dialog
    harness.qtbot.waitUntil(lambda: "written by mcp" in dialog.pane.view.toPlainText(), timeout=WAIT)
    assert dialog.select(str(folder / "moved.txt"))
    harness.qtbot.waitUntil(lambda: "notes.txt" in dialog.pane.title.text(), timeout=WAIT)  # old → new
    click(harness, dialog.undo_button)
    harness.qtbot.waitUntil(lambda: tab.file_changes.preview is not None, timeout=WAIT)
    click(harness, tab.file_changes.preview.restore_button)
    harness.qtbot.waitUntil(lambda: (folder / "notes.txt").exists(), timeout=WAIT)
    assert (folder / "notes.txt").read_text() == "one\ntwo\n"
    assert not (folder / "moved.txt").exists() and not (folder / "from_mcp.txt").exists()


def test_the_status_bar_totals_follow_the_current_tab(harness: Any, work: Path) -> None:
    first = run_edit_turn(harness, work)
    totals = harness.window.file_totals.button
    harness.qtbot.waitUntil(lambda: totals.isVisible() and "3 files changed" in totals.text(), timeout=WAIT)
    second = new_tab(harness)  # a chat that changed nothing: no totals
    harness.qtbot.waitUntil(lambda: not totals.isVisible(), timeout=WAIT)
    tab_bar = harness.window.tabs.tabBar()
    index = harness.window.tabs.indexOf(first)
    harness.qtbot.mouseClick(tab_bar, Qt.MouseButton.LeftButton, pos=tab_bar.tabRect(index).center())
    harness.qtbot.waitUntil(lambda: totals.isVisible() and "3 files changed" in totals.text(), timeout=WAIT)
    harness.window.tabs.close_tab(first)
    harness.qtbot.waitUntil(lambda: harness.window.tabs.current_tab() is second, timeout=WAIT)
    harness.qtbot.waitUntil(lambda: not totals.isVisible(), timeout=WAIT)


def test_after_a_restart_the_chats_changes_offer_to_undo_the_last_restore(harness: Any, work: Path) -> None:
    tab = run_edit_turn(harness, work)
    session_id, reply_id = tab.session_id, last_reply_id(tab)
    after_turn = files_in(work)
    wait_counts(harness, tab, reply_id, "+3 \u22122 in 3 files")
    use_message_menu(tab, reply_id, UNDO_CHANGES_ACTION)  # "Undo this turn's file changes…"
    harness.qtbot.waitUntil(lambda: tab.file_changes.preview is not None, timeout=WAIT)
    click(harness, tab.file_changes.preview.restore_button)
    harness.qtbot.waitUntil(lambda: not (work / "made.txt").exists(), timeout=WAIT)
    harness.qtbot.waitUntil(
        lambda: [s.source for s in tab.file_changes.change_sets][-1:] == [ChangeSource.RESTORE], timeout=WAIT
    )

    harness.close()
    harness.open()
    tab = harness.run(harness.window.session_tabs.open(session_id, focus=True))
    totals = harness.window.file_totals.button
    # Every file is back as it began: no file counts as changed, and the status line says so
    # instead of hiding, so the restore can still be undone after the restart.
    harness.qtbot.waitUntil(lambda: totals.isVisible() and totals.text() == RESTORED_TEXT, timeout=WAIT)
    harness.qtbot.mouseClick(totals, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: tab.file_changes.dialog is not None, timeout=WAIT)
    assert not totals.popup.isVisible()
    dialog = tab.file_changes.dialog
    assert dialog.undo_button.text() == "Undo last restore\u2026"
    click(harness, dialog.undo_button)
    harness.qtbot.waitUntil(lambda: tab.file_changes.preview is not None, timeout=WAIT)
    assert tab.file_changes.preview.windowTitle() == "Undo restore"
    click(harness, tab.file_changes.preview.restore_button)
    harness.qtbot.waitUntil(lambda: files_in(work) == after_turn, timeout=WAIT)


def test_restore_typed_as_a_slash_command_offers_the_files_too(harness: Any, work: Path) -> None:
    tab = run_edit_turn(harness, work)
    first_reply = last_reply_id(tab)
    harness.run(harness.engine.controls.set_checkpoint(tab.session_id, "edited", first_reply))
    at_checkpoint = files_in(work)
    harness.server.enqueue(tool_reply(("c3", "shell", {"command": ADD_LINE})), text_reply("Added a line."))
    type_and_send(harness.qtbot, tab, "Add a line")
    wait_idle(harness, tab, WAIT)
    type_and_send(harness.qtbot, tab, "/restore edited")
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].id == first_reply, timeout=WAIT)
    harness.qtbot.waitUntil(
        lambda: tab.file_changes.question is not None and tab.file_changes.question.isVisible(), timeout=WAIT
    )
    show = next(b for b in tab.file_changes.question.buttons() if b.text().startswith("Show the files"))
    harness.qtbot.mouseClick(show, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: tab.file_changes.preview is not None, timeout=WAIT)
    click(harness, tab.file_changes.preview.restore_button)
    harness.qtbot.waitUntil(lambda: files_in(work) == at_checkpoint, timeout=WAIT)
