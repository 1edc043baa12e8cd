"""Settings → Tools and MCP servers, clicked through with the real Engine.

The MCP flow starts the real ``mcp-server-time`` from PyPI over stdio.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import keyring
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QFileDialog, QLineEdit, QMessageBox, QToolButton
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.ui_driving import type_and_send
from tests.support.waiting import WAIT_MS

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.engine.engine import DATABASE_FILENAME
from threadline.tools.mcp.config import McpServerConfig, Transport
from threadline.tools.mcp.secrets import SERVICE, STORED_IN_KEYCHAIN
from threadline.tools.mcp.state import ServerStatus
from threadline.ui.settings.secret_pairs import KEPT_PLACEHOLDER, SecretPairRow, SecretPairsEditor


def open_settings(harness: Any, page: str) -> Any:
    window = harness.window
    window.open_settings(page)
    dialog = window._settings_dialog
    harness.qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=WAIT_MS)
    assert dialog.loaded.exception() is None
    return dialog


def agent(harness: Any) -> AgentConfig:
    stored: AgentConfig = harness.run(harness.engine.agents.get_agent())
    return stored


def click(harness: Any, widget: Any) -> None:
    assert widget.isVisible() and widget.isEnabled(), widget
    if isinstance(widget, QCheckBox):  # on its box, as a user does (the widget may be wider than its text)
        harness.qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=QPoint(8, widget.height() // 2))
    else:
        harness.qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def add_pair(
    harness: Any, pairs: SecretPairsEditor, name: str, value: str, *, public: bool = False
) -> SecretPairRow:
    """Add a row as a person does: the Add button, the name, the value, and maybe "Not a secret"."""
    click(harness, pairs.add_button)
    row = pairs.rows[-1]
    harness.qtbot.keyClicks(row.name, name)
    harness.qtbot.keyClicks(row.value, value)
    if public:
        click(harness, row.public)
    return row


def test_builtin_tools_and_allowed_folders(
    harness: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness.open()
    dialog = open_settings(harness, "tools")
    page = dialog.tools
    assert dialog.pages.currentWidget() is page
    assert not any(box.isChecked() for box in page.builtin.values())  # off unless turned on
    click(harness, page.builtin["read_file"])
    harness.qtbot.waitUntil(lambda: agent(harness).enabled_tools == ("read_file",), timeout=WAIT_MS)
    click(harness, page.builtin["shell"])
    harness.qtbot.waitUntil(lambda: agent(harness).enabled_tools == ("read_file", "shell"), timeout=WAIT_MS)
    click(harness, page.builtin["read_file"])
    harness.qtbot.waitUntil(lambda: agent(harness).enabled_tools == ("shell",), timeout=WAIT_MS)

    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(folder)))
    click(harness, page.add_folder_button)
    harness.qtbot.waitUntil(lambda: agent(harness).allowed_folders == (str(folder),), timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: page.folders.count() == 1, timeout=WAIT_MS)
    assert not page.remove_folder_button.isEnabled()  # nothing selected yet
    page.folders.setCurrentRow(0)
    click(harness, page.remove_folder_button)
    harness.qtbot.waitUntil(lambda: agent(harness).allowed_folders == (), timeout=WAIT_MS)
    # closing the dialog saves the agent page without undoing the tool changes
    dialog.close_and_save()
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)
    assert agent(harness).enabled_tools == ("shell",)


def test_rules_add_edit_and_revoke_always_allow(harness: Any, tmp_path: Path) -> None:
    """An "Always allow" rule shows in settings; removing it makes the tool ask again."""
    work = tmp_path / "work"
    work.mkdir()
    harness.open()
    always = ApprovalRule("shell", Approval.ALLOW, argument_pattern="echo hi")
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=("shell",),
                allowed_folders=(str(work),),
                approval_rules=(always,),
            )
        )
    )
    dialog = open_settings(harness, "tools")
    page = dialog.tools
    harness.qtbot.waitUntil(lambda: page.rules.rowCount() == 1, timeout=WAIT_MS)
    assert page.rules.item(0, 0).text() == "shell"
    assert page.rules.item(0, 1).text() == "echo hi"
    assert page.rules.cellWidget(0, 2).currentText() == "Allow"

    # add a rule with the form (Enter in the field)
    page.new_pattern.setFocus()
    harness.qtbot.keyClicks(page.new_pattern, "git/*")
    page.new_approval.setCurrentIndex(page.new_approval.findData("deny"))
    harness.qtbot.keyClick(page.new_pattern, Qt.Key.Key_Return)
    harness.qtbot.waitUntil(lambda: len(agent(harness).approval_rules) == 2, timeout=WAIT_MS)
    assert agent(harness).approval_rules[0] == ApprovalRule("git/*", Approval.DENY)
    harness.qtbot.waitUntil(lambda: page.rules.rowCount() == 2, timeout=WAIT_MS)

    # change its approval in the table
    combo = page.rules.cellWidget(0, 2)
    assert isinstance(combo, QComboBox)
    combo.setCurrentIndex(combo.findData("ask"))
    harness.qtbot.waitUntil(
        lambda: agent(harness).approval_rules[0] == ApprovalRule("git/*", Approval.ASK), timeout=WAIT_MS
    )

    # revoke the "Always allow" rule with its × button
    harness.qtbot.waitUntil(lambda: page.rules.rowCount() == 2, timeout=WAIT_MS)
    remove = page.rules.cellWidget(1, 3)
    assert isinstance(remove, QToolButton) and "shell" in remove.toolTip()
    click(harness, remove)
    harness.qtbot.waitUntil(
        lambda: agent(harness).approval_rules == (ApprovalRule("git/*", Approval.ASK),), timeout=WAIT_MS
    )
    harness.qtbot.waitUntil(lambda: page.rules.rowCount() == 1, timeout=WAIT_MS)
    assert "asks again" in page.message.text()
    dialog.close_and_save()
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)

    # ...and the same command asks again
    harness.server.enqueue(
        sse_response(openai_tool_call_stream([("c1", "shell", {"command": "echo hi"})])),
        sse_response(openai_text_stream(["ok"])),
    )
    window = harness.window
    harness.qtbot.mouseClick(window.sidebar.new_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: window.tabs.current_tab() is not None, timeout=WAIT_MS)
    tab = window.tabs.current_tab()
    type_and_send(harness.qtbot, tab, "say hi")
    harness.qtbot.waitUntil(lambda: tab.awaiting_approval, timeout=WAIT_MS)
    click(harness, tab.approval.rows[0].allow_button)
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].text == "ok", timeout=WAIT_MS)


def test_always_allow_from_a_turn_appears_while_settings_are_open(harness: Any, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    harness.open()
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig("default", "Default", enabled_tools=("shell",), allowed_folders=(str(work),))
        )
    )
    dialog = open_settings(harness, "tools")
    page = dialog.tools
    assert page.rules.rowCount() == 0 and page.no_rules.isVisible()
    # a turn's "Always allow" is stored while the page is open; editing the page keeps it
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=("shell",),
                allowed_folders=(str(work),),
                approval_rules=(ApprovalRule("shell", Approval.ALLOW, "ls"),),
            )
        )
    )
    click(harness, page.builtin["notes"])
    harness.qtbot.waitUntil(lambda: page.rules.rowCount() == 1, timeout=WAIT_MS)
    stored = agent(harness)
    assert stored.enabled_tools == ("shell", "notes")
    assert stored.approval_rules == (ApprovalRule("shell", Approval.ALLOW, "ls"),)
    dialog.close_and_save()
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)
    assert agent(harness).approval_rules == stored.approval_rules


def test_add_mcp_server_see_it_ready_with_tools_offer_and_remove(
    harness: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness.open()
    dialog = open_settings(harness, "mcp")
    page = dialog.mcp
    assert dialog.pages.currentWidget() is page
    assert page.empty.isVisible()
    click(harness, page.add_button)
    editor = page.editor
    harness.qtbot.waitUntil(editor.isVisible, timeout=WAIT_MS)
    # a name with a double underscore is refused in the dialog
    harness.qtbot.keyClicks(editor.name, "my__time")
    click(harness, editor.save_button)
    assert editor.isVisible() and editor.message.isVisible() and "name" in editor.message.text().lower()
    editor.name.clear()
    harness.qtbot.keyClicks(editor.name, "time")
    harness.qtbot.keyClicks(editor.command, sys.executable)
    harness.qtbot.keyClicks(editor.args, "-m mcp_server_time --local-timezone Europe/Paris")
    add_pair(harness, editor.env, "PYTHONUNBUFFERED", "1", public=True)
    click(harness, editor.save_button)
    harness.qtbot.waitUntil(lambda: not editor.isVisible(), timeout=WAIT_MS)
    servers = harness.run(harness.engine.tool_servers.list_servers())
    assert servers == [
        McpServerConfig(
            "time",
            Transport.STDIO,
            command=sys.executable,
            args=("-m", "mcp_server_time", "--local-timezone", "Europe/Paris"),
            env={"PYTHONUNBUFFERED": "1"},
            public_env=("PYTHONUNBUFFERED",),
        )
    ]
    harness.qtbot.waitUntil(lambda: page.current_name() == "time", timeout=WAIT_MS)
    assert page.status.text().startswith("Stopped")
    assert "mcp_server_time" in page.where.text()

    click(harness, page.start_button)
    harness.qtbot.waitUntil(lambda: page.states["time"].status is ServerStatus.READY, timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: page.status.text().startswith("Ready"), timeout=WAIT_MS)
    tools = [page.tools.item(i).data(Qt.ItemDataRole.UserRole) for i in range(page.tools.count())]
    assert "time/get_current_time" in tools and "time/convert_time" in tools
    assert page.stop_button.isEnabled() and not page.start_button.isEnabled()

    assert not page.offer.isChecked()
    click(harness, page.offer)
    harness.qtbot.waitUntil(lambda: "time/*" in agent(harness).enabled_tools, timeout=WAIT_MS)
    click(harness, page.offer)
    harness.qtbot.waitUntil(lambda: "time/*" not in agent(harness).enabled_tools, timeout=WAIT_MS)
    click(harness, page.offer)
    harness.qtbot.waitUntil(lambda: "time/*" in agent(harness).enabled_tools, timeout=WAIT_MS)

    click(harness, page.stop_button)
    harness.qtbot.waitUntil(lambda: page.status.text().startswith("Stopped"), timeout=WAIT_MS)

    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Yes))
    click(harness, page.remove_button)
    harness.qtbot.waitUntil(
        lambda: not harness.run(harness.engine.tool_servers.list_servers()), timeout=WAIT_MS
    )
    harness.qtbot.waitUntil(lambda: page.list.count() == 0 and page.empty.isVisible(), timeout=WAIT_MS)
    assert "time/*" not in agent(harness).enabled_tools
    dialog.close_and_save()
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)


@pytest.mark.expected_log_warnings("could not start")
def test_failed_server_shows_its_error_and_edit_renames(harness: Any, tmp_path: Path) -> None:
    harness.open()
    missing = str(tmp_path / "no-such-server")
    harness.run(
        harness.engine.tool_servers.save_server(
            McpServerConfig("broken", command=missing, startup_timeout=10)
        )
    )
    harness.run(
        harness.engine.agents.save_agent(AgentConfig("default", "Default", enabled_tools=("broken/*",)))
    )
    dialog = open_settings(harness, "mcp")
    page = dialog.mcp
    harness.qtbot.waitUntil(lambda: page.current_name() == "broken", timeout=WAIT_MS)
    assert page.offer.isChecked()
    click(harness, page.start_button)
    harness.qtbot.waitUntil(lambda: page.states["broken"].status is ServerStatus.FAILED, timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: page.error.isVisible(), timeout=WAIT_MS)
    assert page.status.text().startswith("Failed")
    assert page.error.text().startswith("Last error:") and len(page.error.text()) > len("Last error: ")

    click(harness, page.edit_button)
    editor = page.editor
    harness.qtbot.waitUntil(editor.isVisible, timeout=WAIT_MS)
    assert editor.name.text() == "broken" and editor.command.text() == missing
    editor.name.selectAll()
    harness.qtbot.keyClicks(editor.name, "fixed")
    editor.transport.setCurrentIndex(editor.transport.findData("http"))
    harness.qtbot.keyClicks(editor.url, "http://127.0.0.1:9/mcp")
    add_pair(harness, editor.headers, "Authorization", "Bearer x")
    click(harness, editor.save_button)
    harness.qtbot.waitUntil(lambda: not editor.isVisible(), timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: page.current_name() == "fixed", timeout=WAIT_MS)
    (server,) = harness.run(harness.engine.tool_servers.list_servers())
    assert (server.name, server.transport, server.url, server.headers, server.command) == (
        "fixed",
        Transport.HTTP,
        "http://127.0.0.1:9/mcp",
        {"Authorization": STORED_IN_KEYCHAIN},  # the token itself went to the keychain
        "",
    )
    assert keyring.get_password(SERVICE, "fixed/header/Authorization") == "Bearer x"

    click(harness, page.edit_button)  # a stored secret is shown masked and kept when left alone
    editor = page.editor
    harness.qtbot.waitUntil(editor.isVisible, timeout=WAIT_MS)
    (kept,) = editor.headers.rows
    assert kept.name.text() == "Authorization" and kept.value.text() == "" and kept.stored
    add_pair(harness, editor.headers, "X-Trace", "on", public=True)
    click(harness, editor.save_button)
    harness.qtbot.waitUntil(lambda: not editor.isVisible(), timeout=WAIT_MS)
    (server,) = harness.run(harness.engine.tool_servers.list_servers())
    assert server.headers == {"Authorization": STORED_IN_KEYCHAIN, "X-Trace": "on"}
    assert server.public_headers == ("X-Trace",)
    assert keyring.get_password(SERVICE, "fixed/header/Authorization") == "Bearer x"
    assert agent(harness).enabled_tools == ("fixed/*",)  # the offer follows the rename
    dialog.close_and_save()
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)


TOKEN = "ghp_x7Kq0123456789NotARealTokenAbCdEf"


def database_holds(harness: Any, secret: str) -> bool:
    """Whether the raw bytes of the SQLite file (or its WAL and journal) contain ``secret``."""
    files = harness.data_dir.glob(DATABASE_FILENAME + "*")
    return any(secret.encode() in path.read_bytes() for path in files)


def test_gh_pat_typed_in_the_editor_goes_to_the_keychain_and_never_to_the_database(
    harness: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    harness.open()
    dialog = open_settings(harness, "mcp")
    page = dialog.mcp
    click(harness, page.add_button)
    editor = page.editor
    harness.qtbot.waitUntil(editor.isVisible, timeout=WAIT_MS)
    harness.qtbot.keyClicks(editor.name, "github")
    harness.qtbot.keyClicks(editor.command, sys.executable)
    harness.qtbot.keyClicks(editor.args, "-m mcp_server_time")
    row = add_pair(harness, editor.env, "GH_PAT", TOKEN)
    assert row.masked()  # a password field: the token is never painted
    click(harness, row.show_value)
    assert not row.masked()
    click(harness, row.show_value)
    add_pair(harness, editor.env, "LOG_LEVEL", "debug", public=True)
    click(harness, editor.save_button)
    harness.qtbot.waitUntil(lambda: not editor.isVisible(), timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: page.current_name() == "github", timeout=WAIT_MS)

    assert keyring.get_password(SERVICE, "github/env/GH_PAT") == TOKEN
    assert not database_holds(harness, TOKEN)
    assert database_holds(harness, "LOG_LEVEL")  # the record itself is there: the check can fail
    (server,) = harness.run(harness.engine.tool_servers.list_servers())
    assert server.env == {"GH_PAT": STORED_IN_KEYCHAIN, "LOG_LEVEL": "debug"}

    click(harness, page.edit_button)  # reopened: the token is masked, only its place is shown
    editor = page.editor
    harness.qtbot.waitUntil(editor.isVisible, timeout=WAIT_MS)
    gh_pat, log_level = editor.env.rows
    assert (gh_pat.name.text(), gh_pat.value.text()) == ("GH_PAT", "")
    assert gh_pat.value.placeholderText() == KEPT_PLACEHOLDER and gh_pat.masked()
    assert log_level.value.text() == "debug" and log_level.public.isChecked() and not log_level.masked()
    assert TOKEN not in {w.text() for w in editor.findChildren(QLineEdit)}

    click(harness, gh_pat.public)  # the user says it is not a secret after all: back to the settings
    click(harness, editor.save_button)
    harness.qtbot.waitUntil(lambda: not editor.isVisible(), timeout=WAIT_MS)
    (server,) = harness.run(harness.engine.tool_servers.list_servers())
    assert server.env == {"GH_PAT": TOKEN, "LOG_LEVEL": "debug"}
    assert server.public_env == ("GH_PAT", "LOG_LEVEL")
    assert keyring.get_password(SERVICE, "github/env/GH_PAT") is None
    assert TOKEN not in caplog.text
    dialog.close_and_save()
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)


def test_a_value_without_a_name_and_a_repeated_name_are_refused_in_the_editor(harness: Any) -> None:
    harness.open()
    dialog = open_settings(harness, "mcp")
    page = dialog.mcp
    click(harness, page.add_button)
    editor = page.editor
    harness.qtbot.waitUntil(editor.isVisible, timeout=WAIT_MS)
    harness.qtbot.keyClicks(editor.name, "twice")
    harness.qtbot.keyClicks(editor.command, "prog")
    add_pair(harness, editor.env, "A", "1")
    add_pair(harness, editor.env, "A", "2")
    click(harness, editor.save_button)
    assert editor.message.isVisible() and "given twice" in editor.message.text()
    click(harness, editor.env.rows[-1].remove)
    harness.qtbot.waitUntil(lambda: len(editor.env.rows) == 1, timeout=WAIT_MS)
    add_pair(harness, editor.env, "", "orphan")
    click(harness, editor.save_button)
    assert "no name" in editor.message.text()
    assert harness.run(harness.engine.tool_servers.list_servers()) == []
    editor.reject()
    dialog.close_and_save()
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)
