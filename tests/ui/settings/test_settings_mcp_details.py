"""Settings → MCP, a server's details: what it is, its instructions and log, and signing in and out.

The real ``@modelcontextprotocol/server-everything`` (npm, stdio) for the details and the log;
the OAuth-protected MCP server of tests/support/oauth_servers.py for signing in. The
"browser" is a handler of the test's behind ``QDesktopServices``: it follows the
authorization page's redirects on a thread of its own, as a browser would, which brings the
code to Threadline's loopback listener.
"""

from __future__ import annotations

import re
import threading
import urllib.request
from collections.abc import Iterator
from typing import Any

import keyring
import pytest
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from tests.support.everything_server import everything_config
from tests.support.oauth_servers import ServerFactory, oauth_server  # noqa: F401
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.ui.settings.test_settings_tools import click, open_settings

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.tools.mcp import oauth as mcp_oauth
from threadline.tools.mcp.config import McpServerConfig, Transport
from threadline.tools.mcp.state import ServerStatus

TIMEOUT = 60000


class Browser(QObject):
    """Loads each page it is sent to (redirects followed) on a thread, like a browser tab."""

    def __init__(self, *, load: bool = True) -> None:
        super().__init__()
        self.load = load
        self.opened: list[str] = []
        self.loaded: list[int] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toString())
        if self.load:
            threading.Thread(target=self._visit, args=(url.toString(),), daemon=True).start()

    def _visit(self, url: str) -> None:
        with urllib.request.urlopen(url, timeout=60) as response:
            self.loaded.append(response.status)


@pytest.fixture
def browser() -> Iterator[Browser]:
    handler = Browser()
    QDesktopServices.setUrlHandler("http", handler, "open")
    yield handler
    QDesktopServices.unsetUrlHandler("http")


def select(harness: Any, page: Any, name: str) -> None:
    item = page._item(name)
    rect = page.list.visualItemRect(item)
    harness.qtbot.mouseClick(page.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert page.current_name() == name


def test_details_instructions_and_log_of_a_running_server(harness: Any) -> None:
    harness.server.enqueue(
        sse_response(openai_tool_call_stream([("t1", "everything__toggle-simulated-logging", {})])),
        sse_response(openai_text_stream(["Logging."])),
    )
    harness.open()
    harness.run(harness.engine.tool_servers.save_server(everything_config()))
    agent = AgentConfig(
        "default",
        "Default",
        enabled_tools=("everything/*",),
        approval_rules=(ApprovalRule("everything/*", Approval.ALLOW),),
    )
    harness.run(harness.engine.agents.save_agent(agent))
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Log something")
    wait_idle(harness, tab, timeout=TIMEOUT)

    dialog = open_settings(harness, "mcp")
    page = dialog.mcp
    select(harness, page, "everything")
    details = page.server_details
    harness.qtbot.waitUntil(lambda: "protocol 2025-11-25" in details.facts.text(), timeout=TIMEOUT)
    facts = details.facts.text()
    assert facts.startswith(
        "Transport: stdio · protocol 2025-11-25\nCapabilities: tools, prompts, resources, logging"
    )
    tools, prompts, resources = facts.splitlines()[2].split(" · ")
    assert tools == f"{len(page.states['everything'].tools)} tools"
    assert int(prompts.split()[0]) >= 3 and prompts.endswith(" prompts")
    assert int(resources.split()[0]) >= 1 and resources.split()[1].startswith("resource")
    assert not details.sign_row.isVisible()  # a local server has no sign in
    assert details.instructions.isVisible()
    assert "Everything Server – Server Instructions" in details.instructions.toPlainText()

    # The server logs right away when its logging is turned on, then every 5 s.
    harness.qtbot.waitUntil(lambda: "-level message" in details.log.toPlainText(), timeout=TIMEOUT)
    first = details.log.toPlainText().splitlines()[0]
    match = re.match(r"^\d\d:\d\d:\d\d ([A-Z]+): (\w+)[- ]level", first)
    assert match is not None, first
    assert match.group(1) == match.group(2).upper()  # "12:00:01 INFO: Info-level message"

    assert details.level.isEnabled() and details.level.currentText() == "Server's default"
    details.level.setFocus()
    harness.qtbot.keyClicks(details.level, "Error")  # picks "Error" as a person typing in the list does
    harness.qtbot.keyClick(details.level, Qt.Key.Key_Return)
    harness.qtbot.waitUntil(
        lambda: harness.run(harness.engine.mcp_servers.details("everything")).log_level == "error",
        timeout=TIMEOUT,
    )
    assert details.level.currentText() == "Error"
    dialog.close_and_save()


@pytest.mark.expected_log_warnings("needs you to sign in")
def test_sign_in_and_out_from_settings(harness: Any, oauth_server: ServerFactory, browser: Browser) -> None:  # noqa: F811
    url = oauth_server()
    harness.open()
    config = McpServerConfig("secured", transport=Transport.HTTP, url=url, autostart=True)
    harness.run(harness.engine.tool_servers.save_server(config))
    harness.run(harness.engine.tool_servers.start_autostart())  # in the background: no page opens
    assert browser.opened == []
    dialog = open_settings(harness, "mcp")
    page = dialog.mcp
    select(harness, page, "secured")
    details = page.server_details
    harness.qtbot.waitUntil(lambda: details.sign_row.isVisible(), timeout=TIMEOUT)
    assert details.sign_state.text() == "secured needs you to sign in."
    assert "needs you to sign in" in page.error.text()
    assert not details.sign_out_button.isEnabled()

    click(harness, details.sign_in_button)
    assert details.sign_state.text() == "Waiting for you to sign in in the browser…"
    harness.qtbot.waitUntil(lambda: details.sign_state.text() == "Signed in.", timeout=TIMEOUT)
    assert len(browser.opened) == 1 and browser.opened[0].startswith(url.removesuffix("/mcp"))
    assert page.states["secured"].status is ServerStatus.READY
    assert "streamable HTTP" in details.facts.text()
    stored = {user for (service, user) in keyring.get_keyring().entries if service == mcp_oauth.SERVICE}  # type: ignore[attr-defined]
    assert stored == {f"{url} tokens", f"{url} client"}

    click(harness, details.sign_out_button)
    harness.qtbot.waitUntil(lambda: details.sign_state.text() == "Not signed in.", timeout=TIMEOUT)
    stored = {user for (service, user) in keyring.get_keyring().entries if service == mcp_oauth.SERVICE}  # type: ignore[attr-defined]
    assert stored == {f"{url} client"}  # the tokens left the keychain; the registration stays
    assert page.states["secured"].status is ServerStatus.STOPPED
    dialog.close_and_save()


@pytest.mark.expected_log_warnings("was declined in the browser")
def test_a_sign_in_declined_in_the_browser_says_so(
    harness: Any,
    oauth_server: ServerFactory,  # noqa: F811
    browser: Browser,
) -> None:
    url = oauth_server("--deny")
    harness.open()
    harness.run(
        harness.engine.tool_servers.save_server(McpServerConfig("secured", transport=Transport.HTTP, url=url))
    )
    dialog = open_settings(harness, "mcp")
    page = dialog.mcp
    select(harness, page, "secured")
    details = page.server_details
    harness.qtbot.waitUntil(lambda: details.sign_row.isVisible(), timeout=TIMEOUT)
    assert details.sign_state.text() == "Not signed in."
    click(harness, details.sign_in_button)
    harness.qtbot.waitUntil(lambda: "was declined in the browser" in dialog.message.text(), timeout=TIMEOUT)
    assert dialog.message.isVisible() and "Sign in again to retry." in dialog.message.text()
    assert browser.opened and details.sign_in_button.isEnabled()
    harness.qtbot.waitUntil(lambda: details.sign_state.text() == "Not signed in.", timeout=TIMEOUT)
    dialog.close_and_save()


def test_a_call_that_needs_a_sign_in_asks_in_the_chat_first(
    harness: Any,
    oauth_server: ServerFactory,  # noqa: F811
    browser: Browser,
) -> None:
    url = oauth_server()
    harness.server.enqueue(
        sse_response(openai_tool_call_stream([("w1", "secured__whoami", {})])),
        sse_response(openai_text_stream(["You are signed in."])),
    )
    harness.open()
    harness.run(
        harness.engine.tool_servers.save_server(McpServerConfig("secured", transport=Transport.HTTP, url=url))
    )
    agent = AgentConfig(
        "default",
        "Default",
        enabled_tools=("secured/*",),
        approval_rules=(ApprovalRule("secured/*", Approval.ALLOW),),
    )
    harness.run(harness.engine.agents.save_agent(agent))
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Who am I?")
    harness.qtbot.waitUntil(lambda: harness.window.mcp_person.wiring(tab).asking, timeout=TIMEOUT)
    bar = harness.window.mcp_person.wiring(tab).bar
    assert bar.title.text() == "secured needs you to sign in"
    assert bar.accept_button.text() == "&Sign in" and not bar.decline_button.isVisible()
    assert browser.opened == []  # nothing opens before the person says so
    click(harness, bar.accept_button)
    wait_idle(harness, tab, timeout=TIMEOUT)
    assert len(browser.opened) == 1
    results = next(m for m in tab.live.conversation.path() if m.tool_results)
    assert '"grants"' in results.tool_results[0].text and not results.tool_results[0].is_error
    assert not bar.isVisible()  # the waiting line went with the turn
    assert harness.run(harness.engine.tool_servers.signed_in("secured"))
