"""The tray's menu acts, files and ``threadline://`` links ask before anything happens.

A real window on a real engine (``harness``) with the desktop room put together as the app
does (``DesktopCitizen``). The tray icon itself needs a desktop with a tray; its menu is
built everywhere, and its actions are triggered here as a click on them does.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QSystemTrayIcon
from tests.support.waiting import WAIT_MS
from tests.ui.conftest import AppHarness

from threadline.core.messages import Message, MessageStatus
from threadline.core.session import SessionInfo
from threadline.interchange.threadline_json import dumps
from threadline.ui.common.desktop_prefs import DesktopSwitches
from threadline.ui.desktop.actions import QUICK_ASK
from threadline.ui.desktop.citizen import DesktopCitizen
from threadline.ui.settings.mcp_server_editor import McpServerEditor
from threadline.ui.window.import_dialog import ImportReportDialog


def citizen_for(harness: AppHarness) -> DesktopCitizen:
    harness.open()
    citizen = DesktopCitizen(harness.window, harness.engine)
    harness.run(citizen.prefs.load(harness.engine))  # this data folder's switches, not a former test's
    return citizen


def question(harness: AppHarness, citizen: DesktopCitizen) -> QMessageBox:
    harness.qtbot.waitUntil(lambda: any(q.isVisible() for q in citizen.requests.questions), timeout=WAIT_MS)
    return next(q for q in citizen.requests.questions if q.isVisible())


def answer(box: QMessageBox, text: str) -> None:
    button = next(b for b in box.buttons() if b.text().replace("&", "") == text)
    button.click()


def test_the_tray_menu_opens_a_new_chat_hides_and_shows_and_quits(harness: AppHarness) -> None:
    citizen = citizen_for(harness)
    window = harness.window
    tray = citizen.tray
    tray.act_new_chat.trigger()
    harness.qtbot.waitUntil(lambda: window.tabs.count() == 1, timeout=WAIT_MS)

    tray.refresh()
    assert tray.act_show.text() == "Hide Threadline"
    tray.act_show.trigger()
    assert not window.isVisible()
    assert tray.act_show.text() == "Show Threadline"
    tray.act_show.trigger()
    harness.qtbot.waitUntil(window.isVisible, timeout=WAIT_MS)

    with harness.qtbot.waitSignal(window.closed, timeout=WAIT_MS):
        tray.act_quit.trigger()
    harness.window = None
    harness.run(harness.engine.aclose())


def test_recent_chats_in_the_tray_open_their_tab(harness: AppHarness) -> None:
    citizen = citizen_for(harness)
    info = harness.run(harness.engine.sessions.new_session("Notes on Rome"))
    harness.window.sidebar.model.upsert(info)
    citizen.tray.refresh()
    recent = citizen.tray.recent.actions()
    assert [a.text() for a in recent] == ["Notes on Rome"]
    recent[0].trigger()
    harness.qtbot.waitUntil(lambda: harness.window.tabs.tab_for(info.id) is not None, timeout=WAIT_MS)


def test_quick_ask_goes_to_the_registered_action_and_says_so_without_one(harness: AppHarness) -> None:
    citizen = citizen_for(harness)
    shown: list[str] = []
    harness.window.bridge.shown.connect(lambda message: shown.append(message.text))
    citizen.tray.act_quick_ask.trigger()
    assert shown and "not available" in shown[-1]

    asked: list[str] = []
    citizen.actions.register(QUICK_ASK, lambda: asked.append("tray"))
    citizen.tray.act_quick_ask.trigger()
    citizen.open_words(["--show", "--quick-ask"])  # a second start's ``threadline --quick-ask``
    assert asked == ["tray", "tray"]


def test_closing_the_window_keeps_the_app_in_the_tray_when_asked(harness: AppHarness) -> None:
    citizen = citizen_for(harness)
    window = harness.window
    closed: list[bool] = []
    window.closed.connect(lambda: closed.append(True))
    citizen.tray.icon = QSystemTrayIcon(citizen.tray)  # a desktop with a tray (offscreen has none)
    harness.run(citizen.prefs.save(harness.engine, DesktopSwitches(keep_in_tray=True)))
    window.close()
    assert not window.isVisible() and not closed
    assert harness.run(harness.engine.settings.get_setting("desktop", {}))["keep_in_tray"] is True

    with harness.qtbot.waitSignal(window.closed, timeout=WAIT_MS):
        citizen.tray.act_quit.trigger()
    harness.window = None
    harness.run(harness.engine.aclose())


def test_a_new_chat_link_asks_first_and_puts_the_prompt_in_the_box_unsent(harness: AppHarness) -> None:
    citizen = citizen_for(harness)
    window = harness.window
    citizen.open_words(["--show", "threadline://new?prompt=Summarise%20this%20page"])
    box = question(harness, citizen)
    assert "Summarise this page" in box.informativeText()
    assert window.tabs.count() == 0
    answer(box, "Cancel")
    assert window.tabs.count() == 0

    citizen.open_words(["threadline://new?prompt=Summarise%20this%20page"])
    answer(question(harness, citizen), "New chat")
    harness.qtbot.waitUntil(lambda: window.tabs.count() == 1, timeout=WAIT_MS)
    tab = window.tabs.current_tab()
    harness.qtbot.waitUntil(lambda: tab.composer.text() == "Summarise this page", timeout=WAIT_MS)
    assert tab.live.conversation.path() == []  # in the box, not sent
    assert harness.server is not None and not harness.server.requests


def test_an_mcp_install_link_asks_then_opens_the_editor_and_saves_nothing_by_itself(
    harness: AppHarness,
) -> None:
    citizen = citizen_for(harness)
    config = base64.b64encode(json.dumps({"command": "uvx", "args": ["mcp-server-time"]}).encode()).decode()
    citizen.open_words([f"threadline://mcp/install?name=time&config={config}"])
    box = question(harness, citizen)
    assert "uvx mcp-server-time" in box.informativeText()
    answer(box, "Review…")
    harness.qtbot.waitUntil(
        lambda: any(e.isVisible() for e in harness.window.findChildren(McpServerEditor)), timeout=WAIT_MS
    )
    editor = next(e for e in harness.window.findChildren(McpServerEditor) if e.isVisible())
    assert (editor.name.text(), editor.command.text(), editor.args.text()) == (
        "time",
        "uvx",
        "mcp-server-time",
    )
    assert harness.run(harness.engine.tool_servers.list_servers()) == []
    editor.reject()


def test_a_bad_link_is_said_and_does_nothing(harness: AppHarness) -> None:
    citizen = citizen_for(harness)
    shown: list[str] = []
    harness.window.bridge.shown.connect(lambda message: shown.append(message.text))
    citizen.open_words(["threadline://delete-everything"])
    assert shown and shown[-1].startswith("Could not open the link")
    assert not citizen.requests.questions


def test_an_opened_export_is_offered_for_import(harness: AppHarness, tmp_path: Path) -> None:
    citizen = citizen_for(harness)
    prompt = Message.prompt("question", id="q1")
    reply = Message.reply(parent_id="q1", text="answer", status=MessageStatus.COMPLETE, id="r1")
    export = tmp_path / "chats.json"
    export.write_text(
        dumps([(SessionInfo(id="opened-1", title="From a file"), [prompt, reply])]), encoding="utf-8"
    )
    citizen.open_words(["--show", str(export)])
    box = question(harness, citizen)
    assert "chats.json" in box.text()
    answer(box, "Import")
    found: list[ImportReportDialog] = []

    def reported() -> bool:
        found[:] = [d for d in harness.window.findChildren(ImportReportDialog) if d.isVisible()]
        return bool(found)

    harness.qtbot.waitUntil(reported, timeout=WAIT_MS)
    found[0].accept()
    ids = {i.id for i in harness.run(harness.engine.sessions.list_sessions(limit=100))}
    assert "opened-1" in ids
