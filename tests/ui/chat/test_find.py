"""Find in a chat, driven by keys as a person would: Ctrl+F, typing, Enter, Shift+Enter, Esc."""

from __future__ import annotations

import contextlib
import gc
import json
import weakref
from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QLineEdit, QVBoxLayout, QWidget
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_click, type_and_send, wait_idle
from tests.support.ui_fakes import FakeLive
from tests.support.waiting import WAIT_MS

from threadline.core.find_text import TEXT_PART, Match
from threadline.core.messages import MessageKind, ToolCall
from threadline.engine.events import MessageAdded
from threadline.ui.chat.find.find_bar import FindBar, install_find
from threadline.ui.chat.find.find_order import ViewRows, match_to_show
from threadline.ui.chat.view import math_render
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.common.announce import Announcer

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


class Host(QWidget):
    """A chat view with a line edit standing for the composer, as a tab lays them out."""

    def __init__(self, live: FakeLive) -> None:
        super().__init__()
        self.model = ConversationModel(live, self)
        self.view = ChatView()
        self.view.setModel(self.model)
        self.composer = QLineEdit()
        layout = QVBoxLayout(self)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.composer)
        self.bar = install_find(self, self.view, self.model, focus_back=self.composer.setFocus)


def open_host(qtbot: Any, live: FakeLive) -> Host:
    host = Host(live)
    host.resize(760, 560)
    qtbot.addWidget(host)
    host.show()
    qtbot.waitExposed(host)
    host.activateWindow()  # a tab's keys answer in the active window
    qtbot.waitUntil(host.isActiveWindow, timeout=WAIT_MS)
    host.composer.setFocus()
    return host


def find(qtbot: Any, host: Host, query: str) -> FindBar:
    qtbot.keyClick(host.composer, Qt.Key.Key_F, CTRL)
    bar = host.bar
    assert bar.isVisible() and QApplication.focusWidget() is bar.edit
    qtbot.keyClicks(bar.edit, query)
    qtbot.waitUntil(lambda: bar.count.text() not in ("", "Searching…"), timeout=WAIT_MS)
    return bar


def current_on_screen(host: Host) -> bool:
    """Whether the message of the current match is painted and its match is highlighted as current."""
    bar = host.bar
    match = bar.current_match
    assert match is not None
    message_id = host.model.message_at(match.message_index).id  # type: ignore[union-attr]
    return (
        message_id in host.view.visible_message_ids()
        and bar.highlighter.current is not None
        and (bar.highlighter.current[0] == message_id)
    )


def test_find_counts_steps_scrolls_and_closes(qtbot: Any) -> None:
    live = FakeLive()
    live.exchange("Where is the needle?", "The needle is in the haystack.")
    for i in range(40):
        live.exchange(f"filler question {i}", f"filler answer {i}\n\nwith a second paragraph")
    live.exchange("And now?", "Another needle, and one more Needle.")
    host = open_host(qtbot, live)
    bar = find(qtbot, host, "needle")
    # the view shows the end of the chat: the first match from there is the last reply's first
    assert bar.count.text() == "3 of 4"
    assert current_on_screen(host)
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    assert bar.count.text() == "4 of 4"
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    assert bar.count.text() == "1 of 4"  # wraps around
    # the first exchange is far above: the view scrolled up to it
    first_prompt = host.model.message_at(0)
    assert first_prompt is not None and first_prompt.id in host.view.visible_message_ids()
    assert current_on_screen(host)
    assert not host.view.following
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return, SHIFT)
    assert bar.count.text() == "4 of 4"
    assert current_on_screen(host)
    qtbot.keyClick(bar.edit, Qt.Key.Key_F3, SHIFT)
    assert bar.count.text() == "3 of 4"
    qtbot.keyClick(bar.edit, Qt.Key.Key_F3)
    assert bar.count.text() == "4 of 4"
    # painted highlights: every match in the painted rows, one of them current
    reply = host.model.message_at(host.model.rowCount() - 1)
    assert reply is not None
    doc = host.view.rendered_document(reply.id)
    assert doc is not None and len(host.view.text_highlights(reply.id, doc)) == 2  # type: ignore[misc]
    qtbot.keyClick(bar.edit, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    assert QApplication.focusWidget() is host.composer
    assert host.view.text_highlights is None


def test_no_matches_and_match_case(qtbot: Any) -> None:
    live = FakeLive()
    live.exchange("Say Oslo", "Oslo, oslo, OSLO.")
    host = open_host(qtbot, live)
    bar = find(qtbot, host, "bergen")
    assert bar.count.text() == "No matches"
    bar.edit.clear()
    qtbot.keyClicks(bar.edit, "oslo")
    qtbot.waitUntil(lambda: bar.count.text() == "1 of 4", timeout=WAIT_MS)
    qtbot.mouseClick(bar.case, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bar.count.text() == "1 of 1", timeout=WAIT_MS)


def test_matches_inside_a_collapsed_tool_result_are_found_and_shown(qtbot: Any) -> None:
    live = FakeLive()
    live.user_says("What is the weather?")
    live.begin()
    live.delta("Let me look.")
    reply = live.finish(tool_calls=(ToolCall("c1", "lookup", json.dumps({"city": "Tromsø"})),))
    live.cancel()  # a result for the call, in its own collapsed box
    host = open_host(qtbot, live)
    results = host.model.message_at(2)
    assert results is not None and results.tool_results
    word = results.tool_results[0].text.split()[0]
    bar = find(qtbot, host, "tromsø")
    match = bar.current_match
    assert bar.count.text() == "1 of 1" and match is not None
    assert match.part == f"{reply.id}:c1" and match.part != TEXT_PART
    # the collapsed call box was opened to show the match
    doc = host.view.rendered_document(reply.id)
    assert doc is not None and "Tromsø" in doc.toPlainText()
    assert current_on_screen(host)
    # and a word of the tool's output is found in the result box
    bar.edit.clear()
    qtbot.keyClicks(bar.edit, word)
    qtbot.waitUntil(
        lambda: bar.current_match is not None and bar.current_match.message_index == 2, timeout=WAIT_MS
    )
    result_doc = host.view.rendered_document(results.id)
    assert result_doc is not None and results.tool_results[0].text[:20] in result_doc.toPlainText()


def test_a_match_inside_a_closed_summary_opens_the_card(qtbot: Any) -> None:
    """A compaction summary shows closed, one line of its first words; a word further in it
    is found (the count includes it), and going to it opens the card, as for a tool box, so
    the match is painted and highlighted as current."""
    live = FakeLive()
    first_prompt, _reply = live.exchange("Plan the trip", "Fly to Bergen, then take the train.")
    opening = "The user planned a trip to Norway and asked about the routes between the cities. " * 2
    text = opening + "\n\n- They prefer the **fjord** ferry."
    summary = live.conversation.add_summary(text, first_prompt.id)
    live.emit(MessageAdded(live.session_id, summary))
    live.exchange("And then?", "Then the ferry back.")
    host = open_host(qtbot, live)
    closed = host.view.rendered_document(summary.id)  # closed, as a chat opens
    assert closed is not None and "Show the summary" in closed.toPlainText()
    assert "fjord" not in closed.toPlainText()
    bar = find(qtbot, host, "fjord")
    assert bar.count.text() == "1 of 1"
    match = bar.current_match
    assert match is not None
    assert host.model.message_at(match.message_index).kind is MessageKind.SUMMARY  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: current_on_screen(host), timeout=WAIT_MS)
    doc = host.view.rendered_document(summary.id)
    assert doc is not None and "fjord" in doc.toPlainText() and "Hide the summary" in doc.toPlainText()
    current = bar.highlighter.current
    assert current is not None and current[0] == summary.id
    assert bar.highlighter.occurrences(doc)[current[1]].selectedText() == "fjord"


MARKUP_REPLY = (
    "I like **foo** bar, and [foo docs](https://foo.example/bar?q=example) say *so*.\n\n"
    "Run `foo  bar()` in python, then copy this:\n\n"
    "```python\nprint('foo bar')\n```\n\n"
    "Inline $\\frac{a}{b}$ and a broken $\\frac{c$ formula, then display:\n\n"
    "$$\\sum_{i=1}^{n} i$$\n\n"
    "A table:\n\n| name | value |\n|---|---|\n| foo | bar |\n"
)


def highlighted(host: Host) -> list[str]:
    """The text of every highlighted range in every row's document, in order."""
    found: list[str] = []
    for row in range(host.model.rowCount()):
        message = host.model.message_at(row)
        assert message is not None
        doc = host.view.rendered_document(message.id)
        assert doc is not None, "every row of this short chat is painted"
        found.extend(s.cursor.selectedText() for s in host.view.text_highlights(message.id, doc))  # type: ignore[misc]
    return found


def test_the_count_and_the_highlights_agree_on_markup_links_code_and_math(qtbot: Any) -> None:
    """The count is taken from the text as rendered, so it equals the highlighted ranges:
    "foo bar" split by bold is both counted and highlighted; a link's address, a formula's
    LaTeX (a picture, or source when broken), a code box's language and "Copy", and the
    table's "Open table" link are neither. Stepping lands on the highlight of each match."""
    live = FakeLive()
    live.exchange("Show me markup", MARKUP_REPLY)
    host = open_host(qtbot, live)
    reply = host.model.message_at(1)
    assert reply is not None
    qtbot.waitUntil(lambda: math_render.ready(), timeout=WAIT_MS)

    def formulas_drawn() -> bool:
        doc = host.view.rendered_document(reply.id)
        return doc is not None and doc.toPlainText().count("\ufffc") == 2  # the broken one is source

    qtbot.waitUntil(formulas_drawn, timeout=WAIT_MS)
    expected = {
        "foo bar": 3,  # **foo** bar, `foo  bar()` (one space, as shown), print('foo bar')
        "example": 0,  # only in the link's address
        "frac": 0,  # only in formulas
        "python": 1,  # the prose, not the code box's language
        "copy": 1,  # the prose, not the code box's Copy
        "table": 1,  # "A table:", not "Open table"
        "foo": 5,  # the three above, the link's text and the table cell
    }
    bar = find(qtbot, host, "foo bar")
    for query, count in expected.items():
        bar.edit.selectAll()
        qtbot.keyClicks(bar.edit, query)
        label = "No matches" if count == 0 else f" of {count}"
        qtbot.waitUntil(
            lambda query=query, label=label: (
                bar.highlighter.query == query and bar.count.text().endswith(label)
            ),
            timeout=WAIT_MS,
        )
        assert bar.match_count == count, query
        shown = highlighted(host)
        assert len(shown) == count, (query, shown)
        assert all(text.lower() == query for text in shown), (query, shown)
    for _step in range(expected["foo"]):
        qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
        current = bar.highlighter.current
        assert current is not None and current[0] == reply.id
        doc = host.view.rendered_document(reply.id)
        assert doc is not None
        ordinal = int(bar.count.text().split(" of ")[0]) - 1
        occurrences = bar.highlighter.occurrences(doc)
        assert current[1] == ordinal  # the n-th counted is the n-th highlighted
        assert occurrences[current[1]].selectedText().lower() == "foo"


def test_a_long_markdown_chat_is_made_searchable_between_frames(qtbot: Any) -> None:
    """Parsing a long chat's Markdown takes a while: the bar says "Searching…", the GUI keeps
    answering (the work is cut into slices), and the count comes when every text is ready."""
    live = FakeLive()
    for i in range(400):
        live.exchange(f"question {i}", f"Answer **{i}** is [here](https://x.example/{i}) with `code {i}`.")
    host = open_host(qtbot, live)
    bar = host.bar
    slices: list[bool] = []
    timer = QTimer()
    timer.timeout.connect(lambda: slices.append(bar.preparing))
    timer.start(0)  # runs while the bar prepares only if the event loop is not blocked
    qtbot.keyClick(host.composer, Qt.Key.Key_F, CTRL)
    assert bar.preparing  # the 400 replies were never parsed: that is left for between frames
    qtbot.keyClicks(bar.edit, "answer 39")
    if bar.preparing:  # Enter searches at once: still preparing, the bar says so
        qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
        assert bar.count.text() == "Searching…" or bar.count.text().endswith(" · searching…")
    qtbot.waitUntil(lambda: bar.count.text().endswith(" of 11"), timeout=WAIT_MS)  # 39 and 390-399
    timer.stop()
    assert not bar.preparing
    assert True in slices


@contextlib.contextmanager
def announcements_while_searching(bar: FindBar) -> Iterator[list[tuple[str, bool, Match | None]]]:
    """What the bar announces meanwhile, each with whether it was still making texts
    searchable and the match it was on then."""
    heard: list[tuple[str, bool, Match | None]] = []

    def hear(_widget: object, text: str, _assertive: bool) -> None:
        heard.append((text, bar.preparing, bar.current_match))

    Announcer.of().announced.connect(hear)
    try:
        yield heard
    finally:
        Announcer.of().announced.disconnect(hear)


def first_shown_while_searching(heard: list[tuple[str, bool, Match | None]]) -> tuple[str, Match]:
    """The first announcement made with a match shown while the chat was still searched."""
    early = [(text, match) for text, preparing, match in heard if preparing and match is not None]
    assert early, f"no match was shown while the chat was searched: {heard}"
    return early[0]


def test_the_first_match_below_the_view_shows_while_the_chat_is_still_searched(qtbot: Any) -> None:
    """On a long Markdown chat scrolled to its middle, a word just below the view is shown as
    soon as the texts there are made — "1 of 2+ · searching…", highlighted, while the rest of
    the chat is still being made searchable; Enter / Shift+Enter step through what is found
    so far without wrapping to what is not known yet; and when all is searched the count is
    exact and the bar is still on the same match (now the 15th: 14 lie above the view)."""
    live = FakeLive()
    for i in range(1500):
        kiwi = " A kiwi here, a kiwi there." if i % 100 == 3 else ""  # exchanges 3, 103, …, 1403: 30 matches
        points = "".join(f"- point {k} about *{i}* and `x{k}`\n" for k in range(8))
        table = f"| a | b |\n|---|---|\n| {i} | **{i}** |\n"
        reply = f"Answer **{i}** is [here](https://x.example/{i}).{kiwi}\n\n{points}\n{table}\n```\nprint({i})\n```"
        live.exchange(f"question {i}", reply)  # ~0.5 ms to parse: ~0.7 s for the chat
    host = open_host(qtbot, live)
    bar = host.bar
    middle = host.model.message_at(1400)  # the prompt of exchange 700
    assert middle is not None and host.view.scroll_to_message(middle.id, flash=False)
    qtbot.waitUntil(lambda: host.view.visible_message_ids()[:1] == [middle.id], timeout=WAIT_MS)
    with announcements_while_searching(bar) as heard:
        qtbot.keyClick(host.composer, Qt.Key.Key_F, CTRL)
        assert bar.preparing  # 1,500 replies never parsed
        qtbot.keyClicks(bar.edit, "kiwi")
        qtbot.waitUntil(lambda: bar.current_match is not None, timeout=WAIT_MS)
        first = bar.current_match
        if bar.preparing:  # stepping through the matches found so far (both in exchange 703)
            qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
            assert bar.count.text().startswith("2 of ") and bar.count.text().endswith("+ · searching…")
            second = bar.current_match
            assert second is not None and first is not None
            assert second.message_index == first.message_index and second.offset > first.offset
            assert current_on_screen(host)
            for _step in range(2):  # back to the first, and no further: what is above is not known yet
                qtbot.keyClick(bar.edit, Qt.Key.Key_Return, SHIFT)
                assert bar.count.text().startswith("1 of ") and bar.current_match == first
        qtbot.waitUntil(lambda: bar.count.text() == "15 of 30", timeout=WAIT_MS)
    text, shown = first_shown_while_searching(heard)
    assert text.startswith("1 of ") and text.endswith("+ · searching…"), text
    assert shown == first and shown.message_index == 1407 and shown.part == TEXT_PART  # exchange 703
    assert bar.current_match == first  # the same message and offset, now counted exactly
    assert not bar.preparing
    assert current_on_screen(host)


def test_a_word_just_above_the_view_shows_first_while_the_chat_is_still_searched(qtbot: Any) -> None:
    """A chat opens at its end, so what the user just scrolled past is above the view: on a
    long Markdown chat, the rows on screen and about two screens above are made searchable
    first. A word in a reply just above the view (and in the first reply, far above) is shown
    while the rest is still made — the nearest one above, as nothing is on screen — with an
    honest count ("1 of 1+ · searching…"), highlighted on screen; when all is searched the
    count is exact and the bar is still on that match, now "2 of 2"."""
    live = FakeLive()
    count = 1500
    for i in range(count):
        kiwi = " A kiwi here." if i in (0, count - 4) else ""  # the first reply and the 4th from the end
        points = "".join(f"- point {k} about *{i}* and `x{k}`\n" for k in range(8))
        table = f"| a | b |\n|---|---|\n| {i} | **{i}** |\n"
        reply = f"Reply **{i}** is [there](https://y.example/{i}).{kiwi}\n\n{points}\n{table}\n```\nprint({i})\n```"
        live.exchange(f"question {i}", reply)  # not parsed by another test (the parsed texts are cached)
    host = open_host(qtbot, live)
    bar = host.bar
    near_reply = host.model.message_at(2 * (count - 4) + 1)
    assert near_reply is not None and "kiwi" in near_reply.text
    qtbot.waitUntil(lambda: bool(host.view.visible_message_ids()), timeout=WAIT_MS)
    assert near_reply.id not in host.view.visible_message_ids()  # just above the view
    with announcements_while_searching(bar) as heard:
        qtbot.keyClick(host.composer, Qt.Key.Key_F, CTRL)
        assert bar.preparing  # 1,500 replies never parsed
        qtbot.keyClicks(bar.edit, "kiwi")
        qtbot.waitUntil(lambda: bar.current_match is not None, timeout=WAIT_MS)
        first = bar.current_match
        qtbot.waitUntil(lambda: not bar.preparing and "searching" not in bar.count.text(), timeout=WAIT_MS)
    assert bar.count.text() == "2 of 2"
    text, shown = first_shown_while_searching(heard)
    assert text == "1 of 1+ · searching…", text
    assert shown == first and first is not None
    assert first.message_index == 2 * (count - 4) + 1 and first.part == TEXT_PART  # the nearest, not the top
    assert bar.current_match == first  # the same match, now counted exactly
    assert not bar.preparing
    assert current_on_screen(host)
    # every text is made now: a new find from the chat's end picks the same match at once
    qtbot.keyClick(bar.edit, Qt.Key.Key_Escape)
    host.view.scroll_to_bottom()  # back at the chat's end, as it opened
    qtbot.waitUntil(lambda: near_reply.id not in host.view.visible_message_ids(), timeout=WAIT_MS)
    qtbot.keyClick(host.composer, Qt.Key.Key_F, CTRL)
    assert not bar.preparing
    qtbot.waitUntil(lambda: bar.count.text() == "2 of 2", timeout=WAIT_MS)
    assert bar.current_match == first


def test_which_match_is_shown_first_and_when_it_is_known() -> None:
    """On screen from the top first; else the nearest in the two screens above; else the
    first below; else the nearest above — each decided only once the rows it depends on are
    searched (the run ``low`` to ``high`` of 100 rows), so a chat being made searchable shows
    the match a made one would."""
    view = ViewRows.around(60, 63, 100)
    assert (view.near_top, view.order(100)[:5]) == (60 - 16, [60, 61, 62, 59, 58])

    def at(*rows: int) -> list[Match]:
        return [Match(r, TEXT_PART, 0, 4) for r in rows]

    assert match_to_show(at(50, 61, 62), view, 60, 62, 100) == 1  # on screen: the rest may wait
    assert match_to_show(at(10, 50, 55), view, 50, 63, 100) is None  # two screens above not all made
    assert match_to_show(at(50, 55), view, 44, 63, 100) == 1  # the nearest above, not the first
    assert match_to_show(at(50, 70, 80), view, 44, 81, 100) == 0  # near above wins over below
    assert match_to_show(at(70, 80), view, 44, 81, 100) == 0  # else the first below
    assert match_to_show(at(10), view, 30, 90, 100) is None  # rows below still to be made
    assert match_to_show(at(20), view, 15, 100, 100) == 0  # else the nearest above, at once
    assert match_to_show(at(10, 20), view, 0, 100, 100) == 1  # a made chat: the same one
    assert match_to_show([], view, 0, 100, 100) is None


def test_streaming_text_updates_the_count(qtbot: Any) -> None:
    live = FakeLive()
    live.exchange("first", "a kiwi")
    host = open_host(qtbot, live)
    bar = find(qtbot, host, "kiwi")
    assert bar.count.text() == "1 of 1"
    live.user_says("more")
    live.begin()
    live.delta("kiwi and ")
    host.model.flush()
    live.delta("another kiwi")
    host.model.flush()
    qtbot.waitUntil(lambda: bar.count.text() == "1 of 3", timeout=WAIT_MS)


def test_ctrl_f_in_a_tab_of_the_window(harness: Any) -> None:
    text = "Paris is the capital of France. Paris has the Louvre."
    harness.server.enqueue(sse_response(openai_text_stream(split_text(text, 4))))
    harness.open()
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, "Tell me about Paris")
    wait_idle(harness, tab)
    qtbot = harness.qtbot
    assert tab.findChild(FindBar) is None  # built by the first Ctrl+F, not by every open
    tab.composer.focus_input()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_F, CTRL)
    bar = tab.find_bar
    assert tab.findChild(FindBar) is bar
    assert bar.isVisible() and QApplication.focusWidget() is bar.edit
    # Tab goes from the bar's last button on to the conversation menu, as when every tab built it.
    step = bar.close_button.nextInFocusChain()
    while not (step.isVisible() and step.focusPolicy() & Qt.FocusPolicy.TabFocus):
        step = step.nextInFocusChain()
    assert step is tab.controls.menu_button
    qtbot.keyClicks(bar.edit, "paris")
    qtbot.waitUntil(lambda: bar.count.text().endswith("of 3"), timeout=WAIT_MS)
    qtbot.keyClick(bar.edit, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    qtbot.waitUntil(lambda: tab.composer.isAncestorOf(QApplication.focusWidget()), timeout=WAIT_MS)


def test_what_find_made_of_a_chat_is_kept_by_its_bar_and_goes_with_it(qtbot: Any) -> None:
    """The shown texts a find makes (up to one per message) belong to that chat's bar: another
    chat's bar does not hold them, and they are freed with the bar, where a process-wide cache
    kept the texts of every chat ever searched."""
    live = FakeLive()
    live.exchange("Tell me about Rome", "Rome has the **Colosseum**.")
    host = open_host(qtbot, live)
    other = Host(FakeLive())
    qtbot.addWidget(other)
    bar = find(qtbot, host, "colosseum")
    assert bar.count.text() == "1 of 1"
    assert len(bar.shown_texts) == 1  # the reply's Markdown, made once
    assert len(other.bar.shown_texts) == 0
    made = weakref.ref(bar.shown_texts)
    del bar
    host.deleteLater()
    del host

    def freed() -> bool:
        gc.collect()
        return made() is None

    qtbot.waitUntil(freed, timeout=WAIT_MS)
