"""A reply's Sources, as a person meets them: a real engine, a knowledge base on a temp folder,
the loopback replay server as the model, and the window clicked.

The question's answer is on page 3 of a PDF and in a Markdown section; the reply cites [1].
The Sources box under the reply lists the passages sent; a Markdown source opens in the
viewer at its lines, the PDF asks the desktop to open ``file:…#page=3`` (caught by a URL
handler registered for the ``file`` scheme, real Qt API); hovering a citation shows its
passage, clicking it opens it; Pin and Exclude change what the next request carries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu
from tests.support.knowledge_folders import PDF_ANSWER, knowledge_folder
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click, type_and_send, wait_idle

from threadline.core.knowledge import AttachScope
from threadline.core.messages import Message
from threadline.engine.providers import CONTEXT_WINDOWS_SETTING

TIMEOUT = 30000
QUESTION = "What torque does the albatross valve need, and where does the KESTREL proxy listen?"
NETWORK = "The proxy listens on port 3128 for the KESTREL lab."


class DesktopUrls(QObject):
    """What the app asked the desktop to open (``QDesktopServices.setUrlHandler``)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url.toString())


@pytest.fixture
def desktop() -> Any:
    urls = DesktopUrls()
    for scheme in ("file", "http", "https"):
        QDesktopServices.setUrlHandler(scheme, urls, "open")
    yield urls
    for scheme in ("file", "http", "https"):
        QDesktopServices.unsetUrlHandler(scheme)


def filler(folder: Path) -> None:
    """Enough unrelated text that the base no longer fits the context share whole."""
    for i in range(6):
        line = f"Section {{}} of the garden diary {i}: tomatoes, beans and weather."
        paragraphs = [line.format(j) * 4 for j in range(12)]
        (folder / f"diary-{i}.md").write_text("\n\n".join(paragraphs), encoding="utf-8")


def chat_with_sources(harness: Any, tmp_path: Path, answer: str) -> tuple[Any, Message]:
    harness.open()
    engine = harness.engine
    folder = knowledge_folder(tmp_path / "docs")
    filler(folder)
    harness.run(engine.settings.set_setting(CONTEXT_WINDOWS_SETTING, {"replay/gpt-4o-mini": 8000}))
    tab = new_tab_by_click(harness)
    harness.run(engine.knowledge.add("handbook", [folder]))
    harness.run(engine.knowledge.index("handbook"), timeout=60000)
    harness.run(engine.knowledge.attach("handbook", AttachScope.SESSION, tab.session_id))
    harness.server.enqueue(sse_response(openai_text_stream([answer])))
    type_and_send(harness.qtbot, tab, QUESTION)
    wait_idle(harness, tab, TIMEOUT)
    reply = tab.live.conversation.path()[-1]
    assert reply.sources, "the reply keeps the passages sent"
    return tab, reply


def number_of(reply: Message, needle: str) -> int:
    return next(n for n, s in enumerate(reply.sources, start=1) if needle in s.text)


def rect_of(harness: Any, tab: Any, message_id: str, href: str) -> Any:
    view = tab.view
    view.scroll_to_message(message_id, flash=False)
    harness.qtbot.waitUntil(lambda: view.anchor_rect(message_id, href) is not None, timeout=TIMEOUT)
    return view.anchor_rect(message_id, href)


def click(harness: Any, tab: Any, message_id: str, href: str) -> None:
    rect = rect_of(harness, tab, message_id, href)
    QTest.mouseMove(tab.view.viewport(), rect.center())
    harness.qtbot.mouseClick(tab.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def open_box(harness: Any, tab: Any, reply: Message) -> None:
    click(harness, tab, reply.id, f"toggle:{reply.id}:sources")
    rect_of(harness, tab, reply.id, "source:open:1")


def system_sent(harness: Any) -> str:
    body = [r for r in harness.server.requests if r.method == "POST"][-1].body
    first = body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


def test_the_sources_open_where_the_passage_is_and_citations_link_to_them(
    harness: Any, tmp_path: Path, desktop: DesktopUrls
) -> None:
    tab, reply = chat_with_sources(harness, tmp_path, "42 N·m [1], on port 3128 [2]. Not a source: [40].")
    pdf = number_of(reply, PDF_ANSWER)
    network = number_of(reply, NETWORK)
    assert tab.view.anchor_rect(reply.id, "source:open:1") is None, "the box starts closed"
    assert tab.view.anchor_rect(reply.id, "source:cite:40") is None, "a number past the list stays text"

    open_box(harness, tab, reply)
    click(harness, tab, reply.id, f"source:open:{network}")
    harness.qtbot.waitUntil(lambda: tab.message_commands.sources.viewer is not None, timeout=TIMEOUT)
    viewer = tab.message_commands.sources.viewer
    harness.qtbot.waitUntil(viewer.isVisible, timeout=TIMEOUT)
    assert NETWORK in viewer.highlighted_text()
    where = reply.sources[network - 1].locator
    assert viewer.first_line == where.line_start
    assert viewer.text.textCursor().blockNumber() + 1 == where.line_start, "the caret is at the passage"
    viewer.close()

    click(harness, tab, reply.id, f"source:open:{pdf}")
    harness.qtbot.waitUntil(lambda: len(desktop.urls) == 1, timeout=TIMEOUT)
    assert desktop.urls[0].startswith("file:///") and desktop.urls[0].endswith("/manual.pdf#page=3")

    # the citation [n] of the PDF's passage: hovering shows the passage, clicking opens it
    cite = rect_of(harness, tab, reply.id, f"source:cite:{pdf}")
    QTest.mouseMove(tab.view.viewport(), cite.center())
    harness.qtbot.waitUntil(lambda: PDF_ANSWER in tab.view.viewport().toolTip(), timeout=TIMEOUT)
    assert "manual.pdf, page 3" in tab.view.viewport().toolTip()
    harness.qtbot.mouseClick(tab.view.viewport(), Qt.MouseButton.LeftButton, pos=cite.center())
    harness.qtbot.waitUntil(lambda: len(desktop.urls) == 2, timeout=TIMEOUT)
    assert desktop.urls[1] == desktop.urls[0]


def test_pin_and_exclude_change_what_the_next_requests_carry(
    harness: Any, tmp_path: Path, desktop: DesktopUrls
) -> None:
    tab, reply = chat_with_sources(harness, tmp_path, "42 N·m [1].")
    pdf = number_of(reply, PDF_ANSWER)
    network = number_of(reply, NETWORK)
    open_box(harness, tab, reply)

    click(harness, tab, reply.id, f"source:pin:{pdf}")
    harness.qtbot.waitUntil(
        lambda: tab.live.conversation.tree.get(reply.id).sources[pdf - 1].pinned, timeout=TIMEOUT
    )
    harness.qtbot.waitUntil(lambda: tab.view.anchor_rect(reply.id, f"source:unpin:{pdf}") is not None)
    click(harness, tab, reply.id, f"source:exclude:{network}")
    harness.qtbot.waitUntil(lambda: tab.view.anchor_rect(reply.id, f"source:include:{network}") is not None)
    assert "Excluded" in tab.view.rendered_document(reply.id).toPlainText()

    # the same question again: the excluded passage stays out, though it matches
    harness.server.enqueue(sse_response(openai_text_stream(["Again."])))
    type_and_send(harness.qtbot, tab, QUESTION)
    wait_idle(harness, tab, TIMEOUT)
    assert NETWORK not in system_sent(harness)
    assert PDF_ANSWER in system_sent(harness)

    # a question about something else: the pinned page is still sent
    harness.server.enqueue(sse_response(openai_text_stream(["Tomatoes."])))
    type_and_send(harness.qtbot, tab, "Tell me about the tomatoes in the garden diary")
    wait_idle(harness, tab, TIMEOUT)
    assert PDF_ANSWER in system_sent(harness)
    assert desktop.urls == []


def test_the_sources_are_reached_from_the_keyboard(
    harness: Any, tmp_path: Path, desktop: DesktopUrls
) -> None:
    tab, reply = chat_with_sources(harness, tmp_path, "42 N·m [1].")
    pdf = number_of(reply, PDF_ANSWER)
    view = tab.view
    view.setFocus()
    view.set_current_message(reply.id)
    QTest.keyClick(view, Qt.Key.Key_S)
    sources = tab.message_commands.sources
    harness.qtbot.waitUntil(lambda: sources.menu is not None and sources.menu.isVisible(), timeout=TIMEOUT)
    menu = sources.menu
    QTest.keyClick(menu, Qt.Key(Qt.Key.Key_0 + pdf))  # the entry's mnemonic opens its submenu
    harness.qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu), timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not menu, timeout=TIMEOUT)
    sub = QApplication.activePopupWidget()
    assert [a.text() for a in sub.actions()] == ["Open", "Pin", "Exclude"]
    QTest.keyClick(sub, Qt.Key.Key_Return)  # the first entry: Open
    harness.qtbot.waitUntil(lambda: len(desktop.urls) == 1, timeout=TIMEOUT)
    assert desktop.urls[0].endswith("/manual.pdf#page=3")


def test_web_and_resource_sources_of_a_stored_reply_open_in_the_browser_and_the_viewer(
    harness: Any, desktop: DesktopUrls
) -> None:
    from tests.support.chat_trees import Chat, store_chat

    from threadline.core.messages import MessageStatus
    from threadline.core.session import SessionInfo
    from threadline.core.sources import Source, SourceKind, SourceLocator
    from threadline.store.repository import Store

    web = Source(SourceKind.WEB, "example.org", SourceLocator(url="https://example.org/valves"), "Valves…")
    resource = Source(SourceKind.MCP_RESOURCE, "docs", SourceLocator(url="demo://guide/3"), "Step three.")
    prompt = Message.prompt("Valves?", id="q1")
    reply = Message.reply(parent_id="q1", text="See [1] and [2].", status=MessageStatus.COMPLETE, id="r1")
    reply.sources = (web, resource)

    async def fill() -> None:
        harness.data_dir.mkdir(parents=True, exist_ok=True)
        store = await Store.open(Store.sqlite_url(harness.data_dir / "threadline.db"))
        try:
            await store_chat(store, Chat(SessionInfo(id="s1", title="Valves"), [prompt, reply]))
        finally:
            await store.close()

    harness.run(fill())
    harness.open()
    tab = harness.run(harness.window.session_tabs.open("s1", focus=True))
    open_box(harness, tab, reply)
    assert "[1] example.org: https://example.org/valves" in tab.view.rendered_document("r1").toPlainText()
    click(harness, tab, "r1", "source:open:1")
    harness.qtbot.waitUntil(lambda: desktop.urls == ["https://example.org/valves"], timeout=TIMEOUT)
    click(harness, tab, "r1", "source:cite:2")
    harness.qtbot.waitUntil(lambda: tab.message_commands.sources.viewer is not None, timeout=TIMEOUT)
    assert tab.message_commands.sources.viewer.text.toPlainText() == "Step three."
    assert desktop.urls == ["https://example.org/valves"], "a resource's address is not opened outside"
