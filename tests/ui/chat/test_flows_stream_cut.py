"""A reply whose connection closes mid-stream, as a person meets it: a real engine, the loopback
replay server dropping the connection (or breaking the chunked framing) after some text, and the
window. The turn ends with a banner that says what happened, and the text that arrived stays in
the chat and in the history (the engine keeps a partial reply on a provider error)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click, type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.messages import MessageStatus


@pytest.mark.parametrize("fault", ["disconnect_after", "broken_framing"])
def test_a_reply_cut_off_mid_stream_says_so_and_keeps_its_text(harness: Any, fault: str) -> None:
    harness.server.enqueue(sse_response(openai_text_stream(["Cut ", "short", " never"]), **{fault: 3}))
    harness.open()
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, "Tell me a long story")
    wait_idle(harness, tab)

    harness.qtbot.waitUntil(lambda: tab.banner.isVisible(), timeout=WAIT_MS)
    said = tab.banner.label.text() + tab.banner.label.toolTip()
    assert "closed before the reply finished" in said and "partial reply was kept" in said, said
    assert "RemoteProtocolError" not in said and "Could not connect" not in said
    reply = tab.live.conversation.path()[-1]
    assert reply.is_assistant and reply.status is MessageStatus.FAILED and reply.text == "Cut short"
    assert "Cut short" in tab.view.rendered_document(reply.id).toPlainText()


def test_a_reply_cut_off_before_its_first_words_does_not_blame_the_network(harness: Any) -> None:
    """The server answered (status, headers, the first event) and then closed: it was reached,
    so the banner must not say "could not connect" and send the user to check the server."""
    harness.server.default = sse_response(openai_text_stream(["never"]), disconnect_after=1)
    harness.open()
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, "Tell me a long story")
    wait_idle(harness, tab)

    harness.qtbot.waitUntil(lambda: tab.banner.isVisible(), timeout=WAIT_MS)
    said = tab.banner.label.text() + tab.banner.label.toolTip()
    assert "closed before the reply finished" in said and "Could not connect" not in said, said
    assert tab.live.conversation.path()[0].text == "Tell me a long story", "the prompt stays"
