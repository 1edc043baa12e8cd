"""A chat replying in another instance: the tab says where, holds a message sent meanwhile and
sends it when that reply ends, and can stop the other reply.

The window's engine and a second real engine share the SQLite file, as a second
app instance would; the second streams a slow reply from the replay server. The
tab learns of it through the change feed.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send
from tests.support.waiting import WAIT_MS

from threadline.core.messages import MessageKind, MessageStatus
from threadline.engine.engine import DATABASE_FILENAME, Engine
from threadline.store.repository import Store

THREADLINE = (sys.executable, "-m", "threadline")
SHOTS = os.environ.get("THREADLINE_SCREENSHOTS")
"""A folder to save screenshots in (looked at by hand), or unset."""


async def second_instance(harness: Any, session_id: str, prompt: str) -> Engine:
    """A second real engine on the window's database file (another app instance) sending ``prompt``."""
    other = await Engine.open(
        harness.data_dir / "other",
        database_url=Store.sqlite_url(harness.data_dir / DATABASE_FILENAME),
        provider_timeout=10.0,
        lease_heartbeat=0.2,
    )
    await other.sessions.open_session(session_id)
    other.turns.send(session_id, prompt)
    return other


def test_a_message_sent_while_replying_elsewhere_waits_and_goes_when_that_reply_is_stopped(
    harness: Any,
) -> None:
    harness.open()
    tab = new_tab(harness)
    host = socket.gethostname()

    pieces = [f"word{n} " for n in range(400)]
    harness.server.enqueue(sse_response(openai_text_stream(pieces), chunk_delay=0.05))
    other = harness.run(second_instance(harness, tab.session_id, "Long answer, please"))
    try:
        strip = tab.busy_elsewhere
        harness.qtbot.waitUntil(strip.isVisible, timeout=WAIT_MS)
        assert strip.label.text().startswith(f"Replying on {host}")
        assert strip.button.isEnabled()
        if SHOTS:
            tab.window().grab().save(str(Path(SHOTS) / "busy_elsewhere.png"))

        harness.server.enqueue(sse_response(openai_text_stream(["Here ", "too."])))
        type_and_send(harness.qtbot, tab, "Me too")  # the chat is busy there: it waits
        harness.qtbot.waitUntil(lambda: strip.dont_send.isVisible(), timeout=WAIT_MS)
        assert strip.label.text().endswith("Your message is sent when it ends.")
        assert tab.composer.text() == "Me too" and tab.banner.error is None
        if SHOTS:
            tab.window().grab().save(str(Path(SHOTS) / "busy_elsewhere_waiting.png"))

        def other_reply_grown() -> bool:
            live = other.sessions.live(tab.session_id)
            reply = live.conversation.reply if live is not None else None
            return reply is not None and len(reply.text) > 20

        harness.qtbot.waitUntil(other_reply_grown, timeout=WAIT_MS)
        harness.qtbot.mouseClick(strip.button, Qt.MouseButton.LeftButton)
        harness.qtbot.waitUntil(lambda: "stop" in strip.label.text(), timeout=WAIT_MS)
        harness.qtbot.waitUntil(lambda: not other.turns.running(tab.session_id), timeout=WAIT_MS)
        harness.qtbot.waitUntil(lambda: not strip.isVisible(), timeout=WAIT_MS)
        # The other reply ended: the waiting message went, after it, and the box emptied.
        harness.qtbot.waitUntil(lambda: tab.composer.text() == "", timeout=WAIT_MS)
        harness.qtbot.waitUntil(
            lambda: (
                tab.model.message_at(tab.model.rowCount() - 1) is not None
                and tab.model.message_at(tab.model.rowCount() - 1).text == "Here too."
            ),
            timeout=WAIT_MS,
        )
        sent = [r for r in harness.server.requests if r.method == "POST"][-1].body["messages"]
        assert sent[-1]["content"] == "Me too", sent
        assert [m["content"] for m in sent if m["role"] == "user"][-2] == "Long answer, please"

        async def stored() -> list[Any]:
            return list(await other.store.load_tree(tab.session_id))

        messages = harness.run(stored())
        assert [m.text for m in messages if m.kind is MessageKind.PROMPT] == ["Long answer, please", "Me too"]
        reply = next(m for m in messages if m.is_assistant)
        assert (
            reply.status is MessageStatus.CANCELLED and reply.text and len(reply.text) < len("".join(pieces))
        )
    finally:
        harness.run(other.aclose())


def test_dont_send_keeps_the_waiting_message_in_the_box(harness: Any) -> None:
    harness.open()
    tab = new_tab(harness)

    pieces = [f"w{n} " for n in range(60)]
    harness.server.enqueue(sse_response(openai_text_stream(pieces), chunk_delay=0.05))
    other = harness.run(second_instance(harness, tab.session_id, "Slow one"))
    try:
        strip = tab.busy_elsewhere
        harness.qtbot.waitUntil(strip.isVisible, timeout=WAIT_MS)
        type_and_send(harness.qtbot, tab, "Maybe later")
        harness.qtbot.waitUntil(lambda: strip.dont_send.isVisible(), timeout=WAIT_MS)
        harness.qtbot.mouseClick(strip.dont_send, Qt.MouseButton.LeftButton)
        assert not strip.dont_send.isVisible() and not strip.label.text().endswith("when it ends.")
        harness.qtbot.waitUntil(lambda: not other.turns.running(tab.session_id), timeout=WAIT_MS)
        harness.qtbot.waitUntil(lambda: not strip.isVisible(), timeout=WAIT_MS)
        assert tab.composer.text() == "Maybe later", "not sent: still in the box"
        posts = [r for r in harness.server.requests if r.method == "POST"]
        assert all(r.body["messages"][-1]["content"] != "Maybe later" for r in posts)
    finally:
        harness.run(other.aclose())


def test_a_message_waiting_for_a_killed_instance_is_sent_once_its_lease_is_gone(harness: Any) -> None:
    """The other instance is a real ``threadline ask`` process, killed with SIGKILL mid-reply: it
    never gives its lease up. The strip goes and the waiting message is sent anyway, after the
    cut-off reply, which is kept as interrupted."""
    harness.open()
    tab = new_tab(harness)
    strip = tab.busy_elsewhere

    pieces = [f"word{n} " for n in range(400)]
    harness.server.enqueue(sse_response(openai_text_stream(pieces), chunk_delay=0.05))
    other = subprocess.Popen(
        [*THREADLINE, "--data-dir", str(harness.data_dir), "ask", "--session", tab.session_id, "Long one"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"},
    )
    try:
        harness.qtbot.waitUntil(strip.isVisible, timeout=WAIT_MS)
        assert strip.label.text().startswith(f"Replying on {socket.gethostname()}")
        harness.server.enqueue(sse_response(openai_text_stream(["Here ", "too."])))
        type_and_send(harness.qtbot, tab, "Me too")
        harness.qtbot.waitUntil(lambda: strip.dont_send.isVisible(), timeout=WAIT_MS)

        def other_reply_shown() -> bool:  # the feed brings the other reply into this tab as it grows
            last = tab.model.message_at(tab.model.rowCount() - 1)
            return last is not None and last.text.startswith("word0 word1 ")

        harness.qtbot.waitUntil(other_reply_shown, timeout=WAIT_MS)
    finally:
        other.kill()  # SIGKILL: no lease given up, no reply finished
        other.wait(timeout=30)

    harness.qtbot.waitUntil(lambda: not strip.isVisible(), timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: tab.composer.text() == "", timeout=WAIT_MS)
    harness.qtbot.waitUntil(
        lambda: (
            tab.model.message_at(tab.model.rowCount() - 1) is not None
            and tab.model.message_at(tab.model.rowCount() - 1).text == "Here too."
        ),
        timeout=WAIT_MS,
    )
    # The tab shows text as it streams; the store has all of it once the turn is over
    # (idle means saved). Read before that, the last write may still be on its way.
    harness.qtbot.waitUntil(lambda: not harness.engine.turns.running(tab.session_id), timeout=WAIT_MS)

    async def stored() -> list[Any]:
        tree = await harness.engine.store.load_tree(tab.session_id)
        return tree.path(tree.active_leaf)

    path = harness.run(stored())
    texts = [m.text for m in path]
    assert texts[:1] + texts[2:] == ["Long one", "Me too", "Here too."]
    assert path[1].status is MessageStatus.INTERRUPTED and "".join(pieces).startswith(path[1].text)
