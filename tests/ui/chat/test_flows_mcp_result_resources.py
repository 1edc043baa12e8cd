"""Resources in an MCP tool's result, as a person meets them, with the real ``server-everything``.

The model calls ``get-resource-links`` (or ``get-resource-reference``); the result's box lists
each linked or embedded resource with its name and URI and Open and Attach links. Open reads
it from the server and shows its text in a read-only viewer (Save as… writes its bytes);
Attach puts it in the composer as an MCP resource chip, and Send sends its text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog
from tests.support.everything import everything_config
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.messages import MessageKind, ResourceRef

TIMEOUT = 60000
TEXT_2 = "demo://resource/dynamic/text/2"


def tool_reply(call_id: str, tool: str, arguments: dict[str, Any]) -> Any:
    return sse_response(openai_tool_call_stream([(call_id, tool, arguments)], text_pieces=["One moment."]))


def text_reply(text: str) -> Any:
    return sse_response(openai_text_stream([text]))


def with_everything(harness: Any) -> Any:
    harness.open()
    harness.run(harness.engine.tool_servers.save_server(everything_config()))
    agent = AgentConfig(
        "default",
        "Default",
        enabled_tools=("everything/*",),
        approval_rules=(ApprovalRule("everything/*", Approval.ALLOW),),
    )
    harness.run(harness.engine.agents.save_agent(agent))
    return new_tab(harness)


def results_message(tab: Any) -> Any:
    return next(m for m in tab.live.conversation.path() if m.kind is MessageKind.TOOL_RESULTS)


def click_link(harness: Any, tab: Any, message_id: str, href: str) -> None:
    view = tab.view
    harness.qtbot.waitUntil(lambda: view.anchor_rect(message_id, href) is not None, timeout=TIMEOUT)
    rect = view.anchor_rect(message_id, href)
    harness.qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def last_user_text(harness: Any) -> str:
    body = [r for r in harness.server.requests if r.method == "POST"][-1].body
    user = [m for m in body["messages"] if m["role"] == "user"][-1]
    content = user["content"]
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


def test_resource_links_in_a_result_are_listed_opened_and_attached(
    harness: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    harness.server.enqueue(
        tool_reply("r1", "everything__get-resource-links", {"count": 2}),
        text_reply("Two links."),
        text_reply("Ok."),
    )
    tab = with_everything(harness)
    type_and_send(harness.qtbot, tab, "Give me links")
    wait_idle(harness, tab, TIMEOUT)
    results = results_message(tab)
    [result] = results.tool_results
    assert [(r.server, r.uri, r.name, r.embedded) for r in result.resources] == [
        ("everything", "demo://resource/dynamic/blob/1", "Blob Resource 1", False),
        ("everything", TEXT_2, "Text Resource 2", False),
    ]
    assert f"[resource link: {TEXT_2}]" in result.text  # what the model got is unchanged
    shown = tab.view.rendered_document(results.id).toPlainText()
    assert f"Resource: Text Resource 2 {TEXT_2} Open Attach" in shown

    click_link(harness, tab, results.id, "mcp-resource:open:1:r1")
    harness.qtbot.waitUntil(
        lambda: tab.mcp.results.viewer is not None and tab.mcp.results.viewer.isVisible(), timeout=TIMEOUT
    )
    viewer = tab.mcp.results.viewer
    assert "Resource 2: This is a plaintext resource" in viewer.text()
    assert viewer.windowTitle() == "Text Resource 2" and viewer.texts[0].isReadOnly()
    viewer.reject()

    # The blob: shown as its text (it is text/plain), and saved as its bytes.
    click_link(harness, tab, results.id, "mcp-resource:open:0:r1")
    harness.qtbot.waitUntil(
        lambda: tab.mcp.results.viewer not in (None, viewer) and tab.mcp.results.viewer.isVisible(),
        timeout=TIMEOUT,
    )
    blob = tab.mcp.results.viewer
    assert "Resource 1: This is a base64 blob" in blob.text()
    target = tmp_path / "blob.txt"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    harness.qtbot.mouseClick(blob.save_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(target.exists, timeout=TIMEOUT)
    harness.qtbot.waitUntil(
        lambda: target.read_bytes().startswith(b"Resource 1: This is a base64 blob created at"),
        timeout=TIMEOUT,
    )
    blob.reject()

    click_link(harness, tab, results.id, "mcp-resource:attach:1:r1")
    chips = tab.composer.chips
    harness.qtbot.waitUntil(
        lambda: chips.resources() == [("everything", TEXT_2)] and not chips.reading_names(), timeout=TIMEOUT
    )
    assert chips.chips()[0].label.text().startswith(f"everything: {TEXT_2} · ≈")
    type_and_send(harness.qtbot, tab, "Summarise it")
    harness.qtbot.waitUntil(
        lambda: len([r for r in harness.server.requests if r.method == "POST"]) == 3, timeout=TIMEOUT
    )
    wait_idle(harness, tab, TIMEOUT)
    sent = last_user_text(harness)
    assert "Summarise it" in sent and "Resource 2: This is a plaintext resource" in sent


def test_an_embedded_resource_in_a_result_is_kept_and_opens_as_it_came(harness: Any) -> None:
    harness.server.enqueue(
        tool_reply("e1", "everything__get-resource-reference", {"resourceType": "Text", "resourceId": 2}),
        text_reply("Here it is."),
    )
    tab = with_everything(harness)
    type_and_send(harness.qtbot, tab, "Give me a resource")
    wait_idle(harness, tab, TIMEOUT)
    results = results_message(tab)
    [ref] = results.tool_results[0].resources
    assert isinstance(ref, ResourceRef) and ref.embedded and ref.uri == TEXT_2
    assert ref.text is not None and "Resource 2: This is a plaintext resource" in ref.text
    click_link(harness, tab, results.id, "mcp-resource:open:0:e1")
    harness.qtbot.waitUntil(lambda: tab.mcp.results.viewer is not None, timeout=TIMEOUT)
    assert tab.mcp.results.viewer.text() == ref.text
    tab.mcp.results.viewer.reject()
