"""Message-to-HTML without a widget: what each kind of message shows, and that untrusted
model and tool output can never make a document load anything, run anything or link
anywhere but http, https and mailto."""

from __future__ import annotations

import json
import re

import pytest

from threadline.core.messages import (
    CANCELLED_RESULT_TEXT,
    NOT_ASKED_RESULT_TEXT,
    ContextFile,
    ImageBlock,
    Message,
    MessageKind,
    MessageStatus,
    RequestMetadata,
    Role,
    ToolCall,
    ToolResult,
)
from threadline.ui.chat.view.markdown import prepare_highlighting
from threadline.ui.chat.view.message_html import (
    IMAGE_SCHEME,
    MessageHtml,
    MessageHtmlOptions,
    message_html,
    tool_box_key,
)
from threadline.ui.common.theme import DARK, LIGHT

HOSTILE = (
    '<script>alert("x")</script> <img src="https://evil.example/pixel.png"> '
    '<a href="javascript:alert(1)">raw link</a> <style>p{}</style> '
    "[md js](javascript:alert(2)) [md file](file:///etc/passwd) [md data](data:text/html,hi) "
    "![md image](https://evil.example/cat.png) ![local](/etc/passwd)"
)


def reply(
    text: str = "",
    status: MessageStatus = MessageStatus.COMPLETE,
    *,
    tool_calls: tuple[ToolCall, ...] = (),
    metadata: RequestMetadata | None = None,
) -> Message:
    return Message(
        id="r1",
        parent_id="p1",
        role=Role.ASSISTANT,
        kind=MessageKind.TOOL_CALLS if tool_calls else MessageKind.RESPONSE,
        text=text,
        status=status,
        tool_calls=tool_calls,
        metadata=metadata,
    )


def results(*items: ToolResult, text: str = "") -> Message:
    return Message(
        id="t1", parent_id="r1", role=Role.USER, kind=MessageKind.TOOL_RESULTS, text=text, tool_results=items
    )


def html_of(message: Message, options: MessageHtmlOptions | None = None) -> MessageHtml:
    return message_html(message, LIGHT, options or MessageHtmlOptions())


def assert_safe(html: str) -> None:
    """Nothing that loads, runs or links outside the allowed schemes."""
    lowered = html.lower()
    for tag in ("<script", "<style", "<iframe", "<object", "<link", "<meta"):
        assert tag not in lowered
    for src in re.findall(r'src="([^"]*)"', html):
        assert src.startswith(IMAGE_SCHEME + ":"), src
    for href in re.findall(r'href="([^"]*)"', html):
        assert href.split(":", 1)[0] in {"http", "https", "mailto", "copy-code", "toggle", IMAGE_SCHEME}, href


# -- roles ---------------------------------------------------------------------------------


def test_prompt_is_verbatim_text_not_markdown() -> None:
    out = html_of(Message.prompt("**not bold**\nsecond line <b>", id="p1"))
    assert "**not bold**" in out.html and "<strong>" not in out.html
    assert "<br/>second line &lt;b&gt;" in out.html  # line breaks kept, HTML escaped
    assert out.code_blocks == [] and out.images == []


def test_prompt_lists_attached_files_and_shows_decoded_images_by_a_local_url() -> None:
    prompt = Message.prompt(
        "see these",
        id="p1",
        context=(ContextFile("notes<1>.txt", "x" * 1234),),
        images=(ImageBlock("image/png", "AAAA", "cat.png"), ImageBlock("image/png", "broken", "")),
    )
    out = html_of(prompt, MessageHtmlOptions(image_sizes={0: (120, 80)}))
    assert "Attached: notes&lt;1&gt;.txt · ≈309 tokens" in out.html
    assert out.images == [(f"{IMAGE_SCHEME}:p1:0", 0)]
    assert f'<img src="{IMAGE_SCHEME}:p1:0" width="120" height="80"/>' in out.html
    assert "Image: cat.png" in out.html
    assert "Image: image/png" in out.html  # the one that did not decode: named, not shown
    assert out.html.count("<img") == 1
    assert_safe(out.html)


def test_reply_is_markdown_with_its_code_blocks_listed_for_copy() -> None:
    out = html_of(reply("Some **bold** text.\n\n```python\nprint('hi')\n```\n\n```\nplain\n```\n"))
    assert "<strong>bold</strong>" in out.html
    assert out.code_blocks == ["print('hi')\n", "plain\n"]
    assert 'href="copy-code:0"' in out.html and 'href="copy-code:1"' in out.html
    assert ">python<" in out.html  # the language labels the box
    assert_safe(out.html)


def test_code_is_highlighted_only_when_asked() -> None:
    text = "```python\nx = 1\n```\n"
    prepare_highlighting({"python"}, LIGHT.pygments_style)  # the lexer is built: no deferral
    plain = html_of(reply(text), MessageHtmlOptions(highlight=False))
    assert f'<pre style="color:{LIGHT.text};">x = 1</pre>' in plain.html
    coloured = html_of(reply(text)).html
    assert '<span style="color: #666">=</span>' in coloured  # Pygments' inline colours
    assert coloured != plain.html


def test_a_summary_renders_its_markdown() -> None:
    summary = Message(
        id="s1",
        parent_id=None,
        role=Role.ASSISTANT,
        kind=MessageKind.SUMMARY,
        text="- point one\n- point two",
    )
    closed = html_of(summary)  # one line until opened: its first words and the way to open it
    assert "<li>" not in closed.html and "Show the summary" in closed.html and "point one" in closed.html
    out = html_of(summary, MessageHtmlOptions(expanded=frozenset({"s1:summary"})))
    assert "<li>point one</li>" in out.html and "Hide the summary" in out.html


def test_theme_colours_reach_the_html() -> None:
    text = "```\ncode\n```\n"
    assert LIGHT.code_bg in html_of(reply(text)).html
    assert DARK.code_bg in message_html(reply(text), DARK, MessageHtmlOptions()).html


# -- statuses ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        (MessageStatus.STREAMING, "Thinking…"),
        (MessageStatus.CANCELLED, "Stopped before any text arrived."),
        (MessageStatus.INTERRUPTED, "Stopped before any text arrived."),
        (MessageStatus.COMPLETE, "No text was received."),
        (MessageStatus.FAILED, "The reply failed before any text arrived."),
    ],
)
def test_a_reply_without_text_says_why(status: MessageStatus, shown: str) -> None:
    assert shown in html_of(reply("", status)).html


def test_a_failed_reply_shows_its_reason_escaped_after_its_partial_text() -> None:
    failed = reply("partial", MessageStatus.FAILED, metadata=RequestMetadata(error="Rejected <key> & more"))
    out = html_of(failed).html
    assert out.index("partial") < out.index("Rejected &lt;key&gt; &amp; more")


def test_a_stopped_reply_with_text_shows_just_its_text() -> None:
    out = html_of(reply("half an answer", MessageStatus.CANCELLED)).html
    assert "half an answer" in out and "Stopped" not in out


# -- tool calls and results ----------------------------------------------------------------


def test_tool_call_is_collapsed_to_a_one_line_summary_and_opens_to_pretty_json() -> None:
    call = ToolCall("c1", "nb__add", json.dumps({"text": "buy <milk>", "tags": ["home"]}))
    message = reply("On it.", tool_calls=(call,))
    closed = html_of(message, MessageHtmlOptions(tool_namer=lambda name: "notebook/add")).html
    assert "Tool call: notebook/add" in closed
    assert f'href="toggle:{tool_box_key("r1", "c1")}"' in closed
    assert "▸" in closed and "<pre" not in closed
    assert "text: &quot;buy &lt;milk&gt;&quot;, tags: [&quot;home&quot;]" in closed
    opened = html_of(message, MessageHtmlOptions(expanded=frozenset({"r1:c1"}))).html
    assert "▾" in opened and "<pre" in opened
    assert "&quot;text&quot;: &quot;buy &lt;milk&gt;&quot;" in opened  # pretty JSON, escaped
    assert "Tool call: nb/add" in opened  # no namer: the MCP wire name read as server/tool
    assert_safe(opened)


def test_long_arguments_are_elided_when_closed_and_truncated_when_open() -> None:
    call = ToolCall("c1", "shell", json.dumps({"command": "echo " + "x" * 30_000}))
    message = reply("", tool_calls=(call,))
    closed = html_of(message).html
    assert "…" in closed and "x" * 200 not in closed
    opened = html_of(message, MessageHtmlOptions(expanded=frozenset({"r1:c1"}))).html
    assert "… (truncated)" in opened and "x" * 30_000 not in opened


@pytest.mark.expected_log_errors
def test_a_failing_tool_namer_does_not_stop_the_message_rendering() -> None:
    def broken(name: str) -> str:
        raise RuntimeError("registry gone")

    call = ToolCall("c1", "time__now", "{}")
    out = html_of(reply("", tool_calls=(call,)), MessageHtmlOptions(tool_namer=broken)).html
    assert "Tool call: time/now" in out and "no arguments" in out


def test_tool_results_are_titled_by_outcome_and_their_output_escaped() -> None:
    message = results(
        ToolResult("a", "<script>alert(1)</script> done", tool_name="read_file"),
        ToolResult("b", "disk full", is_error=True, tool_name="write_file"),
        ToolResult("c", CANCELLED_RESULT_TEXT + " Reason: not now", is_error=True, tool_name="shell"),
        ToolResult("d", "", tool_name=""),
        ToolResult("e", NOT_ASKED_RESULT_TEXT, is_error=True, tool_name="write_note"),
        text="Some calls were refused.",
    )
    out = html_of(message).html
    assert "Result of read_file" in out
    assert "Error from write_file" in out
    assert "Not run: shell" in out  # refused or stopped: said quietly, not as an error
    assert "Not run: write_note" in out  # nobody could approve it (``ask`` without --yes)
    assert "Result of tool" in out  # a result without a name still shows
    assert "&lt;script&gt;alert(1)&lt;/script&gt; done" in out
    assert out.count(f"color:{LIGHT.error_text}") == 1  # only the real error is in the error colour
    assert "Some calls were refused." in out
    assert_safe(out)


# -- untrusted output ----------------------------------------------------------------------


def test_hostile_model_output_loads_nothing_runs_nothing_and_links_only_safe_schemes() -> None:
    text = (
        HOSTILE
        + "\n\n[fine](https://example.com/a?b=1&c=2) [mail](mailto:a@example.com) [plain](http://x.org)"
    )
    out = html_of(reply(text)).html
    assert_safe(out)
    assert "&lt;script&gt;" in out  # shown as text, not dropped silently
    assert "[image: md image]" in out and "[image: local]" in out
    assert 'href="https://example.com/a?b=1&amp;c=2"' in out
    assert 'href="mailto:a@example.com"' in out and 'href="http://x.org"' in out
    for refused in ("javascript:", "file:", "data:"):
        assert f'href="{refused}' not in out


def test_hostile_text_in_every_other_field_is_escaped() -> None:
    prompt = Message.prompt(
        HOSTILE,
        id="p1",
        context=(ContextFile('<img src="http://e/x">', "t"),),
        images=(ImageBlock("a", "b", "<b>"),),
    )
    call = ToolCall("c<1>", '<img src="http://e/y">', '{"a": "<script>"}')
    message = reply("", MessageStatus.FAILED, tool_calls=(call,), metadata=RequestMetadata(error="<script>x"))
    for out in (
        html_of(prompt).html,
        html_of(message, MessageHtmlOptions(expanded=frozenset({"r1:c<1>"}))).html,
        html_of(results(ToolResult("c", HOSTILE, tool_name="<script>"))).html,
        html_of(results(ToolResult("c", HOSTILE)), MessageHtmlOptions(expanded=frozenset({"t1:c"}))).html,
    ):
        assert_safe(out)


def test_a_tool_call_a_crash_cut_short_is_said_quietly_not_as_the_tools_error() -> None:
    from threadline.core.messages import INTERRUPTED_RESULT_TEXT, Message, ToolResult

    answer = Message.tool_results_message(
        (ToolResult("c1", INTERRUPTED_RESULT_TEXT, is_error=True, tool_name="shell"),), parent_id="p"
    )
    html = message_html(answer, LIGHT, MessageHtmlOptions()).html
    assert "Interrupted: shell" in html and "Error from" not in html


def test_a_sent_document_is_described_as_its_chip_described_it() -> None:
    from threadline.ui.chat.composer.attachment_tray import ChipState, Entry, chip_text

    report = ContextFile("report.pdf", "y" * 17_200, document_type="pdf", page_count=12)
    chip = chip_text(Entry("report.pdf", ChipState.READY, item=report))
    sent = html_of(Message.prompt("summarise", id="p2", context=(report,)), MessageHtmlOptions())
    assert chip == "report.pdf · 12 pages · ≈4,300 tokens"
    assert f"Attached: {chip}" in sent.html
