"""The sidebar's preview line reads as the chat shows the same Markdown: checked against the
renderer's own parser (markdown-it), whose HTML with its tags taken off is what a person sees."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from threadline.store.convert import preview_of
from threadline.ui.sessions.preview_text import plain_preview

_PARSER = MarkdownIt("commonmark").enable("strikethrough")


def shown(markdown: str) -> str:
    rendered = re.sub(r"<[^>]+>", "", _PARSER.render(markdown))
    return " ".join(html.unescape(rendered).split())


@pytest.mark.parametrize(
    "line",
    [
        "2**10 = 1024",  # a lone marker is text (this used to preview as "210 = 1024")
        "5 * 3 = 15, 2 ** 3",
        "Use **this** now",
        "**bold**text",
        "x = a*b + c*d",
        "*em* and 2*3*4",
        "__init__ and snake_case_name",
        "file_name_here",
        "`2**10` is code",
        "``a`b`` x",
        "# Heading **x**",
        "> a quote",
        "[the link](http://example.com) and more",
        "**_both_**",
        "~~gone~~ and kept",
        "It costs $5 *or* less",
    ],
)
def test_a_preview_line_reads_as_the_chat_shows_it(line: str) -> None:
    assert plain_preview(line) == shown(line)


_WORD = st.from_regex(r"[a-z0-9]{1,6}", fullmatch=True)
_PIECE = st.one_of(
    _WORD,
    _WORD.map(lambda w: f"**{w}**"),
    _WORD.map(lambda w: f"*{w}*"),
    _WORD.map(lambda w: f"_{w}_"),
    _WORD.map(lambda w: f"`{w}`"),
    _WORD.map(lambda w: f"`{w}**2`"),
    _WORD.map(lambda w: f"{w}**2"),  # a power, not emphasis
    _WORD.map(lambda w: f"{w}_{w}"),  # snake_case
    st.sampled_from(["*", "**", "_", "=", "+"]),  # operators between spaces
)


@given(st.lists(_PIECE, min_size=1, max_size=8))
def test_sentences_of_words_emphasis_code_and_operators_read_as_rendered(pieces: list[str]) -> None:
    line = " ".join(pieces)
    if pieces[0] in ("*", "**", "_", "+"):
        line = "so " + line  # a marker opening the line starts a list or a rule: block syntax
    assert plain_preview(line) == shown(line)


def test_a_reply_that_opens_with_code_previews_the_code_not_the_fence() -> None:
    assert preview_of("\n```python\nprint(2**10)\n```\n") == "print(2**10)"
    assert preview_of("~~~\nplain\n~~~") == "plain"
