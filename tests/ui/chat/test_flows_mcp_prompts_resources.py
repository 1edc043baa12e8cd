"""MCP prompts and resources in a chat, as a person uses them, with the real ``server-everything``.

Type ``/``, pick the prompt, fill its form (the server's suggestions as you type), Send: the
prompt's messages are the user's turn in the chat and in the request. Attach → From MCP
server…, pick a resource (and a template with its variable), Attach, Send: the chips name the
server and URI, and the request carries the resources' text. A subscribed resource that
changes is marked. With ``THREADLINE_SHOTS`` naming a folder, the form and the browser are
saved as pictures there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from tests.support.everything import STATIC_TEXT, everything_config
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle

from threadline.core.mcp_catalog import PromptInfo
from threadline.ui.chat.composer.attachment_tray import ChipState
from threadline.ui.chat.view.conversation_model import MessageRole

TIMEOUT = 60000


def reply(text: str) -> Any:
    return sse_response(openai_text_stream(split_text(text, 4), model="gpt-4o-mini"))


def last_user_text(harness: Any) -> str:
    body = [r for r in harness.server.requests if r.method == "POST"][-1].body
    user = [m for m in body["messages"] if m["role"] == "user"][-1]
    content = user["content"]
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


def with_everything(harness: Any) -> Any:
    harness.open()
    harness.run(harness.engine.tool_servers.save_server(everything_config()))
    return new_tab(harness)


def shot(widget: Any, name: str) -> None:
    folder = os.environ.get("THREADLINE_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        widget.grab().save(str(Path(folder) / f"{name}.png"))


def test_a_prompt_picked_from_the_slash_list_is_filled_in_and_sent_as_the_users_turn(harness: Any) -> None:
    harness.server.enqueue(reply("Done."))
    tab = with_everything(harness)
    edit, qtbot = tab.composer.edit, harness.qtbot
    edit.setFocus()
    qtbot.keyClicks(edit, "/")
    popup = tab.slash_completer
    qtbot.waitUntil(
        lambda: any(isinstance(s, PromptInfo) for s in popup.specs()), timeout=TIMEOUT
    )  # listed once the server answered, while the list is open
    qtbot.keyClicks(edit, "everything:c")
    [spec] = popup.specs()
    assert isinstance(spec, PromptInfo) and spec.name == "completable-prompt"
    entry = popup.list.item(0).data(Qt.ItemDataRole.AccessibleTextRole)
    assert entry == (
        "/everything:completable-prompt department=… name=…: First argument choice narrows values "
        "for second argument. (MCP server everything)"
    )
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: tab.mcp.form is not None and tab.mcp.form.isVisible(), timeout=TIMEOUT)
    form = tab.mcp.form
    assert not form.send_button.isEnabled()  # both arguments are required
    department = form.form.field("department")
    department.setFocus()
    qtbot.keyClicks(department, "S")
    qtbot.waitUntil(lambda: department.suggestions.stringList() == ["Sales", "Support"], timeout=TIMEOUT)
    qtbot.keyClicks(department, "ales")
    name = form.form.field("name")
    name.setFocus()
    qtbot.keyClicks(name, "E")
    qtbot.waitUntil(lambda: name.suggestions.stringList() == ["Eve"], timeout=TIMEOUT)  # Sales' people
    shot(form, "mcp-prompt-form")
    qtbot.keyClicks(name, "ve")
    assert form.send_button.isEnabled()
    qtbot.mouseClick(form.send_button, Qt.MouseButton.LeftButton)
    wait_idle(harness, tab, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: len(harness.server.requests) == 1, timeout=TIMEOUT)
    assert last_user_text(harness) == "Please promote Eve to the head of the Sales team."
    rows = [tab.model.index(i, 0) for i in range(tab.model.rowCount())]
    users = [r.data(MessageRole) for r in rows if r.data(MessageRole).role.value == "user"]
    assert [m.text for m in users] == ["Please promote Eve to the head of the Sales team."]  # shown
    assert tab.composer.text() == ""


def test_a_prompt_typed_with_its_arguments_sends_its_embedded_resource(harness: Any) -> None:
    harness.server.enqueue(reply("Analysed."))
    tab = with_everything(harness)
    harness.qtbot.waitUntil(lambda: tab.mcp.servers == ["everything"], timeout=TIMEOUT)
    assert harness.engine.mcp.known_prompts() == []  # not listed yet: the server is asked at send
    type_and_send(harness.qtbot, tab, "/everything:resource-prompt resourceType=Text resourceId=2")
    wait_idle(harness, tab, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: len(harness.server.requests) == 1, timeout=TIMEOUT)
    sent = last_user_text(harness)
    assert "This prompt includes the Text resource with id: 2" in sent
    assert "Resource 2: This is a plaintext resource" in sent
    [prompt] = [m for m in tab.live.conversation.path() if m.context]
    assert [c.name for c in prompt.context] == ["everything: demo://resource/dynamic/text/2"]


def test_a_prompt_missing_an_argument_opens_its_form_and_sends_nothing(harness: Any) -> None:
    tab = with_everything(harness)
    harness.run(harness.engine.mcp.refresh_prompts())
    type_and_send(harness.qtbot, tab, "/everything:args-prompt state=Texas")
    harness.qtbot.waitUntil(lambda: tab.mcp.form is not None and tab.mcp.form.isVisible(), timeout=TIMEOUT)
    assert tab.mcp.form.form.values() == {"city": "", "state": "Texas"}
    assert not tab.mcp.form.send_button.isEnabled()
    tab.mcp.form.reject()
    assert harness.server.requests == []


def test_resources_attached_from_the_browser_are_named_read_and_sent(harness: Any) -> None:
    harness.server.enqueue(reply("Read them."))
    tab = with_everything(harness)
    qtbot, composer = harness.qtbot, tab.composer
    qtbot.waitUntil(lambda: composer._mcp_available, timeout=TIMEOUT)
    qtbot.mouseClick(composer.attach_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(composer.attach_menu.isVisible, timeout=TIMEOUT)
    [files, from_mcp] = composer.attach_menu.actions()
    assert (files.text(), from_mcp.text()) == ("Files…", "From MCP server…")
    composer.attach_menu.hide()
    from_mcp.trigger()
    browser = tab.mcp.browser
    qtbot.waitUntil(lambda: browser is not None and browser.list.count() > 0, timeout=TIMEOUT)
    browser.select("architecture.md")
    assert STATIC_TEXT in browser.details.text()
    qtbot.mouseClick(browser.attach_button, Qt.MouseButton.LeftButton)
    browser.select("Dynamic Text Resource")
    field = browser.variables.field("resourceId")
    field.setFocus()
    qtbot.keyClicks(field, "7")
    qtbot.waitUntil(lambda: field.suggestions.stringList() == ["7"], timeout=TIMEOUT)
    shot(browser, "mcp-resource-browser")
    qtbot.mouseClick(browser.attach_button, Qt.MouseButton.LeftButton)
    browser.reject()
    qtbot.waitUntil(
        lambda: not composer.chips.reading_names() and len(composer.attachments()) == 2, timeout=TIMEOUT
    )
    texts = [chip.label.text() for chip in composer.chips.chips()]
    assert texts[0].startswith(f"everything: {STATIC_TEXT} · ≈"), texts
    assert texts[1].startswith("everything: demo://resource/dynamic/text/7 · ≈"), texts
    assert [chip.toolTip().splitlines()[-1] for chip in composer.chips.chips()][1] == (
        "From MCP server everything: demo://resource/dynamic/text/7"
    )
    type_and_send(qtbot, tab, "Summarise these")  # read again, then sent
    qtbot.waitUntil(lambda: len(harness.server.requests) == 1, timeout=TIMEOUT)
    wait_idle(harness, tab, timeout=TIMEOUT)
    sent = last_user_text(harness)
    assert "Everything Server – Architecture" in sent and "Resource 7: This is a plaintext resource" in sent
    assert "Summarise these" in sent


def test_an_attached_resource_that_changes_is_marked_and_read_again(harness: Any) -> None:
    tab = with_everything(harness)
    tab.mcp.attach("everything", STATIC_TEXT)
    chips = tab.composer.chips
    harness.qtbot.waitUntil(lambda: [e.state for e in chips.entries()] == [ChipState.READY], timeout=TIMEOUT)
    connection = harness.run(harness.engine.tool_servers.connection("everything"))
    output = harness.run(connection.call("toggle-subscriber-updates", {}))  # the server sends updates now
    assert not output.is_error, output.text
    harness.qtbot.waitUntil(
        lambda: any("changed, read again" in chip.label.text() for chip in chips.chips()), timeout=TIMEOUT
    )
    QApplication.processEvents()
    assert chips.resources() == [("everything", STATIC_TEXT)]


def test_an_attached_resource_is_read_again_when_sent(harness: Any) -> None:
    """The dynamic resources of server-everything carry the time they were made: the one sent is
    the one read at Send, not the one read when it was attached."""
    harness.server.enqueue(reply("Read it."))
    tab = with_everything(harness)
    uri = "demo://resource/dynamic/text/3"
    tab.mcp.attach("everything", uri)
    chips = tab.composer.chips
    harness.qtbot.waitUntil(lambda: [e.state for e in chips.entries()] == [ChipState.READY], timeout=TIMEOUT)
    [first] = tab.composer.attachments()
    reads: list[str] = []
    engine_read = harness.engine.mcp.read

    async def counted(server: str, wanted: str) -> Any:
        reads.append(wanted)
        return await engine_read(server, wanted)

    harness.engine.mcp.read = counted  # counts the reads, the server still answers them
    type_and_send(harness.qtbot, tab, "What does it say?")
    harness.qtbot.waitUntil(lambda: len(harness.server.requests) == 1, timeout=TIMEOUT)
    wait_idle(harness, tab, timeout=TIMEOUT)
    assert reads == [uri]
    assert "Resource 3: This is a plaintext resource" in last_user_text(harness)
    [prompt] = [m for m in tab.live.conversation.path() if m.context]
    assert prompt.context[0].name == f"everything: {uri}" and first.name == prompt.context[0].name


def test_at_lists_resources_and_templates_by_name_and_attaches_the_one_picked(harness: Any) -> None:
    tab = with_everything(harness)
    edit, qtbot = tab.composer.edit, harness.qtbot
    edit.setFocus()
    qtbot.keyClicks(edit, "Summarise @arch")
    qtbot.waitUntil(lambda: tab.mcp.at_list is not None and tab.mcp.at_list.isVisible(), timeout=TIMEOUT)
    at_list = tab.mcp.at_list
    assert [e.name for e in at_list.shown()] == ["architecture.md"]
    assert at_list.list.item(0).text() == f"@architecture.md  ·  everything  ·  {STATIC_TEXT}"
    qtbot.keyClick(edit, Qt.Key.Key_Return)  # picks; does not send
    assert edit.toPlainText() == "Summarise " and not at_list.isVisible()
    qtbot.waitUntil(lambda: len(tab.composer.attachments()) == 1, timeout=TIMEOUT)
    assert tab.composer.attachments()[0].name == f"everything: {STATIC_TEXT}"
    qtbot.keyClicks(edit, "@dynamic")  # a word: what follows "@" up to the cursor
    qtbot.waitUntil(at_list.isVisible, timeout=TIMEOUT)
    assert [e.name for e in at_list.shown()] == ["Dynamic Text Resource", "Dynamic Blob Resource"]
    qtbot.keyClick(edit, Qt.Key.Key_Tab)  # a template: the browser opens on its form
    qtbot.waitUntil(
        lambda: tab.mcp.browser is not None and tab.mcp.browser.variables is not None, timeout=TIMEOUT
    )
    assert tab.mcp.browser.variables.values() == {"resourceId": ""}
    assert harness.server.requests == []


def test_a_prompt_the_server_does_not_have_says_so_and_sends_nothing(harness: Any) -> None:
    tab = with_everything(harness)
    harness.qtbot.waitUntil(lambda: tab.mcp.servers == ["everything"], timeout=TIMEOUT)
    type_and_send(harness.qtbot, tab, "/everything:no-such-prompt a=1")
    harness.qtbot.waitUntil(lambda: "no prompt" in tab.banner.label.text(), timeout=TIMEOUT)
    assert tab.banner.label.text() == (
        "/everything:no-such-prompt did not run: MCP server 'everything' has no prompt 'no-such-prompt'."
    )
    assert tab.composer.text() == "/everything:no-such-prompt a=1"  # kept, to correct
    assert harness.server.requests == []
