"""One message to the HTML its chat document is built from: a pure function.

Everything a message shows in its body is decided here: a prompt's verbatim text with its
attachments, a reply's Markdown (or "Thinking…", or why it has no text), a failed reply's
reason, and the collapsible boxes of tool calls and tool results. It takes plain values —
the message, the theme's colour strings and width-independent options — and returns a
string, so it is tested without a widget, and the chat view's document cache is the only
place that turns the string into a QTextDocument.

Model output and tool output are untrusted: every piece of them is HTML-escaped or goes
through the Markdown renderer, which emits no raw HTML, no ``<img>`` and links only for
http, https and mailto. The only images are a prompt's own attachments and the images a
tool returned, each referenced by an ``attached-image:`` URL that the document cache
registers as a resource (nothing is loaded from anywhere) and wrapped in a link of the
same URL, which the view opens full size.
"""

from __future__ import annotations

import html
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from threadline.core.messages import (
    INTERRUPTED_RESULT_TEXT,
    UNANSWERED_RESULT_TEXT,
    ImageBlock,
    Message,
    MessageKind,
    MessageStatus,
    ToolResult,
    never_ran,
    stopped_after,
)
from threadline.ui.chat.view.context_marks import summary_html, summary_key
from threadline.ui.chat.view.markdown import (
    UNSEARCHED,
    Citations,
    FormulaHtml,
    plain_text_html,
    render_markdown,
)
from threadline.ui.chat.view.source_list import citation_html, sources_html
from threadline.ui.chat.view.thinking_block import thinking_html
from threadline.ui.common.theme import ThemeColors

log = logging.getLogger("threadline.ui.chat.view.message_html")

IMAGE_SCHEME = "attached-image"
"""URL scheme of a message's own images (``shown_images``), added to its document as resources."""

RESOURCE_SCHEME = "mcp-resource"
"""URL scheme of a tool result's resource actions: ``mcp-resource:<open|attach>:<index>:<call id>``
(the view hands the whole URL to the tab as the action; ``ui/chat/mcp/result_resources``)."""

TOGGLE_SCHEME = "toggle"
"""URL scheme of a tool box's header: ``toggle:<message id>:<call id>`` opens or closes it."""

TOOL_TEXT_LIMIT = 20_000
"""Characters of a tool's arguments or output shown when its box is open."""

TOOL_SUMMARY_CHARS = 90
"""Characters of the one-line summary of a closed tool box."""

WIRE_SEPARATOR = "__"
"""How a provider-safe tool name joins an MCP server and its tool (``time__get_current_time``)."""

ToolNamer = Callable[[str], str]
"""Maps a stored (wire) tool name to the name the user knows (``time/get_current_time``)."""


@dataclass(frozen=True, slots=True)
class MessageHtmlOptions:
    """What, besides the message and the colours, changes a message's HTML (never the width)."""

    highlight: bool = True
    """Colour code blocks (off while a reply streams: its text is still changing)."""
    expanded: frozenset[str] = frozenset()
    """Keys (``<message id>:<call id>``) of the tool boxes the user opened."""
    tool_namer: ToolNamer | None = None
    image_sizes: Mapping[int, tuple[int, int]] = field(default_factory=dict)
    """Width and height of each of a prompt's images that decoded, by its index; an image
    missing here did not decode and is shown by its name only."""
    math: FormulaHtml | None = None
    """Turns a reply's LaTeX formulas into images (None: they show as their source)."""
    excluded_sources: frozenset[str] = frozenset()
    """``passage_key`` of the passages the user excluded from this chat (``source_list``)."""


@dataclass(slots=True)
class MessageHtml:
    html: str
    code_blocks: list[str] = field(default_factory=list)
    """Raw text of each code block, indexed by the N of its ``copy-code:N`` link."""
    unhighlighted: set[str] = field(default_factory=set)
    """Languages left plain because their lexer was not built yet."""
    images: list[tuple[str, int]] = field(default_factory=list)
    """(URL in the HTML, index into ``message.images``) of every image the HTML shows."""


def image_url(message_id: str, index: int) -> str:
    return f"{IMAGE_SCHEME}:{message_id}:{index}"


def tool_box_key(message_id: str, call_id: str) -> str:
    return f"{message_id}:{call_id}"


def message_html(message: Message, colors: ThemeColors, options: MessageHtmlOptions) -> MessageHtml:
    """The body of ``message`` as the HTML subset QTextDocument renders."""
    if message.kind is MessageKind.PROMPT:
        return _prompt_html(message, colors, options)
    if message.kind is MessageKind.MARKER:
        return MessageHtml("")  # the row painter draws a marker as a labelled divider
    if message.kind is MessageKind.SUMMARY:
        return _summary_html(message, colors, options)
    if message.kind in (MessageKind.TOOL_RESULTS, MessageKind.CANCELLED_TOOL_USES):
        return _tool_results_html(message, colors, options)
    return _reply_html(message, colors, options)


def _prompt_html(message: Message, c: ThemeColors, options: MessageHtmlOptions) -> MessageHtml:
    parts = [plain_text_html(message.text, c)]
    images: list[tuple[str, int]] = []
    if message.context:  # described as its chip described it (pages, tokens), not in other words
        from threadline.documents import describe_context_file  # loaded with the first attachment

        for ctx in message.context:
            parts.append(
                f'<p><span class="muted"{UNSEARCHED}>Attached: {_esc(describe_context_file(ctx))}</span></p>'
            )
    for i, img in enumerate(message.images):
        label = f'<span class="muted"{UNSEARCHED}>Image: {_esc(img.name or img.media_type)}</span>'
        size = options.image_sizes.get(i)
        if size is None:
            parts.append(f"<p>{label}</p>")
            continue
        url = image_url(message.id, i)
        images.append((url, i))
        picture = f'<img src="{url}" width="{size[0]}" height="{size[1]}"/>'
        parts.append(f'<p><a href="{url}">{picture}</a><br/>{label}</p>')
    return MessageHtml("".join(parts), images=images)


def shown_images(message: Message) -> tuple[ImageBlock, ...]:
    """The images a message's body shows, in order: a prompt's attachments, or every image of
    its tool results (``image_sizes`` and ``MessageHtml.images`` index into this)."""
    if message.kind is MessageKind.PROMPT:
        return message.images
    return tuple(image for result in message.tool_results for image in result.images)


def _tool_results_html(message: Message, c: ThemeColors, options: MessageHtmlOptions) -> MessageHtml:
    out = MessageHtml("")
    parts: list[str] = []
    if message.text:
        parts.append(f'<p class="muted">{_esc(message.text)}</p>')
    index = 0
    for result in message.tool_results:
        thumbnails: list[str] = []
        for image in result.images:  # shown whether the box is open or not: they are the result
            name = _esc(image.name or image.media_type)
            label = f'<span{UNSEARCHED} style="color:{c.muted};">Image: {name}</span>'
            size = options.image_sizes.get(index)
            if size is not None:
                url = image_url(message.id, index)
                out.images.append((url, index))
                label = (
                    f'<a href="{url}"><img src="{url}" width="{size[0]}" height="{size[1]}"/></a><br/>{label}'
                )
            thumbnails.append(f'<tr><td style="padding: 4px 8px;">{label}</td></tr>')
            index += 1
        thumbnails += _resource_rows(result, c)
        parts.append(_tool_result_box(message.id, result, c, options, "".join(thumbnails)))
    out.html = "".join(parts)
    return out


def _resource_rows(result: ToolResult, c: ThemeColors) -> list[str]:
    """A line per linked or embedded resource: its name and URI, and Open and Attach links."""
    rows: list[str] = []
    for i, ref in enumerate(result.resources):
        kind = "Embedded resource" if ref.embedded else "Resource"
        name = _esc(ref.name) + " " if ref.name else ""
        target = f"{i}:{_esc(result.call_id)}"
        actions = " ".join(
            f'<a href="{RESOURCE_SCHEME}:{verb}:{target}">{label}</a>'
            for verb, label in (("open", "Open"), ("attach", "Attach"))
        )
        rows.append(
            f'<tr><td style="padding: 4px 8px;"><span{UNSEARCHED} style="color:{c.muted};">{kind}:</span> '
            f'{name}<span style="color:{c.muted};">{_esc(ref.uri)}</span> {actions}</td></tr>'
        )
    return rows


def _tool_result_box(
    message_id: str, result: ToolResult, c: ThemeColors, options: MessageHtmlOptions, images: str
) -> str:
    name = display_tool_name(result.tool_name, options.tool_namer) if result.tool_name else "tool"
    # A call the user refused or stopped, or one a crash cut short, is not a tool's error:
    # said quietly.
    cancelled = never_ran(result)
    interrupted = result.is_error and result.text.startswith(
        (INTERRUPTED_RESULT_TEXT, UNANSWERED_RESULT_TEXT)
    )
    stopped = stopped_after(result)
    if stopped is not None:
        title = f"Stopped after {stopped}: {name}"
    elif cancelled:
        title = "Not run: " + name
    elif interrupted:
        title = "Interrupted: " + name
    elif result.is_error:
        title = "Error from " + name
    else:
        title = "Result of " + name
    structured = isinstance(result.json_value(), dict | list)
    return tool_box(
        tool_box_key(message_id, result.call_id),
        title,
        _pretty_json(result.text) if structured else result.text,
        c,
        expanded=options.expanded,
        error=result.is_error and not cancelled and stopped is None,
        quiet=cancelled or stopped is not None,
        summary=" ".join(result.text.split()) if structured else None,
        images=images,
    )


def _reply_html(message: Message, c: ThemeColors, options: MessageHtmlOptions) -> MessageHtml:
    out = MessageHtml("")
    parts: list[str] = [thinking_html(message, c, options.expanded)]
    if message.text:
        cite = Citations(len(message.sources), lambda n: citation_html(n, c)) if message.sources else None
        rendered = render_markdown(
            message.text, c, highlight=options.highlight, defer_lexers=True, math=options.math, citations=cite
        )
        parts.append(rendered.html)
        out.code_blocks = rendered.code_blocks
        out.unhighlighted = rendered.unhighlighted
    elif message.status is MessageStatus.STREAMING:
        if not message.reasoning:  # a thinking block says it already
            parts.append(f'<p class="muted"{UNSEARCHED}>Thinking…</p>')
    elif not message.tool_calls and message.status is not MessageStatus.FAILED:
        stopped = message.status in (MessageStatus.CANCELLED, MessageStatus.INTERRUPTED)
        reason = "Stopped before any text arrived." if stopped else "No text was received."
        parts.append(f'<p class="muted"{UNSEARCHED}>{reason}</p>')
    if message.status is MessageStatus.FAILED:
        error = message.metadata.error if message.metadata else ""
        failed = _esc(error or "The reply failed before any text arrived.")
        parts.append(f'<p class="muted"{UNSEARCHED}>{failed}</p>')
    for call in message.tool_calls:
        parts.append(
            tool_box(
                tool_box_key(message.id, call.id),
                f"Tool call: {display_tool_name(call.name, options.tool_namer)}",
                _pretty_json(call.arguments),
                c,
                expanded=options.expanded,
                error=False,
                summary=arguments_summary(call.arguments),
            )
        )
    parts.append(sources_html(message, c, expanded=options.expanded, excluded=options.excluded_sources))
    out.html = "".join(parts)
    return out


def _summary_html(message: Message, c: ThemeColors, options: MessageHtmlOptions) -> MessageHtml:
    """A compaction summary: closed by default to one line, its Markdown when opened."""
    if summary_key(message.id) not in options.expanded:
        return MessageHtml(summary_html(message, c, False, ""))
    rendered = render_markdown(
        message.text, c, highlight=options.highlight, defer_lexers=True, math=options.math
    )
    out = MessageHtml(summary_html(message, c, True, rendered.html), code_blocks=rendered.code_blocks)
    out.unhighlighted = rendered.unhighlighted
    return out


def tool_box(
    key: str,
    title: str,
    body: str,
    c: ThemeColors,
    *,
    expanded: frozenset[str],
    error: bool,
    summary: str | None = None,
    quiet: bool = False,
    images: str = "",
) -> str:
    """A tool call's or result's box: a header that toggles it, the full text when open, and
    ``images`` (table rows of a result's thumbnails) always. Text wraps inside the column:
    a long JSON line never runs past the box."""
    open_ = key in expanded
    arrow = "▾" if open_ else "▸"
    if summary is None:
        summary = body.strip().splitlines()[0] if body.strip() else ""
    summary = "" if open_ else _esc(_elide(summary, TOOL_SUMMARY_CHARS))
    colour = c.error_text if error else c.muted if quiet else c.text
    head = (
        f'<a href="{TOGGLE_SCHEME}:{_esc(key)}" style="color:{colour}; text-decoration:none;">{arrow} '
        f'<b>{_esc(title)}</b></a> <span style="color:{c.muted};">{summary}</span>'
    )
    rows = f'<tr><td style="padding: 4px 8px;">{head}</td></tr>'
    if open_:
        text = body if len(body) <= TOOL_TEXT_LIMIT else body[:TOOL_TEXT_LIMIT] + "\n… (truncated)"
        rows += (
            f'<tr><td style="padding: 4px 8px; border-top: 1px solid {c.code_border};">'
            f'<pre style="color:{c.text}; white-space: pre-wrap;">{_esc(text)}</pre></td></tr>'
        )
    rows += images
    return (
        f'<table width="100%" cellspacing="0" cellpadding="0" style="background-color:{c.code_bg}; '
        f'border: 1px solid {c.code_border}; margin-top: 4px; margin-bottom: 4px;">{rows}</table>'
    )


def display_tool_name(name: str, namer: ToolNamer | None) -> str:
    """The policy name of a registered tool; ``server/tool`` for an MCP tool no longer registered."""
    shown = name
    if namer is not None:
        try:
            shown = namer(name) or name
        except Exception:  # a view must paint whatever the registry does
            log.exception("tool name lookup failed for %r", name)
    if shown == name:
        shown = fallback_tool_name(name)
    return shown


def fallback_tool_name(name: str) -> str:
    """``server/tool`` for an MCP wire name ``server__tool`` (a tool whose server is gone)."""
    server, sep, tool = name.partition(WIRE_SEPARATOR)
    return f"{server}/{tool}" if sep and server and tool else name


def arguments_summary(arguments: str) -> str:
    """One line for a collapsed tool call: ``city: "Oslo", days: 3`` (values as JSON, not elided)."""
    try:
        parsed = json.loads(arguments or "{}")
    except (ValueError, TypeError):
        return " ".join((arguments or "").split())
    if not isinstance(parsed, dict):
        return json.dumps(parsed, ensure_ascii=False)
    if not parsed:
        return "no arguments"
    return ", ".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in parsed.items())


def _elide(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _pretty_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text or "{}"), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return text


def _esc(text: str) -> str:
    return html.escape(text, quote=True)
