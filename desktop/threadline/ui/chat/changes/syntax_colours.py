"""The code colours of a diff's lines: Pygments tokens in the theme's Pygments style.

Added, removed and unchanged lines are lexed together, in the order shown, with a lexer
picked from the file name; a line then keeps its green or red background and gets the
code's colours on top, as VS Code and GitHub show a diff. A file type Pygments does not
know is shown in the plain text colour. Lines are lexed as one text so a line inside a
multi-line string is coloured as a string more often than not; a diff does not always hold
the string's start, so this is a best effort, never a parse.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

log = logging.getLogger("threadline.ui.chat.changes.syntax_colours")

Span = tuple[int, int, str, bool]
"""(start, length, hex colour, bold) within one line's code (after its ``+``/``-`` marker)."""


def line_spans(file_name: str, lines: Sequence[str], style_name: str) -> list[list[Span]]:
    """Coloured spans of each line's code; empty lists when the file type is not known."""
    empty: list[list[Span]] = [[] for _ in lines]
    try:
        from pygments.lexers import get_lexer_for_filename
        from pygments.styles import get_style_by_name
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - Pygments is a dependency of the chat's Markdown
        return empty
    try:
        lexer = get_lexer_for_filename(file_name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return empty
    try:
        style = get_style_by_name(style_name)
    except ClassNotFound:
        log.warning("no Pygments style %r", style_name)
        return empty
    spans = empty
    row = col = 0
    for token, value in lexer.get_tokens("\n".join(lines)):
        colour = style.style_for_token(token)
        pieces = value.split("\n")
        for i, piece in enumerate(pieces):
            if i:
                row, col = row + 1, 0
            if piece and colour["color"] and row < len(spans):
                spans[row].append((col, len(piece), "#" + colour["color"], bool(colour["bold"])))
            col += len(piece)
    return spans
