from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from ui_fakes import FakeLive

from threadline.ui.chat_view import ChatView
from threadline.ui.conversation_model import ConversationModel
from threadline.ui.markdown import stable_boundary


def make(qtbot: Any, live: FakeLive) -> tuple[ConversationModel, ChatView]:
    model = ConversationModel(live)
    view = ChatView()
    view.setModel(model)
    view.resize(700, 500)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    return model, view


def test_streaming_reply_renders_incrementally_and_follows_the_bottom(qtbot: Any) -> None:
    live = FakeLive()
    for i in range(20):
        live.exchange(f"question {i}", f"answer {i}\n\nwith two paragraphs")
    model, view = make(qtbot, live)
    view.viewport().repaint()
    assert view.following
    live.user_says("stream please")
    reply = live.begin()
    for i in range(60):
        live.delta(f"word{i} " + ("\n\n" if i % 10 == 9 else ""))
        model.flush()
        view.viewport().repaint()
    assert reply.id in view.visible_message_ids()  # followed the stream
    doc = view._docs[reply.id].doc
    assert "word59" in doc.toPlainText() and "word0" in doc.toPlainText()
    assert view._docs[reply.id].stable_len > 0  # finished paragraphs were not re-rendered
    live.finish()
    view.viewport().repaint()
    assert view._docs[reply.id].doc.toPlainText().count("word") == 60


def test_scrolled_up_view_does_not_follow(qtbot: Any) -> None:
    live = FakeLive()
    for i in range(30):
        live.exchange(f"q{i}", f"a{i}\n\nmore text here")
    model, view = make(qtbot, live)
    assert view.visible_message_ids()  # laid out at the bottom
    assert view.verticalScrollBar().value() > 0
    view.verticalScrollBar().setValue(0)
    first_visible = view.visible_message_ids()[0]
    live.user_says("new")
    live.begin()
    for _ in range(10):
        live.delta("x ")
    model.flush()
    assert view.visible_message_ids()[0] == first_visible
    assert not view.following


def test_copy_code_button_and_unsafe_links(qtbot: Any) -> None:
    live = FakeLive()
    live.exchange("code?", "Here:\n\n```python\nprint('hi')\n```\n\n[bad](file:///etc/passwd) [ok](https://example.com)")
    _model, view = make(qtbot, live)
    reply_id = live.conversation.path()[-1].id
    rect = view.anchor_rect(reply_id, "copy-code:0")
    assert rect is not None
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert QGuiApplication.clipboard().text() == "print('hi')\n"
    assert view.anchor_rect(reply_id, "file:///etc/passwd") is None


def test_stable_boundary_never_cuts_inside_a_fence() -> None:
    text = "one\n\n```py\na\n\nb\n```\n\ntail"
    b = stable_boundary(text)
    assert text[:b].endswith("```\n\n") and text[b:] == "tail"
    assert stable_boundary("no newline yet") == 0
