"""An MCP server's questions answered in the chat, and its long call shown and stopped there.

The real ``@modelcontextprotocol/server-everything`` (npm, stdio) is the server; the model
is the replay server, asking for its tools. The person types into the form, clicks its
buttons and agrees to open pages; what the server received is read back from the tool's
result, as the model gets it. Pages "open" through ``QDesktopServices``, routed to a handler
of the test's (no browser is started).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox
from tests.support.everything_server import everything_config
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.messages import MessageKind

TIMEOUT = 60000
FORM_TOOL = "everything__trigger-elicitation-request"
URL_TOOL = "everything__trigger-url-elicitation"
LONG_TOOL = "everything__trigger-long-running-operation"


def tool_reply(call_id: str, tool: str, arguments: dict[str, Any]) -> Any:
    return sse_response(openai_tool_call_stream([(call_id, tool, arguments)], text_pieces=["One moment."]))


def text_reply(text: str) -> Any:
    return sse_response(openai_text_stream([text]))


class Browser(QObject):
    """Where ``QDesktopServices.openUrl`` sends https pages during a test."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toString())


@pytest.fixture
def browser() -> Iterator[Browser]:
    handler = Browser()
    QDesktopServices.setUrlHandler("https", handler, "open")
    yield handler
    QDesktopServices.unsetUrlHandler("https")


def with_everything(harness: Any) -> None:
    harness.open()
    harness.run(harness.engine.tool_servers.save_server(everything_config()))
    agent = AgentConfig(
        "default",
        "Default",
        enabled_tools=("everything/*",),
        approval_rules=(ApprovalRule("everything/*", Approval.ALLOW),),
    )
    harness.run(harness.engine.agents.save_agent(agent))


def result_text(tab: Any) -> str:
    results = next(m for m in tab.live.conversation.path() if m.kind is MessageKind.TOOL_RESULTS)
    return results.tool_results[0].text


def asked(harness: Any, tab: Any) -> Any:
    harness.qtbot.waitUntil(
        lambda: (
            harness.window.mcp_person.wiring(tab).built is not None
            and harness.window.mcp_person.wiring(tab).built.asking
            and harness.window.mcp_person.wiring(tab).asking
        ),
        timeout=TIMEOUT,
    )
    return harness.window.mcp_person.wiring(tab).bar


def click(harness: Any, button: Any) -> None:
    assert button.isVisible() and button.isEnabled(), button.text()
    harness.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_a_form_is_filled_in_checked_and_sent(harness: Any) -> None:
    harness.server.enqueue(tool_reply("e1", FORM_TOOL, {}), text_reply("Thanks."))
    with_everything(harness)
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Ask me things")
    bar = asked(harness, tab)
    assert bar.title.text() == "everything asks (while running trigger-elicitation-request)"
    assert bar.message.text() == "Please provide inputs for the following fields:"
    form = bar.form
    name = form.field_widget("name")
    assert isinstance(name, QLineEdit) and name.accessibleDescription().startswith("Required.")
    # defaults are filled in
    assert form.field_widget("firstLine").text() == "It was a dark and stormy night."
    integer = form.field_widget("integer")
    assert isinstance(integer, QSpinBox) and integer.value() == 42 and integer.maximum() == 100
    hero = form.field_widget("titledSingleSelectEnum")
    assert isinstance(hero, QComboBox) and hero.currentText() == "Superman"
    assert [hero.itemText(i) for i in range(hero.count())] == ["Superman", "Green Lantern", "Wonder Woman"]
    assert form.field_widget("legacyTitledEnum").currentText() == "Cats"  # enumNames as titles
    assert form.field_widget("email").placeholderText() == "name@example.com"
    assert tab.busy  # the tool call waits

    # Accept with the required name empty and a bad email: refused, said why.
    email = form.field_widget("email")
    email.setFocus()
    harness.qtbot.keyClicks(email, "not-an-address")
    click(harness, bar.accept_button)
    assert bar.asking and bar.problem.isVisible()
    assert "String is required." in bar.problem.text() and "not an email address" in bar.problem.text()

    name.setFocus()
    harness.qtbot.keyClicks(name, "Ada Lovelace")
    email.clear()
    harness.qtbot.keyClicks(email, "ada@example.com")
    check = form.field_widget("check")
    assert isinstance(check, QCheckBox)
    click(harness, check)
    integer.setFocus()
    integer.selectAll()
    harness.qtbot.keyClicks(integer, "7")
    hero.setCurrentIndex(2)
    click(harness, bar.accept_button)
    wait_idle(harness, tab, timeout=TIMEOUT)
    text = result_text(tab)
    assert "User provided the requested information" in text
    assert "- Name: Ada Lovelace" in text and "- Agreed to terms: true" in text
    assert "- Email: ada@example.com" in text and "- Favorite Integer: 7" in text
    assert '"titledSingleSelectEnum": "hero-3"' in text
    assert '"untitledMultipleSelectEnum": [\n      "Guitar"\n    ]' in text  # a default sent as it was
    assert "homepage" not in text  # optional, untouched, no default: left out
    assert not bar.isVisible()


def test_decline_and_cancel_reach_the_server(harness: Any) -> None:
    harness.server.enqueue(
        tool_reply("e1", FORM_TOOL, {}),
        text_reply("Fine."),
        tool_reply("e2", FORM_TOOL, {}),
        text_reply("Fine again."),
    )
    with_everything(harness)
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Ask me")
    click(harness, asked(harness, tab).decline_button)
    wait_idle(harness, tab, timeout=TIMEOUT)
    assert "User declined to provide the requested information" in result_text(tab)

    type_and_send(harness.qtbot, tab, "Ask me again")
    bar = asked(harness, tab)
    harness.qtbot.keyClick(bar.cancel_button, Qt.Key.Key_C, Qt.KeyboardModifier.AltModifier)
    wait_idle(harness, tab, timeout=TIMEOUT)
    second = [m for m in tab.live.conversation.path() if m.kind is MessageKind.TOOL_RESULTS][1]
    assert "User cancelled the elicitation dialog" in second.tool_results[0].text


def test_a_page_is_opened_only_on_consent(harness: Any, browser: Browser) -> None:
    page = "https://pay.example.com/checkout?order=7"
    harness.server.enqueue(
        tool_reply("u1", URL_TOOL, {"url": page, "message": "Finish the payment."}),
        text_reply("Paid."),
    )
    with_everything(harness)
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Pay for it")
    bar = asked(harness, tab)
    assert bar.url_host is not None and bar.url_host.text() == "Opens a page on pay.example.com"
    assert bar.accept_button.text() == "&Open in browser"
    assert browser.opened == []  # nothing opened before the person agrees
    click(harness, bar.accept_button)
    wait_idle(harness, tab, timeout=TIMEOUT)
    assert browser.opened == [page]
    assert "User completed the URL elicitation flow" in result_text(tab)


def test_progress_shows_on_the_running_call_and_stop_ends_it(harness: Any) -> None:
    harness.server.enqueue(tool_reply("l1", LONG_TOOL, {"duration": 400, "steps": 200}), text_reply("Done."))
    with_everything(harness)
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Take your time")
    harness.qtbot.waitUntil(
        lambda: (
            harness.window.mcp_person.wiring(tab).built is not None
            and "of 200" in harness.window.mcp_person.wiring(tab).built.running_message.text()
        ),
        timeout=TIMEOUT,
    )
    bar = harness.window.mcp_person.wiring(tab).bar
    assert bar.running_label.text() == "everything · trigger-long-running-operation"
    assert bar.progress.maximum() == 1000 and 0 < bar.progress.value() < 1000
    click(harness, bar.stop_button)
    wait_idle(harness, tab, timeout=TIMEOUT)
    assert not bar.isVisible()
    assert harness.server.pending == 1  # the model was not asked again


def test_the_question_shows_in_the_tab_whose_call_asks(harness: Any) -> None:
    harness.server.enqueue(tool_reply("e1", FORM_TOOL, {}), text_reply("Thanks."))
    with_everything(harness)
    asking = new_tab(harness)
    type_and_send(harness.qtbot, asking, "Ask me things")
    other = new_tab(harness)  # the user moved on to another chat meanwhile
    assert harness.window.tabs.current_tab() is other
    bar = asked(harness, asking)
    assert harness.window.mcp_person.find(other) is None
    bar.form.field_widget("name").setText("Ada")
    click_later = bar.accept_button
    harness.window.tabs.focus_tab(asking.session_id)
    harness.qtbot.waitUntil(lambda: not click_later.visibleRegion().isEmpty(), timeout=TIMEOUT)  # laid out
    click(harness, click_later)
    wait_idle(harness, asking, timeout=TIMEOUT)
    assert "- Name: Ada" in result_text(asking)


def test_closing_the_tab_cancels_its_question(harness: Any) -> None:
    harness.server.enqueue(tool_reply("e1", FORM_TOOL, {}), text_reply("Never mind."))
    with_everything(harness)
    tab = new_tab(harness)
    session_id = tab.session_id
    type_and_send(harness.qtbot, tab, "Ask me")
    asked(harness, tab)
    harness.window.tabs.close_tab(tab)
    harness.run(harness.engine.turns.wait_idle(session_id), timeout=TIMEOUT)
    live = harness.run(harness.engine.sessions.open_session(session_id))
    results = next(m for m in live.conversation.path() if m.kind is MessageKind.TOOL_RESULTS)
    assert "User cancelled the elicitation dialog" in results.tool_results[0].text
