"""Find in a chat leaves a reply's Sources box out: its rows are not the message's text, so
the count (made from the messages' data) and the highlights (made in the documents) agree."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tests.support.ui_fakes import FakeLive
from tests.ui.chat.test_find import find, open_host

from threadline.core.conversation import Conversation
from threadline.core.messages import Message, MessageStatus
from threadline.core.sources import Source, SourceKind, SourceLocator
from threadline.core.tree import ConversationTree
from threadline.ui.chat.view.source_list import sources_key

SOURCE = Source(SourceKind.KNOWLEDGE, "handbook", SourceLocator("/d/handbook.pdf", page=2), "Torque 42.")


def test_an_open_sources_box_is_not_searched(qtbot: Any) -> None:
    prompt = Message.prompt("What torque?", id="q1")
    reply = Message.reply(
        parent_id="q1", text="The handbook says 42 [1].", status=MessageStatus.COMPLETE, id="r1"
    )
    reply = replace(reply, sources=(SOURCE,))
    live = FakeLive(conversation=Conversation("s1", ConversationTree([prompt, reply], active_leaf="r1")))
    host = open_host(qtbot, live)
    host.view.commands.activate_link("r1", f"toggle:{sources_key('r1')}")
    doc = host.view.rendered_document("r1")
    assert doc is not None and "[1] handbook: handbook.pdf, page 2" in doc.toPlainText()
    bar = find(qtbot, host, "handbook")
    assert bar.count.text() == "1 of 1"
    assert len(bar.highlighter.occurrences(host.view.rendered_document("r1"))) == 1
