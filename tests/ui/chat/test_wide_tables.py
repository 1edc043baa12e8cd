"""Tables wider than the message column keep their natural width: cells are not squeezed into
towers of words, the part past the column is cut at its edge (not drawn over the margin), and the
"⤢ Open table" link under the table opens it in a dialog with scroll bars and Copy as
Markdown / CSV. Clicked as a person would; screenshots saved for looking at."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QTextDocument,
    QTextLength,
    QTextTable,
)
from PySide6.QtWidgets import QApplication, QTableWidgetSelectionRange
from tests.support.ui_fakes import FakeLive
from tests.support.waiting import WAIT_MS

from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.chat.view.table_dialog import TableDialog
from threadline.ui.chat.view.table_tokens import OPEN_TABLE_SCHEME
from threadline.ui.chat.view.wide_tables import tables_in

HEADERS = [f"Quarterly metric {i}" for i in range(12)]
ROWS = [[f"{r * 100 + c:,} units · region {c}" for c in range(12)] for r in range(4)]
WIDE = (
    "Here is the comparison:\n\n"
    + "| "
    + " | ".join(HEADERS)
    + " |\n|"
    + "---|" * 11
    + "--:|\n"
    + "\n".join("| " + " | ".join(row) + " |" for row in ROWS)
    + "\n\nThat is all."
)
NARROW = "| a | b |\n|---|---|\n| 1 | 2 |"


def make(qtbot: Any, live: FakeLive) -> ChatView:
    view = ChatView()
    view.setModel(ConversationModel(live, view))
    view.resize(760, 560)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    return view


def tables_of(doc: QTextDocument) -> list[QTextTable]:
    frames = list(doc.rootFrame().childFrames())
    found = []
    while frames:
        frame = frames.pop(0)
        frames.extend(frame.childFrames())
        if isinstance(frame, QTextTable) and frame.format().border() > 0:
            found.append(frame)
    return found


def test_a_twelve_column_table_keeps_its_natural_width(qtbot: Any, tmp_path: Path) -> None:
    live = FakeLive()
    _prompt, reply = live.exchange("Compare the regions", WIDE)
    view = make(qtbot, live)
    qtbot.waitUntil(lambda: view.rendered_document(reply.id) is not None, timeout=WAIT_MS)
    doc = view.rendered_document(reply.id)
    assert doc is not None
    (table,) = tables_of(doc)
    assert table.columns() == 12 and table.rows() == 5
    assert doc.size().width() > doc.textWidth() + 200, "the table runs past the column"
    layout = doc.documentLayout()
    bold = QFont(doc.defaultFont())
    bold.setWeight(QFont.Weight.DemiBold)
    lefts = [
        layout.blockBoundingRect(doc.findBlock(table.cellAt(0, c).firstPosition())).left() for c in range(12)
    ]
    for c in range(12):
        head = doc.findBlock(table.cellAt(0, c).firstPosition())
        assert head.layout().lineCount() == 1, f"header {c} is not wrapped"
        for r in range(1, 5):
            cell = doc.findBlock(table.cellAt(r, c).firstPosition())
            assert cell.text() == ROWS[r - 1][c] and cell.layout().lineCount() == 1, (
                f"cell {r},{c} is not wrapped"
            )
        if c < 11:
            natural = max(
                QFontMetricsF(bold).horizontalAdvance(HEADERS[c]),
                *(QFontMetricsF(doc.defaultFont()).horizontalAdvance(row[c]) for row in ROWS),
            )
            assert lefts[c + 1] - lefts[c] >= natural, f"column {c} is at least as wide as its content"
    # the cut: nothing of the table is painted right of the message column
    view.viewport().grab().save(str(tmp_path / "wide-table.png"))
    image = view.viewport().grab().toImage()
    rect = view.anchor_rect(reply.id, f"{OPEN_TABLE_SCHEME}:{tables_in(WIDE)[0].key}")
    assert rect is not None, "the Open table link is painted under the table"
    column_right = rect.left() + doc.textWidth()  # the link starts at the document's left edge
    base = QColor(view.colors.base)
    strip = QRect(int(column_right) + 2, rect.top() - 60, image.width() - int(column_right) - 4, 50)
    assert strip.width() >= 4, "there is a margin right of the column"
    painted = {
        image.pixelColor(x, y).name()
        for x in range(strip.left(), strip.right())
        for y in range(strip.top(), strip.bottom())
    }
    assert painted == {base.name()}, "the table is cut at the column's edge"


def test_open_table_shows_every_cell_and_copies_markdown_and_csv(qtbot: Any, tmp_path: Path) -> None:
    live = FakeLive()
    _prompt, reply = live.exchange("Compare the regions", WIDE)
    view = make(qtbot, live)
    key = tables_in(WIDE)[0].key
    rect = view.anchor_rect(reply.id, f"{OPEN_TABLE_SCHEME}:{key}")
    assert rect is not None
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    dialogs: list[TableDialog] = []

    def shown() -> bool:
        dialogs[:] = [d for d in view.findChildren(TableDialog) if d.isVisible()]
        return bool(dialogs)

    qtbot.waitUntil(shown, timeout=WAIT_MS)
    dialog = dialogs[0]
    grid = dialog.grid
    assert (grid.columnCount(), grid.rowCount()) == (12, 4)
    assert [grid.horizontalHeaderItem(c).text() for c in range(12)] == HEADERS
    assert grid.item(3, 11).text() == ROWS[3][11]
    assert grid.item(0, 11).textAlignment() & Qt.AlignmentFlag.AlignRight, "the right-aligned column"
    assert grid.horizontalScrollBar().maximum() > 0, "wider than the dialog: it scrolls sideways"
    dialog.grab().save(str(tmp_path / "table-dialog.png"))
    qtbot.mouseClick(dialog.copy_csv, Qt.MouseButton.LeftButton)
    rows = list(csv.reader(io.StringIO(QGuiApplication.clipboard().text())))
    assert rows == [HEADERS, *ROWS]
    qtbot.mouseClick(dialog.copy_markdown, Qt.MouseButton.LeftButton)
    markdown = QGuiApplication.clipboard().text()
    assert markdown.splitlines()[0] == "| " + " | ".join(HEADERS) + " |"
    assert markdown.splitlines()[1].endswith("| ---: |")
    assert tables_in(markdown)[0].rows == ROWS, "the copy is a Markdown table again"
    assert dialog.status.text() == "Copied as Markdown."
    grid.clearSelection()
    grid.setRangeSelected(QTableWidgetSelectionRange(0, 0, 1, 1), True)
    grid.setFocus()
    qtbot.keyClick(grid, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == f"{ROWS[0][0]}\t{ROWS[0][1]}\n{ROWS[1][0]}\t{ROWS[1][1]}"
    dialog.close()
    qtbot.waitUntil(lambda: not view.findChildren(TableDialog), timeout=WAIT_MS)
    QApplication.processEvents()


def test_a_table_that_fits_is_laid_out_as_before(qtbot: Any) -> None:
    live = FakeLive()
    _prompt, reply = live.exchange("small", NARROW)
    view = make(qtbot, live)
    qtbot.waitUntil(lambda: view.rendered_document(reply.id) is not None, timeout=WAIT_MS)
    doc = view.rendered_document(reply.id)
    assert doc is not None
    (table,) = tables_of(doc)
    assert table.format().width().type() != QTextLength.Type.FixedLength
    assert doc.size().width() <= doc.textWidth() + 1


def test_narrowing_the_view_widens_a_table_that_no_longer_fits(qtbot: Any) -> None:
    live = FakeLive()
    medium = (
        "| "
        + " | ".join(f"heading {i}" for i in range(5))
        + " |\n|"
        + "---|" * 5
        + "\n| "
        + " | ".join(f"value {i}" for i in range(5))
        + " |"
    )
    _prompt, reply = live.exchange("medium", medium)
    view = make(qtbot, live)
    qtbot.waitUntil(lambda: view.rendered_document(reply.id) is not None, timeout=WAIT_MS)
    doc = view.rendered_document(reply.id)
    assert doc is not None and doc.size().width() <= doc.textWidth() + 1
    view.resize(300, 560)
    qtbot.waitUntil(
        lambda: (d := view.rendered_document(reply.id)) is not None and d.textWidth() < 300, timeout=WAIT_MS
    )
    narrow = view.rendered_document(reply.id)
    assert narrow is not None
    (table,) = tables_of(narrow)
    for c in range(5):
        assert narrow.findBlock(table.cellAt(0, c).firstPosition()).layout().lineCount() == 1
