"""A reply's Sources box, its citations and where a source opens: pure functions, no widget."""

from __future__ import annotations

import pytest

from threadline.core.messages import Message, MessageKind, MessageStatus, Role
from threadline.core.sources import Source, SourceKind, SourceLocator, passage_key
from threadline.ui.chat.sources.source_opening import Way, opening_of
from threadline.ui.chat.view.message_html import MessageHtmlOptions, message_html
from threadline.ui.chat.view.message_markdown import message_markdown
from threadline.ui.chat.view.source_list import (
    parse_source_href,
    source_tooltip,
    sources_html,
    sources_key,
)
from threadline.ui.common.theme import DARK, LIGHT

PDF = Source(SourceKind.KNOWLEDGE, "handbook", SourceLocator("/docs/manual.pdf", page=3), "Torque: 42 N·m.")
NOTES = Source(
    SourceKind.KNOWLEDGE,
    "handbook",
    SourceLocator("/docs/setup.md", heading="Network", line_start=8, line_end=9),
    "The proxy <b>listens</b> on 3128.",
)


def reply(text: str, *sources: Source) -> Message:
    return Message(
        id="r1",
        parent_id="p1",
        role=Role.ASSISTANT,
        kind=MessageKind.RESPONSE,
        text=text,
        status=MessageStatus.COMPLETE,
        sources=tuple(sources),
    )


def body(
    message: Message, expanded: frozenset[str] = frozenset(), excluded: frozenset[str] = frozenset()
) -> str:
    options = MessageHtmlOptions(highlight=False, expanded=expanded, excluded_sources=excluded)
    return message_html(message, LIGHT, options).html


def test_citations_that_name_a_source_become_links_and_nothing_else_does() -> None:
    text = (
        "Torque [1], proxy [2], none [3].\n\n"
        "Inline `[1]` and [a link [1]](https://example.com).\n\n```\nx = a[1]\n```\n"
    )
    html = body(reply(text, PDF, NOTES))
    assert html.count('href="source:cite:1"') == 1
    assert html.count('href="source:cite:2"') == 1
    assert "source:cite:3" not in html and "none [3]." in html
    assert "<code>[1]</code>" in html
    assert "x = a[1]" in html


def test_a_reply_without_sources_has_no_citation_links_and_no_box() -> None:
    html = body(reply("See [1]."))
    assert "source:" not in html and "Sources" not in html


def test_the_box_is_closed_to_one_line_and_lists_every_source_when_opened() -> None:
    message = reply("Text", PDF, NOTES)
    closed = sources_html(message, LIGHT, expanded=(), excluded=())
    assert "Sources (2)" in closed and "manual.pdf, setup.md" in closed
    assert "source:open:" not in closed and f'href="toggle:{sources_key("r1")}"' in closed
    opened = sources_html(message, DARK, expanded={sources_key("r1")}, excluded=())
    assert "[1] handbook: manual.pdf, page 3" in opened
    assert "[2] handbook: setup.md › Network, lines 8–9" in opened
    for href in ("source:open:1", "source:pin:1", "source:exclude:2"):
        assert f'href="{href}"' in opened


def test_pinned_and_excluded_sources_say_so_and_offer_the_way_back() -> None:
    pinned = Source(PDF.kind, PDF.label, PDF.locator, PDF.text, pinned=True)
    message = reply("Text", pinned, NOTES)
    html = sources_html(message, LIGHT, expanded={sources_key("r1")}, excluded={passage_key(NOTES)})
    assert "Pinned" in html and 'href="source:unpin:1"' in html
    assert "Excluded" in html and 'href="source:include:2"' in html and "line-through" in html
    assert "1 pinned" in sources_html(message, LIGHT, expanded=(), excluded=())


def test_a_passage_is_the_same_whether_pinned_or_not() -> None:
    pinned = Source(PDF.kind, PDF.label, PDF.locator, PDF.text, pinned=True, score=0.5)
    assert passage_key(pinned) == passage_key(PDF) != passage_key(NOTES)


def test_the_tooltip_shows_the_label_and_the_passage_escaped() -> None:
    tip = source_tooltip(NOTES, 2)
    assert "[2] handbook: setup.md › Network, lines 8–9" in tip
    assert "&lt;b&gt;listens&lt;/b&gt;" in tip and "<b>listens" not in tip


@pytest.mark.parametrize(
    ("href", "parsed"),
    [
        ("source:open:2", ("open", 2)),
        ("source:cite:10", ("cite", 10)),
        ("source:run:1", None),
        ("source:open:x", None),
        ("https://example.com", None),
    ],
)
def test_source_links_are_parsed_strictly(href: str, parsed: tuple[str, int] | None) -> None:
    assert parse_source_href(href) == parsed


def test_where_each_kind_of_source_opens() -> None:
    assert opening_of(PDF).way is Way.DESKTOP and opening_of(PDF).page == 3
    assert opening_of(NOTES).way is Way.VIEWER and opening_of(NOTES).target == "/docs/setup.md"
    docx = Source(SourceKind.KNOWLEDGE, "h", SourceLocator("/docs/r.docx", line_start=1), "t")
    assert opening_of(docx).way is Way.DESKTOP and opening_of(docx).page is None
    web = Source(SourceKind.WEB, "web", SourceLocator(url="https://example.com/a"), "t")
    assert opening_of(web).way is Way.BROWSER and opening_of(web).target == "https://example.com/a"
    odd = Source(SourceKind.WEB, "web", SourceLocator(url="javascript:alert(1)"), "t")
    assert opening_of(odd).way is Way.PASSAGE
    resource = Source(SourceKind.MCP_RESOURCE, "srv", SourceLocator(url="demo://r/1"), "t")
    assert opening_of(resource).way is Way.PASSAGE


def test_copy_as_markdown_lists_the_sources_under_the_reply() -> None:
    text = message_markdown(reply("Torque [1].", PDF, NOTES))
    assert text.endswith(
        "*Sources:*\n1. handbook: manual.pdf, page 3\n2. handbook: setup.md › Network, lines 8–9\n"
    )
