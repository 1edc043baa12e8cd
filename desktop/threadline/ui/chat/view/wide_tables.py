"""Markdown tables wider than the message column: drawn at their natural width, never squeezed.

``QTextDocument`` fits a table into the document's width by wrapping its cells, down to the
longest word of each; a 12-column table in a 700 px column becomes a tower of one-word
lines. Here a table that does not fit gets fixed column widths — each column as wide as
its widest cell on one line — so it keeps its shape and runs past the column's right edge.
The row painter then lets it scroll sideways in place (``table_scroll``). Under every table
the Markdown renderer puts a small "⤢ Open table" link (``open-table:<key>``) that opens the
table in a resizable dialog with both scroll bars and Copy as Markdown / CSV
(``table_dialog``).

The link's key is a hash of the table's cell texts, so a table is found again in the
message's Markdown (``tables_in``) however the reply was rendered — whole, or part by part
while it streamed.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from PySide6.QtGui import QFontMetricsF, QTextDocument, QTextFrame, QTextLength, QTextTable

from threadline.ui.chat.view.table_tokens import cell_text, table_cells, table_key

SLACK_PX = 3.0
"""Added to each measured cell so rounding never wraps its last word."""


@dataclass(slots=True)
class TableData:
    """A Markdown table's cells as plain text, for the dialog and the copies."""

    key: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    aligns: list[str] = field(default_factory=list)
    """``left``, ``center``, ``right`` or ``""`` per column."""

    @property
    def column_count(self) -> int:
        return max([len(self.header), *(len(r) for r in self.rows)])

    def to_markdown(self) -> str:
        """The table as a GitHub-flavoured Markdown table (pipes in cells escaped)."""
        width = self.column_count

        def line(cells: list[str]) -> str:
            padded = [*cells, *[""] * (width - len(cells))]
            return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in padded) + " |"

        rule = {"left": ":---", "center": ":---:", "right": "---:"}
        aligns = [*self.aligns, *[""] * (width - len(self.aligns))]
        rules = "| " + " | ".join(rule.get(a, "---") for a in aligns) + " |"
        return "\n".join([line(self.header), rules, *(line(r) for r in self.rows)]) + "\n"

    def to_csv(self) -> str:
        """The table as CSV (RFC 4180 quoting, header first)."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.header)
        writer.writerows(self.rows)
        return out.getvalue()


def tables_in(text: str) -> list[TableData]:
    """Every Markdown table of ``text``, in order."""
    from threadline.ui.chat.view.markdown import parse_markdown

    tokens = parse_markdown(text)
    found: list[TableData] = []
    for i, token in enumerate(tokens):
        if token.type != "table_open":
            continue
        cells, _end = table_cells(tokens, i)
        table = TableData(table_key(cells), [])
        row: list[str] | None = None
        in_head = False
        for inner in tokens[i + 1 : _end]:
            if inner.type == "thead_open":
                in_head = True
            elif inner.type == "thead_close":
                in_head = False
            elif inner.type == "tr_open":
                row = []
            elif inner.type == "tr_close" and row is not None:
                if in_head:
                    table.header = row
                else:
                    table.rows.append(row)
                row = None
            elif inner.type in ("th_open", "td_open"):
                style = str(inner.attrs.get("style", ""))
                if in_head:
                    table.aligns.append(style.removeprefix("text-align:").strip())
            elif inner.type == "inline" and row is not None:
                row.append(cell_text(inner))
        found.append(table)
    return found


def find_table(text: str, href: str) -> TableData | None:
    """The table an ``open-table:<key>`` link names in a message's Markdown."""
    key = href.split(":", 1)[1] if ":" in href else ""
    return next((t for t in tables_in(text) if t.key == key), None)


def fit_wide_tables(doc: QTextDocument, width: float) -> int:
    """Give each Markdown table of ``doc`` that would be squeezed into ``width`` fixed columns
    at their natural widths; returns how many tables were widened.

    Markdown tables are the ones with a border and no percentage width (code boxes, tool
    boxes and the thinking block are 100 % wide and borderless). A document without tables
    costs one look at its root frame.
    """
    frames = doc.rootFrame().childFrames()
    if not frames:
        return 0
    widened = 0
    stack: list[QTextFrame] = list(frames)
    while stack:
        frame = stack.pop()
        stack.extend(frame.childFrames())
        if isinstance(frame, QTextTable) and _widen(doc, frame, width):
            widened += 1
    return widened


def _widen(doc: QTextDocument, table: QTextTable, width: float) -> bool:
    fmt = table.format()
    if fmt.border() <= 0 or fmt.width().type() == QTextLength.Type.PercentageLength:
        return False
    if fmt.width().type() == QTextLength.Type.FixedLength:
        return False  # widened before: its columns already hold their cells on one line
    padding, border = fmt.cellPadding(), fmt.border()
    columns = [w + 2 * padding + border + SLACK_PX for w in natural_column_widths(doc, table)]
    total = sum(columns) + border + 2 * fmt.margin()
    if total <= width:
        return False
    fmt.setColumnWidthConstraints([QTextLength(QTextLength.Type.FixedLength, w) for w in columns])
    fmt.setWidth(QTextLength(QTextLength.Type.FixedLength, total))
    table.setFormat(fmt)
    return True


def natural_column_widths(doc: QTextDocument, table: QTextTable) -> list[float]:
    """Each column's widest cell laid out on one line (cells spanning columns are left out)."""
    widths = [0.0] * table.columns()
    for row in range(table.rows()):
        for column in range(table.columns()):
            cell = table.cellAt(row, column)
            if cell.row() != row or cell.column() != column or cell.columnSpan() > 1:
                continue
            widths[column] = max(widths[column], _cell_width(doc, cell.firstPosition(), cell.lastPosition()))
    return widths


def _cell_width(doc: QTextDocument, first: int, last: int) -> float:
    default = doc.defaultFont()
    widest = 0.0
    block = doc.findBlock(first)
    while block.isValid() and block.position() <= last:
        line = block.blockFormat().leftMargin() + block.blockFormat().textIndent()
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            char_format = fragment.charFormat()
            if char_format.isImageFormat():
                line += char_format.toImageFormat().width()
            else:
                font = char_format.font().resolve(default)
                line += QFontMetricsF(font).horizontalAdvance(fragment.text())
            it += 1
        widest = max(widest, line)
        block = block.next()
    return widest
