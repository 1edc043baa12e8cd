"""A reply's "Sources" box and its citation links: pure HTML, tested without a widget.

The passages sent with a turn are kept on the reply (``Message.sources``, docs/knowledge.md).
Under the reply's text a box lists them, closed by default to one line ("▸ Sources (3):
manual.pdf, setup.md…"); its header is a ``toggle:`` link like a tool box's. Open, it has
a row per source: ``[1] handbook: manual.pdf, page 3`` (a ``source:open:<n>`` link) and
the Pin and Exclude links (``source:pin:<n>``…), with the pinned and excluded states
shown. A citation ``[2]`` in the reply's Markdown becomes a ``source:cite:<n>`` link
(``markdown.py``). The view hands every ``source:`` link to the tab
(``ui/chat/sources/chat_sources.py``), which opens, pins or excludes; hovering one shows
the source's label and the passage that was sent (``source_tooltip``). The box is not part
of the message's text, so find in the chat leaves it out (``UNSEARCHED``).
"""

from __future__ import annotations

import html
from collections.abc import Collection

from threadline.core.messages import Message
from threadline.core.sources import Source, SourceKind, passage_key
from threadline.ui.chat.view.markdown import UNSEARCHED
from threadline.ui.common.theme import ThemeColors

SOURCE_SCHEME = "source"
"""``source:<verb>:<n>``, n counted from 1 as the model was told: open, cite (a citation in
the text), pin, unpin, exclude, include."""

SOURCES_ACTION = "sources"
"""The message command (S, and the menu) that lists a reply's sources in a menu to open, pin
or exclude each: the keyboard's way to them."""

VERBS = ("open", "cite", "pin", "unpin", "exclude", "include")

TOOLTIP_CHARS = 700
"""Characters of the passage a hover shows (the viewer shows it whole)."""

SUMMARY_NAMES = 3
"""Sources named in the closed box's line before "…"."""


def sources_key(message_id: str) -> str:
    """The view's expanded-set key of a reply's Sources box (``<message id>:sources``)."""
    return f"{message_id}:sources"


def source_href(verb: str, number: int) -> str:
    return f"{SOURCE_SCHEME}:{verb}:{number}"


def parse_source_href(href: str) -> tuple[str, int] | None:
    """``source:<verb>:<n>`` as (verb, n); None for any other link."""
    parts = href.split(":")
    if len(parts) != 3 or parts[0] != SOURCE_SCHEME or parts[1] not in VERBS or not parts[2].isdigit():
        return None
    return parts[1], int(parts[2])


def source_of(message: Message | None, href: str) -> tuple[str, int, Source] | None:
    """The (verb, number, source) a ``source:`` link of ``message`` names, if it still has it."""
    parsed = parse_source_href(href)
    if parsed is None or message is None or not 1 <= parsed[1] <= len(message.sources):
        return None
    return parsed[0], parsed[1], message.sources[parsed[1] - 1]


def short_name(source: Source) -> str:
    """What the closed line calls a source: the file's name, or the site."""
    if source.locator.url:
        rest = source.locator.url.split("://", 1)[-1]
        return rest.split("/", 1)[0] or source.locator.url
    return source.locator.path.replace("\\", "/").rsplit("/", 1)[-1] or source.label


def sources_html(
    message: Message, c: ThemeColors, *, expanded: Collection[str], excluded: Collection[str]
) -> str:
    """The Sources box under a reply ("" when it has none)."""
    if not message.sources:
        return ""
    count = len(message.sources)
    open_ = sources_key(message.id) in expanded
    arrow = "▾" if open_ else "▸"
    head = (
        f'<a href="toggle:{_esc(sources_key(message.id))}" style="color:{c.text}; text-decoration:none;">'
        f"<span{UNSEARCHED}>{arrow} <b>Sources ({count})</b></span></a>"
    )
    if not open_:
        names = list(dict.fromkeys(short_name(s) for s in message.sources))
        shown = ", ".join(names[:SUMMARY_NAMES]) + ("…" if len(names) > SUMMARY_NAMES else "")
        pinned = sum(s.pinned for s in message.sources)
        note = f" · {pinned} pinned" if pinned else ""
        head += f' <span{UNSEARCHED} style="color:{c.muted};">{_esc(shown)}{note}</span>'
    rows = f'<tr><td style="padding: 4px 8px;">{head}</td></tr>'
    if open_:  # a table of its own, without borders: the frame's border would draw every cell's
        listed = "".join(
            _row(number, source, c, passage_key(source) in excluded)
            for number, source in enumerate(message.sources, start=1)
        )
        rows += (
            f'<tr><td style="padding: 2px 0px 4px 0px; border-top: 1px solid {c.code_border};">'
            f'<table width="100%" cellspacing="0" cellpadding="0">{listed}</table></td></tr>'
        )
    return (
        f'<table width="100%" cellspacing="0" cellpadding="0" style="background-color:{c.code_bg}; '
        f'border: 1px solid {c.code_border}; margin-top: 6px; margin-bottom: 4px;">{rows}</table>'
    )


def _row(number: int, source: Source, c: ThemeColors, excluded: bool) -> str:
    where = source.locator.describe()
    label = f"[{number}] {_esc(source.label)}: {_esc(where)}" if source.label else f"[{number}] {_esc(where)}"
    style = f"color:{c.muted}; text-decoration: line-through;" if excluded else f"color:{c.link};"
    link = f'<a href="{source_href("open", number)}" style="{style}"><span{UNSEARCHED}>{label}</span></a>'
    states = []
    if source.pinned:
        states.append(f'<span style="color:{c.accent};"><b>Pinned</b></span>')
    if excluded:
        states.append(f'<span style="color:{c.muted};">Excluded</span>')
    pin = ("unpin", "Unpin") if source.pinned else ("pin", "Pin")
    exclude = ("include", "Include again") if excluded else ("exclude", "Exclude")
    actions = " · ".join(
        f'<a href="{source_href(verb, number)}" style="color:{c.muted};">{text}</a>'
        for verb, text in (pin, exclude)
    )
    state = " · ".join(states)
    state_html = f"{state} &nbsp; " if state else ""
    return (
        f'<tr><td style="padding: 3px 8px;">{link}</td>'
        f'<td align="right" style="padding: 3px 8px;">'
        f"<span{UNSEARCHED}>{state_html}{actions}</span></td></tr>"
    )


def citation_html(number: int, c: ThemeColors) -> str:
    """A citation ``[n]`` in a reply's text, as a link to its source: small and raised."""
    return (
        f'<a href="{source_href("cite", number)}" style="color:{c.link}; text-decoration:none;">'
        f"<sup><b>[{number}]</b></sup></a>"
    )


def source_tooltip(source: Source, number: int) -> str:
    """What hovering a source's link shows: its label, where it is, and the passage sent."""
    text = source.text.strip()
    if len(text) > TOOLTIP_CHARS:
        text = text[: TOOLTIP_CHARS - 1].rstrip() + "…"
    kind = {SourceKind.WEB: "Web", SourceKind.MCP_RESOURCE: "Resource"}.get(source.kind, "")
    title = _esc(source.heading_line(number)) + (f" ({kind})" if kind else "")
    passage = _esc(text).replace("\n", "<br/>")
    pinned = "<p><i>Pinned: sent with every turn.</i></p>" if source.pinned else ""
    return f"<qt><p><b>{title}</b></p>{pinned}<p>{passage}</p></qt>"


def _esc(text: str) -> str:
    return html.escape(text, quote=True)
