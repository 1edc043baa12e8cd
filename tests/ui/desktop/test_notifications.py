"""A reply that finishes out of view is a desktop notification, and its action opens the chat.

A real session bus (``dbus-daemon``) and a real notification server on it, in a process of
its own (``tests/support/notification_daemon.py``, QtDBus): the window's notifier finds it
as it would GNOME's or KDE's, calls ``Notify`` with the spec's signature, and follows its
``ActionInvoked`` signal (and the ``ActivationToken`` a version 1.2 server sends before it).
The reply streams from the replay server in a tab that is not the
current one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtDBus import QDBusConnection
from tests.support.notification_daemon import NotificationDaemon, session_bus
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.sse_streams import openai_auth_error
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS
from tests.ui.conftest import AppHarness

from threadline.core.config import AgentConfig
from threadline.ui.common import activation
from threadline.ui.common.activation import ActivationToken
from threadline.ui.common.desktop_prefs import DesktopSwitches
from threadline.ui.desktop.citizen import DesktopCitizen

REPLY = "The Colosseum held fifty thousand people."


@pytest.fixture
def daemon() -> Iterator[tuple[str, NotificationDaemon]]:
    for address in session_bus():
        server = NotificationDaemon(address)
        try:
            yield address, server
        finally:
            server.stop()


_buses = iter(range(1_000_000))


def connect(address: str) -> QDBusConnection:
    bus = QDBusConnection.connectToBus(address, f"test-notifications-{next(_buses)}")
    assert bus.isConnected(), bus.lastError().message()
    return bus


def background_reply(harness: AppHarness, citizen: DesktopCitizen, response: Any = None) -> Any:
    """Send in one chat, then make another the current tab while the reply is written."""
    window = harness.window
    first = harness.run(harness.engine.sessions.new_session("Rome"))
    second = harness.run(harness.engine.sessions.new_session("Paris"))
    tab = harness.run(window.session_tabs.open(first.id, focus=True))
    harness.run(window.session_tabs.open(second.id, focus=True))
    window.tabs.focus_tab(first.id)
    assert harness.server is not None
    if response is None:
        response = sse_response(openai_text_stream([REPLY[:20], REPLY[20:]]), first_byte_delay=0.5)
    harness.server.enqueue(response)
    type_and_send(harness.qtbot, tab, "How big was the Colosseum?")
    window.tabs.focus_tab(second.id)
    wait_idle(harness, tab)
    return tab


def test_a_reply_finished_in_a_background_tab_is_notified_and_its_action_opens_the_chat(
    harness: AppHarness, daemon: tuple[str, NotificationDaemon]
) -> None:
    address, server = daemon
    harness.open()
    citizen = DesktopCitizen(harness.window, harness.engine, bus=connect(address))
    harness.run(citizen.prefs.load(harness.engine))
    tab = background_reply(harness, citizen)

    harness.qtbot.waitUntil(lambda: bool(server.notifications()), timeout=WAIT_MS)
    [note] = server.notifications()
    assert note["app"] == "Threadline"
    assert note["summary"] == "Reply ready: Rome"
    assert REPLY[:10] not in note["body"]  # no reply text unless the user allows it
    assert "open" in note["actions"]
    assert harness.window.tabs.current_tab() is not tab

    server.invoke(note["id"], "open")
    harness.qtbot.waitUntil(lambda: harness.window.tabs.current_tab() is tab, timeout=WAIT_MS)


def test_open_chat_activates_the_window_with_the_servers_activation_token(
    harness: AppHarness, daemon: tuple[str, NotificationDaemon], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wayland lets the window take the focus only with the token the server made for the click."""
    monkeypatch.delenv("XDG_ACTIVATION_TOKEN", raising=False)
    address, server = daemon
    harness.open()
    citizen = DesktopCitizen(harness.window, harness.engine, bus=connect(address))
    harness.run(citizen.prefs.load(harness.engine))
    tab = background_reply(harness, citizen)
    harness.qtbot.waitUntil(lambda: bool(server.notifications()), timeout=WAIT_MS)
    [note] = server.notifications()

    server.invoke(note["id"], "open", token="notify-token-7")
    harness.qtbot.waitUntil(lambda: harness.window.tabs.current_tab() is tab, timeout=WAIT_MS)
    assert activation.last_used() == ActivationToken(xdg="notify-token-7", startup_id="notify-token-7")
    assert "XDG_ACTIVATION_TOKEN" not in os.environ  # set only around the activation: spent once


def test_the_reply_text_is_shown_only_when_allowed_and_each_kind_can_be_switched_off(
    harness: AppHarness, daemon: tuple[str, NotificationDaemon]
) -> None:
    address, server = daemon
    harness.open()
    citizen = DesktopCitizen(harness.window, harness.engine, bus=connect(address))
    harness.run(citizen.prefs.save(harness.engine, DesktopSwitches(show_text=True)))
    background_reply(harness, citizen)
    harness.qtbot.waitUntil(lambda: bool(server.notifications()), timeout=WAIT_MS)
    assert server.notifications()[-1]["body"] == REPLY

    harness.run(citizen.prefs.save(harness.engine, DesktopSwitches(notify_finished=False)))
    before = len(citizen.notifier.sent)
    background_reply(harness, citizen)
    assert len(citizen.notifier.sent) == before


def test_without_a_notification_service_the_tray_is_asked(harness: AppHarness, daemon: Any) -> None:
    address, server = daemon
    server.stop()  # the bus stays, nobody serves notifications on it
    harness.open()
    shown: list[tuple[str, str]] = []
    citizen = DesktopCitizen(harness.window, harness.engine, bus=connect(address))
    citizen.notifier._fallback = lambda summary, body: shown.append((summary, body)) is None
    harness.run(citizen.prefs.load(harness.engine))
    background_reply(harness, citizen)
    harness.qtbot.waitUntil(lambda: bool(shown), timeout=WAIT_MS)
    assert shown[0][0] == "Reply ready: Rome"


def test_a_reply_that_fails_out_of_view_is_notified_without_the_error_text(
    harness: AppHarness, daemon: tuple[str, NotificationDaemon]
) -> None:
    address, server = daemon
    harness.open()
    citizen = DesktopCitizen(harness.window, harness.engine, bus=connect(address))
    harness.run(citizen.prefs.load(harness.engine))
    background_reply(harness, citizen, replace(openai_auth_error(), first_byte_delay=0.5))
    harness.qtbot.waitUntil(lambda: bool(server.notifications()), timeout=WAIT_MS)
    [note] = server.notifications()
    assert note["summary"] == "Reply failed: Rome"
    assert note["body"] == "Open the chat to see why and retry."


def test_a_tool_call_waiting_for_approval_out_of_view_is_notified(
    harness: AppHarness, daemon: tuple[str, NotificationDaemon], tmp_path: Path
) -> None:
    address, server = daemon
    harness.open()
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig("default", "Default", enabled_tools=("shell",), allowed_folders=(str(tmp_path),))
        )
    )
    citizen = DesktopCitizen(harness.window, harness.engine, bus=connect(address))
    harness.run(citizen.prefs.load(harness.engine))
    window = harness.window
    first = harness.run(harness.engine.sessions.new_session("Rome"))
    second = harness.run(harness.engine.sessions.new_session("Paris"))
    tab = harness.run(window.session_tabs.open(first.id, focus=True))
    harness.run(window.session_tabs.open(second.id, focus=True))
    window.tabs.focus_tab(first.id)
    assert harness.server is not None
    calls = openai_tool_call_stream([("c1", "shell", {"command": "echo hi"})], text_pieces=["Let me check."])
    harness.server.enqueue(
        sse_response(calls, first_byte_delay=0.5), sse_response(openai_text_stream(["It said hi."]))
    )
    type_and_send(harness.qtbot, tab, "Say hi with the shell")
    window.tabs.focus_tab(second.id)

    harness.qtbot.waitUntil(lambda: bool(server.notifications()), timeout=WAIT_MS)
    note = server.notifications()[0]
    assert note["summary"] == "Waiting for your approval: Rome"
    server.invoke(note["id"], "open")
    harness.qtbot.waitUntil(lambda: window.tabs.current_tab() is tab, timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: bool(tab.approval.rows), timeout=WAIT_MS)
    tab.approval.rows[0].allow_button.click()
    wait_idle(harness, tab)
