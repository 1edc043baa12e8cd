"""A Markdown table in markdown-it's tokens: its cell texts, the key that names it in an
``open-table:<key>`` link, and that link's HTML (``wide_tables``).

Apart from ``wide_tables`` so the Markdown renderer can use them without a cycle:
``wide_tables`` parses a message's Markdown through the renderer to find its tables again.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it.token import Token

    from threadline.ui.common.theme import ThemeColors

OPEN_TABLE_SCHEME = "open-table"


def table_key(cells: list[str]) -> str:
    """The key of a table in ``open-table:<key>``: its cell texts, hashed."""
    return hashlib.sha1("\x1f".join(cells).encode("utf-8"), usedforsecurity=False).hexdigest()[:16]


def cell_text(token: Token) -> str:
    """A cell's inline Markdown as the plain text it shows (markers and link targets dropped)."""
    shown = []
    for child in token.children or []:
        if child.type in ("text", "code_inline", "math_inline", "math_display"):
            shown.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            shown.append(" ")
        elif child.type == "image":
            shown.append(child.content)
    return "".join(shown).strip()


def table_cells(tokens: list[Token], start: int) -> tuple[list[str], int]:
    """The cell texts of the table whose ``table_open`` is ``tokens[start]``, and the index of
    its ``table_close``."""
    cells: list[str] = []
    i = start + 1
    while i < len(tokens) and tokens[i].type != "table_close":
        if tokens[i].type == "inline":
            cells.append(cell_text(tokens[i]))
        i += 1
    return cells, i


def open_link_html(key: str, colors: ThemeColors) -> str:
    """The small link under a table that opens it in a dialog."""
    return (
        f'<p style="margin-top: 0px; margin-bottom: 10px;"><a href="{OPEN_TABLE_SCHEME}:{key}" '
        f'style="color:{colors.muted}; text-decoration:none;">⤢ Open table</a></p>'
    )
