"""Rows of cells as a Markdown table: the layout models read best for sheets and CSV files."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime, time


def cell_text(value: object) -> str:
    """One cell on one line: ``None`` is empty, dates are ISO, floats lose a trailing ``.0``."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        text = value.isoformat(sep=" ").removesuffix(" 00:00:00")
    elif isinstance(value, date | time):
        text = value.isoformat()
    elif isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        text = str(int(value))
    else:
        text = str(value)
    return " ".join(text.split()).replace("|", "\\|")


def trim_row(cells: Sequence[str]) -> list[str]:
    """The row without its empty cells at the end."""
    end = len(cells)
    while end and not cells[end - 1]:
        end -= 1
    return list(cells[:end])


def markdown_table(rows: Iterable[Sequence[str]]) -> str:
    """The rows as a table, the first one as its header; all rows padded to the widest."""
    kept = [row for row in rows]
    if not kept:
        return ""
    width = max(1, max(len(row) for row in kept))
    padded = [list(row) + [""] * (width - len(row)) for row in kept]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + " --- |" * width]
    lines.extend("| " + " | ".join(row) + " |" for row in padded[1:])
    return "\n".join(lines)
