"""A message's text as its chat document holds it, for find in a chat (``core.find_text``).

The find bar counts matches in the messages' data, while the view highlights them in the
rendered documents; the two must see the same text, or the count is wrong and "3 of 17"
lands on the wrong spot. For a reply that means its Markdown as rendered:

* no markup: ``**foo** bar`` is found as "foo bar", and a ``*`` that is emphasis is not
  found at all (a ``\\*`` is);
* a link is its text; its address is not shown, so it is not searched;
* an image is the label the view shows ("[image: alt]");
* a formula is a picture, which cannot be highlighted: it becomes U+FFFC, the object
  replacement character the document holds for an image (no query matches it, and no
  match runs across it);
* each paragraph, heading, list item, table cell and code line is a line of its own (a
  match never spans two, as in the document), and runs of white space read as one space,
  as HTML shows them.

Parsing is markdown-it's, with the chat's own rules (``markdown.parse_markdown``), so the
tokens are the ones the view renders. It costs 0.1-1 ms a reply, so a text with nothing
Markdown could change takes a fast path, and results are kept by text for as long as the
chat's tab is open (``ShownTexts``): a chat is parsed once, not per key or per opening of
the bar. A long chat's first find would still spend
seconds here, so the find bar asks ``prepared`` and makes the missing texts a few
milliseconds at a time between frames, from the view's first row down, searching those
made so far meanwhile (the first match near the view shows at once), and the whole chat
when they are all made.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING

from threadline.core.messages import Message, MessageKind
from threadline.ui.chat.view.markdown import parse_markdown
from threadline.ui.chat.view.math_markdown import MATH_DISPLAY, MATH_INLINE

if TYPE_CHECKING:
    from markdown_it.token import Token

OBJECT = "\ufffc"
"""What a document holds for an inline image, such as a rendered formula."""
_BREAK = "\u2028"
"""A hard line break while a block's text is built (whitespace collapsing must keep it)."""

_MARKUP_CHARS = re.compile(r"[\\`*_~\[\]!<>&$|]")
_MARKUP_LINE = re.compile(r"^(?: {0,3}(?:[-+*>#=]|\d{1,9}[.)])| {4}|\t)", re.MULTILINE)
_WHITESPACE = re.compile(r"[ \t\n\r\f\v]+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")

_VERBATIM_KINDS = frozenset(
    {MessageKind.PROMPT, MessageKind.MARKER, MessageKind.TOOL_RESULTS, MessageKind.CANCELLED_TOOL_USES}
)
"""Kinds whose text is *not* rendered as Markdown (a prompt is shown verbatim)."""


CACHE_SIZE = 60_000
"""Texts whose shown form one chat keeps (more than a chat of 10,000 messages and their
edits); the oldest quarter goes when it is full."""


class ShownTexts:
    """The shown text of one chat's messages, each made once and kept while the chat is open.

    One per find bar, so per tab: closing the chat frees what its finds made (up to a text
    per message) with it, instead of a process-wide cache keeping the texts of chats closed
    long ago (docs/performance.md).
    """

    def __init__(self, capacity: int = CACHE_SIZE) -> None:
        self._cache: dict[str, str] = {}
        self._capacity = capacity

    def __len__(self) -> int:
        return len(self._cache)

    def __call__(self, message: Message) -> str:
        """``message``'s text as its document holds it (``core.find_text.ShownText``)."""
        if message.kind in _VERBATIM_KINDS:
            return message.text
        return self.markdown(message.text)

    def prepared(self, message: Message) -> bool:
        """Whether ``self(message)`` is ready at once (verbatim, or made before)."""
        return message.kind in _VERBATIM_KINDS or not message.text or message.text in self._cache

    def markdown(self, text: str) -> str:
        """The plain text a Markdown ``text`` renders to, one block per line (see the module doc)."""
        found = self._cache.get(text)
        if found is None:
            found = _shown_markdown(text)
            if len(self._cache) >= self._capacity:
                for old in list(itertools.islice(self._cache, self._capacity // 4)):
                    del self._cache[old]
            self._cache[text] = found
        return found


def _shown_markdown(text: str) -> str:
    if not _MARKUP_CHARS.search(text) and not _MARKUP_LINE.search(text):
        return "\n".join(c for p in _BLANK_LINE.split(text) if (c := _collapse(p)))
    blocks: list[str] = []
    for token in parse_markdown(text):
        if token.type == "inline":
            blocks.extend(_inline(token.children or []))
        elif token.type in ("fence", "code_block"):
            code = token.content[:-1] if token.content.endswith("\n") else token.content
            blocks.extend(code.rstrip("\n").split("\n"))
    return "\n".join(b for b in blocks if b)


def _inline(tokens: list[Token]) -> list[str]:
    """The blocks one inline token's children make (a display formula starts a new one)."""
    blocks: list[str] = []
    out: list[str] = []
    for token in tokens:
        kind = token.type
        if kind in ("text", "code_inline"):
            out.append(token.content)
        elif kind == "softbreak":
            out.append(" ")
        elif kind == "hardbreak":
            out.append(_BREAK)
        elif kind == "image":
            alt = "".join(child.content for child in token.children or [])
            out.append(f"[image: {alt or str(token.attrs.get('src', '')) or 'image'}]")
        elif kind == MATH_INLINE:
            out.append(OBJECT)
        elif kind == MATH_DISPLAY:
            blocks.append(_collapse("".join(out)))
            blocks.append(OBJECT)
            out = []
    blocks.append(_collapse("".join(out)))
    return blocks


def _collapse(text: str) -> str:
    """White space as HTML shows it: each run one space, none at the ends or around a break."""
    collapsed = _WHITESPACE.sub(" ", text).strip(" ")
    if _BREAK in collapsed:
        collapsed = "\n".join(line.strip(" ") for line in collapsed.split(_BREAK))
    return collapsed
