from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from tests.support.ui_fakes import FakeLive
from tests.support.waiting import WAIT_MS

from threadline.core.messages import (
    Message,
    MessageKind,
    MessageStatus,
    Role,
    TextShapes,
    ToolCall,
    text_shape,
)
from threadline.core.request import ToolSpec
from threadline.engine.events import ActivePathChanged
from threadline.tools.registry import ToolRegistry
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.chat.view.markdown import stable_boundary
from threadline.ui.chat.view.message_html import arguments_summary, fallback_tool_name
from threadline.ui.chat.view.message_labels import speaker
from threadline.ui.chat.view.view_layout import RowLayout, TextMetrics, estimate_heights


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
    live.exchange(
        "code?", "Here:\n\n```python\nprint('hi')\n```\n\n[bad](file:///etc/passwd) [ok](https://example.com)"
    )
    _model, view = make(qtbot, live)
    reply_id = live.conversation.path()[-1].id
    rect = view.anchor_rect(reply_id, "copy-code:0")
    assert rect is not None
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert QGuiApplication.clipboard().text() == "print('hi')\n"
    assert view.anchor_rect(reply_id, "file:///etc/passwd") is None


def test_the_copy_button_of_a_code_block_says_copied_for_a_moment(qtbot: Any) -> None:
    """The confirmation shows where the person clicked, not only in the status bar (issue 28)."""
    live = FakeLive()
    live.exchange("code?", "Here:\n\n```python\nprint('hi')\n```\n")
    _model, view = make(qtbot, live)
    reply_id = live.conversation.path()[-1].id
    doc = view.rendered_document(reply_id)
    assert doc is not None and "Copy\n" in doc.toPlainText() and "Copied" not in doc.toPlainText()
    rect = view.anchor_rect(reply_id, "copy-code:0")
    assert rect is not None
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert QGuiApplication.clipboard().text() == "print('hi')\n"
    assert "Copied" in doc.toPlainText()
    assert view.anchor_rect(reply_id, "copy-code:0") is not None  # still the link: it copies again
    qtbot.waitUntil(lambda: "Copied" not in doc.toPlainText(), timeout=WAIT_MS)
    assert "Copy\n" in doc.toPlainText()


def test_stable_boundary_never_cuts_inside_a_fence() -> None:
    text = "one\n\n```py\na\n\nb\n```\n\ntail"
    b = stable_boundary(text)
    assert text[:b].endswith("```\n\n") and text[b:] == "tail"
    assert stable_boundary("no newline yet") == 0


class _NotebookTool:
    """A registered tool whose policy name differs from what the wire-name fallback would guess."""

    spec = ToolSpec(name="nb__add", description="Add a note")
    policy_name = "notebook/add"

    async def call(self, arguments: dict[str, Any]) -> Any:
        raise AssertionError("not run here")


def test_tool_calls_show_policy_names_and_a_one_line_argument_summary(qtbot: Any) -> None:
    live = FakeLive()
    live.user_says("note it and tell me the time")
    live.begin()
    live.delta("On it.")
    calls = (
        ToolCall("c1", "nb__add", json.dumps({"text": "buy milk", "tags": ["home"]})),
        ToolCall("c2", "time__get_current_time", json.dumps({"timezone": "Europe/Oslo"})),
        ToolCall("c3", "shell", json.dumps({"command": "echo " + "x" * 200})),
    )
    reply = live.finish(tool_calls=calls)
    live.cancel()  # the calls get cancelled results, named like the calls
    _model, view = make(qtbot, live)
    view.set_tool_namer(ToolRegistry([_NotebookTool()]).policy_name)
    assert reply.id in view.visible_message_ids()
    text = view._docs[reply.id].doc.toPlainText()
    assert "Tool call: notebook/add" in text  # the registry's policy name
    assert "Tool call: time/get_current_time" in text  # no longer registered: server/tool
    assert "time__" not in text and "nb__" not in text
    assert 'text: "buy milk", tags: ["home"]' in text  # collapsed: the arguments on one line
    assert 'timezone: "Europe/Oslo"' in text
    assert "{" not in text  # no dangling brace of pretty-printed JSON
    shell_line = next(line for line in text.splitlines() if "Tool call: shell" in line)
    assert shell_line.endswith("…") and len(shell_line) < 140  # long arguments are elided
    results = live.conversation.path()[-1]
    results_text = view._docs[results.id].doc.toPlainText()
    assert "notebook/add" in results_text and "time/get_current_time" in results_text
    # Expanded, the block shows the full pretty-printed arguments.
    rect = view.anchor_rect(reply.id, f"toggle:{reply.id}:c1")
    assert rect is not None
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert reply.id in view.visible_message_ids()
    expanded = view._docs[reply.id].doc.toPlainText()
    assert '"text": "buy milk"' in expanded and "{" in expanded


def test_wire_name_fallback_and_argument_summary() -> None:
    assert fallback_tool_name("git__status") == "git/status"
    assert fallback_tool_name("read_file") == "read_file"
    assert fallback_tool_name("__odd") == "__odd"
    assert arguments_summary('{"city": "Oslo", "days": 3}') == 'city: "Oslo", days: 3'
    assert arguments_summary("{}") == "no arguments"
    assert arguments_summary('{"a": "x\\ny"}') == 'a: "x\\ny"'  # one line
    assert arguments_summary('{"broken') == '{"broken'


def test_failed_stopped_and_interrupted_replies_look_alike(qtbot: Any) -> None:
    live = FakeLive()
    live.exchange("first", "fine")
    live.user_says("second")
    live.begin(model="", provider="")  # like the engine's record of a turn that failed before a reply
    live.fail("replay rejected the API key.")
    failed = live.conversation.path()[-1]
    _model, view = make(qtbot, live)
    assert failed.id in view.visible_message_ids()
    assert failed.status is MessageStatus.FAILED
    assert speaker(failed) == "Assistant"
    assert view._status(failed)[0] == "Failed"  # a short label; the reason is in the body
    assert "replay rejected the API key." in view._docs[failed.id].doc.toPlainText()
    assert view.action_rect(failed.id, "retry") is not None
    assert view.action_rect(failed.id, "regenerate") is None
    with qtbot.waitSignal(view.actionTriggered) as signal:
        click_rect(qtbot, view, view.action_rect(failed.id, "retry"))
    assert signal.args == ["retry", failed.id]

    live.conversation.regenerate(failed.id)
    live.emit(ActivePathChanged(live.session_id, failed.parent_id))
    live.begin()
    live.delta("partial answer")
    live.cancel()
    stopped = live.conversation.path()[-1]
    assert stopped.id in view.visible_message_ids()
    assert view._status(stopped)[0] == "Stopped"
    assert speaker(stopped) == "test-model"
    assert view.action_rect(stopped.id, "continue") is not None
    assert view.action_rect(stopped.id, "regenerate") is not None


def click_rect(qtbot: Any, view: ChatView, rect: Any) -> None:
    assert rect is not None
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_row_layout_keeps_the_anchor_when_rows_change_above_it() -> None:
    rows = RowLayout()
    rows.reset([100] * 10)
    rows.stick = False
    assert rows.anchor_at(450)  # row 4, 50 px into it
    assert (rows.anchor_row, rows.anchor_off) == (4, 50)
    rows.insert(0, [80, 80])  # older messages loaded above
    rows.set_measured(3, 300, 700)  # an estimate above the anchor corrected
    assert (rows.anchor_row, rows.anchor_off) == (6, 50)  # the same message, the same offset
    assert rows.total_height() == 2 * 80 + 9 * 100 + 300
    rows.remove(5, 7)  # the anchored row itself goes away
    assert (rows.anchor_row, rows.anchor_off) == (5, 0)


def test_row_layout_fills_from_the_bottom_and_measures_only_what_shows() -> None:
    rows = RowLayout()
    rows.reset([100] * 1000)
    measured: list[int] = []

    def measure(row: int) -> int:
        measured.append(row)
        rows.set_measured(row, 120, 700)
        return 120

    rows.fill(500, measure)  # sticks to the bottom: the last rows fill 500 px
    assert measured == [999, 998, 997, 996, 995]
    assert (rows.anchor_row, rows.anchor_off) == (995, 100)
    assert rows.scroll_value() == rows.total_height() - 500
    rows.stick = False
    measured.clear()
    rows.anchor_at(0)
    rows.fill(500, measure)
    assert measured == [0, 1, 2, 3, 4]  # from the top: five rows, never the other 995


def test_estimates_grow_with_text_and_tool_calls() -> None:
    metrics = TextMetrics(average_char_width=7, line_height=18, header_height=16)
    short = Message.prompt("hi")
    long_ = Message(id="a", parent_id=None, role=Role.ASSISTANT, kind=MessageKind.RESPONSE, text="x" * 2000)
    shapes = TextShapes()
    shapes.add(*text_shape(short))
    shapes.add(*text_shape(long_))
    shapes.add(None)
    heights = estimate_heights(shapes, 700, metrics)
    assert heights[0] < heights[1]
    assert heights[2] > 0  # an unreadable row still has a height
