"""A server's ``prompts/list_changed`` reaches the composer's ``/`` list while it is open.

The server (``tests/integration/tools/servers/prompting_server.py``, the SDK's own server over
stdio) starts with one prompt, ``greet``; its ``add_farewell`` tool adds ``farewell`` and tells
the client. With the list open on ``/prompting:``, the new prompt appears without typing
again, and picking and sending it sends its text as the user's turn.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.mcp_catalog import PromptInfo
from threadline.tools.mcp.config import McpServerConfig

PROMPTING_SERVER = Path(__file__).parents[2] / "integration" / "tools" / "servers" / "prompting_server.py"


def listed(popup: Any) -> list[str]:
    return [s.name for s in popup.specs() if isinstance(s, PromptInfo)]


def test_a_prompt_the_server_adds_appears_in_the_open_slash_list(harness: Any) -> None:
    harness.open()
    config = McpServerConfig("prompting", command=sys.executable, args=(str(PROMPTING_SERVER),))
    harness.run(harness.engine.tool_servers.save_server(config))
    tab = new_tab(harness)
    edit, qtbot = tab.composer.edit, harness.qtbot
    edit.setFocus()
    qtbot.keyClicks(edit, "/prompting:")
    popup = tab.slash_completer
    qtbot.waitUntil(lambda: listed(popup) == ["greet"], timeout=WAIT_MS)
    assert popup.isVisible()

    async def add_farewell() -> str:
        connection = await harness.engine.tool_servers.connection("prompting")
        return (await connection.call("add_farewell", {})).text

    assert harness.run(add_farewell()) == "added"
    qtbot.waitUntil(lambda: listed(popup) == ["greet", "farewell"], timeout=WAIT_MS)
    assert popup.isVisible() and edit.toPlainText() == "/prompting:"

    harness.server.enqueue(sse_response(openai_text_stream(["Bye!"], model="gpt-4o-mini")))
    qtbot.keyClicks(edit, "f")
    qtbot.waitUntil(lambda: listed(popup) == ["farewell"], timeout=WAIT_MS)
    qtbot.keyClick(edit, Qt.Key.Key_Return)  # picked: no arguments, so no form
    assert edit.toPlainText() == "/prompting:farewell" and not popup.isVisible()
    qtbot.keyClick(edit, Qt.Key.Key_Return)  # and sent
    qtbot.waitUntil(lambda: bool(harness.server.stream_requests()), timeout=WAIT_MS)
    wait_idle(harness, tab)
    body = harness.server.stream_requests()[-1].body
    assert body["messages"][-1] == {"role": "user", "content": "Goodbye!"}
