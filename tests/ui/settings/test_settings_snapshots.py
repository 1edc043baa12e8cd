"""Settings → Data: the space the snapshots of changed files take, and dropping old ones.

A real turn writes a file (so its contents are kept); the section shows their size; "Drop…"
with 0 days (every snapshot made until now) and the confirmation drop them, and the space
shown follows. The turn's change stays listed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.ui_driving import new_tab_by_click, type_and_send, wait_idle

from threadline.core.config import AgentConfig, Approval, ApprovalRule

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="file times are set the POSIX way here")
WAIT = 20000


def test_space_used_and_dropping_old_snapshots(harness: Any, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    harness.server.enqueue(
        sse_response(
            openai_tool_call_stream([("c1", "write_file", {"path": "a.txt", "content": "kept words\n" * 50})])
        ),
        sse_response(openai_text_stream(["Written."])),
    )
    harness.open()
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=("write_file",),
                allowed_folders=(str(work),),
                approval_rules=(ApprovalRule("write_file", Approval.ALLOW),),
            )
        )
    )
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, "Write a file")
    wait_idle(harness, tab, WAIT)
    harness.qtbot.waitUntil(lambda: bool(tab.file_changes.change_sets), timeout=WAIT)

    harness.window.open_settings("data")
    dialog = harness.window._settings_dialog
    harness.qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=WAIT)
    section = dialog.snapshots
    harness.qtbot.waitUntil(lambda: section.space.text().endswith(" in 2 snapshots."), timeout=WAIT)

    section.days.setFocus()
    section.days.selectAll()
    harness.qtbot.keyClicks(section.days, "0")  # "older than 0 days": every snapshot made until now
    harness.qtbot.mouseClick(section.drop_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: section.confirm is not None and section.confirm.isVisible(), timeout=WAIT)
    drop = next(b for b in section.confirm.buttons() if b.text() == "Drop snapshots")
    harness.qtbot.mouseClick(drop, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: section.message.text() == "Dropped 2 snapshots.", timeout=WAIT)
    harness.qtbot.waitUntil(lambda: section.space.text() == "No snapshots are kept.", timeout=WAIT)
    assert harness.run(harness.engine.workspace.change_sets(tab.session_id))  # still listed
