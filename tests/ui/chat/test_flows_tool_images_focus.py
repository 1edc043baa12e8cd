"""A tool's image and long JSON in the chat, and where the keyboard goes after Deny and Retry.

The image comes from a real MCP server over stdio (``servers/chart_server.py``, the
official SDK), through a full turn with the real Engine and the replay server.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import (
    openai_server_error,
    openai_text_stream,
    openai_tool_call_stream,
    sse_response,
)
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.messages import MessageKind
from threadline.engine.events import ErrorAction
from threadline.ui.chat.view.image_viewer import ImageViewer

TIMEOUT = 30000
CHART_SERVER = Path(__file__).parent / "servers" / "chart_server.py"


def tool_reply(*calls: tuple[str, str, dict[str, Any]]) -> Any:
    return sse_response(openai_tool_call_stream(list(calls), text_pieces=["Let me draw it."]))


def text_reply(text: str) -> Any:
    return sse_response(openai_text_stream([text]))


def agent_with(harness: Any, *tools: str, rules: tuple[ApprovalRule, ...] = ()) -> None:
    agent = AgentConfig("default", "Default", enabled_tools=tools, approval_rules=rules)
    harness.run(harness.engine.agents.save_agent(agent))


def test_a_tool_image_shows_as_a_thumbnail_opens_full_size_and_json_wraps(
    harness: Any, tmp_path: Path
) -> None:
    from threadline.tools.mcp.config import McpServerConfig

    harness.server.enqueue(tool_reply(("c1", "charts__chart", {"title": "Sales"})), text_reply("Here it is."))
    harness.open()
    harness.run(
        harness.engine.tool_servers.save_server(
            McpServerConfig("charts", command=sys.executable, args=(str(CHART_SERVER),))
        )
    )
    agent_with(harness, "charts/*", rules=(ApprovalRule("charts/*", Approval.ALLOW),))
    window = harness.window
    window.resize(900, 800)
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Chart the sales")
    wait_idle(harness, tab, timeout=TIMEOUT)
    results = next(m for m in tab.live.conversation.path() if m.kind is MessageKind.TOOL_RESULTS)
    (result,) = results.tool_results
    assert len(result.images) == 1 and result.images[0].media_type == "image/png"

    view = tab.view
    view.scroll_to_message(results.id, flash=False)
    harness.qtbot.waitUntil(lambda: results.id in view.visible_message_ids(), timeout=TIMEOUT)
    geo = next(g for g in view._visible if g.message_id == results.id)
    doc = view._docs[results.id].doc
    # The thumbnail is in the document at the chart's own size (it fits the column) ...
    assert doc.toHtml().count("<img") == 1 and 'width="320"' in doc.toHtml()
    assert geo.doc_rect.height() > 200  # ... so the row is painted taller than the image
    window.grab().save(str(tmp_path / "tool_image_closed.png"))
    # ... and the long one-line JSON, opened, wraps inside the column instead of running past it.
    toggle = view.anchor_rect(results.id, f"toggle:{results.id}:c1")
    assert toggle is not None
    harness.qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=toggle.center())
    harness.qtbot.waitUntil(lambda: "x" * 100 in view._docs[results.id].doc.toPlainText(), timeout=TIMEOUT)
    opened = view._docs[results.id].doc
    assert opened.idealWidth() <= view.content_width()
    assert opened.size().width() <= view.content_width() + 1
    view.scroll_to_bottom()
    window.grab().save(str(tmp_path / "tool_image_open.png"))

    # Clicking the thumbnail opens the image at full size.
    image_link = view.anchor_rect(results.id, f"attached-image:{results.id}:0")
    assert image_link is not None
    harness.qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=image_link.center())
    harness.qtbot.waitUntil(lambda: isinstance(view.image_viewer, ImageViewer), timeout=TIMEOUT)
    viewer = view.image_viewer
    assert viewer is not None
    pixmap = viewer.label.pixmap()
    assert (pixmap.width(), pixmap.height()) == (320, 200)
    viewer.close()


def test_after_deny_the_keyboard_is_back_in_the_message_box(harness: Any, tmp_path: Path) -> None:
    harness.server.enqueue(
        tool_reply(("c1", "shell", {"command": "rm -rf build"})), text_reply("I will leave it.")
    )
    harness.open()
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig("default", "Default", enabled_tools=("shell",), allowed_folders=(str(tmp_path),))
        )
    )
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Clean up")
    harness.qtbot.waitUntil(
        lambda: tab.approval.isVisibleTo(tab) and len(tab.approval.rows) == 1, timeout=TIMEOUT
    )
    (row,) = tab.approval.rows
    row.deny_button.setFocus()
    harness.qtbot.keyClick(row.deny_button, Qt.Key.Key_Space)
    wait_idle(harness, tab)
    harness.qtbot.waitUntil(lambda: tab.window().focusWidget() is tab.composer.edit, timeout=TIMEOUT)


def test_after_retry_the_keyboard_is_back_in_the_message_box(harness: Any) -> None:
    harness.server.enqueue(openai_server_error(500), openai_server_error(500))
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Will this fail?")
    harness.qtbot.waitUntil(lambda: tab.banner.button(ErrorAction.RETRY) is not None, timeout=TIMEOUT)
    wait_idle(harness, tab)
    retry = tab.banner.button(ErrorAction.RETRY)
    assert retry is not None and retry.isVisible()
    harness.server.enqueue(text_reply("It worked."))
    retry.setFocus()
    harness.qtbot.keyClick(retry, Qt.Key.Key_Space)
    wait_idle(harness, tab)
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].text == "It worked.", timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: tab.window().focusWidget() is tab.composer.edit, timeout=TIMEOUT)
