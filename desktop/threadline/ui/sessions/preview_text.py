"""The sidebar's one-line preview of a chat as the chat displays it: Markdown's punctuation
taken off the way the renderer takes it off, and nothing else.

The preview is stored as the first line of the shown path's last message, in Markdown. The
renderer turns ``**bold**`` into bold and leaves ``2**10 = 1024`` as written (a lone marker is
text), so stripping every ``**`` would show "210 = 1024". The line is read with CommonMark's
own inline rules for what a first line holds: code spans first (their content left alone),
backslash escapes, links (their text), emphasis by the delimiter-run algorithm (flanking, the
rule of three, nearest opener), strikethrough, and a heading, quote or list marker at the start.
The chat's parser is not loaded for this: the sidebar paints before any chat is opened.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_STRIKE = re.compile(r"(?<!~)~~(?=[^\s~])(.+?)(?<=[^\s~])~~(?!~)")
_LINE_START = re.compile(r"^\s{0,3}(?:#{1,6}\s+|>\s?)+")
_BULLET = re.compile(r"^\s{0,3}[-*+]\s+")
_ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def plain_preview(text: str) -> str:
    """One line of Markdown as the chat shows it, on one line."""
    line = " ".join(text.split())
    line = _BULLET.sub("• ", _LINE_START.sub("", line))
    spans: list[str] = []

    def hold(code: re.Match[str]) -> str:
        content = code.group(2)
        if content.startswith(" ") and content.endswith(" ") and content.strip():
            content = content[1:-1]
        spans.append(content)
        return f"`{_HELD}{len(spans) - 1}{_HELD}`"  # backticks outside: flanking sees what it saw

    shown = _inline(_CODE_SPAN.sub(hold, line.replace(_HELD, "")))
    return re.sub(f"`{_HELD}(\\d+){_HELD}`", lambda m: spans[int(m.group(1))], shown)


_HELD = "\ue000"
"""Marks a code span taken out while emphasis is matched around it (a private-use character,
removed from the text first): emphasis may open before a code span and close after it."""


@dataclass
class _Run:
    """A run of ``*`` or ``_``: how many are left unmatched, and what it may do."""

    char: str
    count: int
    can_open: bool
    can_close: bool
    length: int


def _inline(text: str) -> str:
    text = _STRIKE.sub(lambda m: m.group(1), _LINK.sub(lambda m: m.group(1), text))
    items: list[str | _Run] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in _ESCAPABLE:
            items.append(text[i + 1])
            i += 2
        elif ch in "*_":
            end = i
            while end < len(text) and text[end] == ch:
                end += 1
            items.append(_run(ch, text[i - 1] if i else " ", text[end] if end < len(text) else " ", end - i))
            i = end
        else:
            items.append(ch)
            i += 1
    _match_emphasis([item for item in items if isinstance(item, _Run)])
    return "".join(item if isinstance(item, str) else item.char * item.count for item in items)


def _run(char: str, before: str, after: str, length: int) -> _Run:
    left = not after.isspace() and (not _punctuation(after) or before.isspace() or _punctuation(before))
    right = not before.isspace() and (not _punctuation(before) or after.isspace() or _punctuation(after))
    if char == "*":
        return _Run(char, length, left, right, length)
    return _Run(
        char,
        length,
        left and (not right or _punctuation(before)),
        right and (not left or _punctuation(after)),
        length,
    )


def _punctuation(ch: str) -> bool:
    return ch in _ESCAPABLE or unicodedata.category(ch).startswith("P")


def _match_emphasis(runs: list[_Run]) -> None:
    """CommonMark's "process emphasis": each closer, in order, takes the nearest opener of its
    character that the rule of three allows; the runs between them can no longer pair."""
    for position, closer in enumerate(runs):
        while closer.can_close and closer.count:
            opener_at = next(
                (
                    at
                    for at in range(position - 1, -1, -1)
                    if runs[at].char == closer.char
                    and runs[at].can_open
                    and runs[at].count
                    and not _rule_of_three(runs[at], closer)
                ),
                None,
            )
            if opener_at is None:
                break
            opener = runs[opener_at]
            used = 2 if opener.count >= 2 and closer.count >= 2 else 1
            opener.count -= used
            closer.count -= used
            for between in runs[opener_at + 1 : position]:
                between.can_open = between.can_close = False


def _rule_of_three(opener: _Run, closer: _Run) -> bool:
    """Two runs that could each both open and close pair only if their lengths' sum is not a
    multiple of three, unless both lengths are."""
    if not (opener.can_close or closer.can_open):
        return False
    return (opener.length + closer.length) % 3 == 0 and not (
        opener.length % 3 == 0 and closer.length % 3 == 0
    )
