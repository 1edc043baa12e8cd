"""Spreadsheets as Markdown tables: XLSX with openpyxl (read-only, values not formulas) and CSV.

Each sheet becomes a ``## Sheet: Name`` heading and a table whose first row is the
header. Only the values are read (``data_only``): the numbers the user sees, not
the formulas behind them. A sheet longer than ``max_rows_per_sheet`` rows or wider
than ``max_columns`` keeps its first rows and columns, and a note says what was
left out, so the user knows the model did not see it all.
"""

from __future__ import annotations

import csv
import io
import logging
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from threadline.documents.limits import DocumentLimits, OverLimit, too_much_text
from threadline.documents.model import DocumentError, DocumentKind, ExtractedDocument, ExtractionCancelled
from threadline.documents.office import check_office_file, damaged
from threadline.documents.tables import cell_text, markdown_table, trim_row

log = logging.getLogger("threadline.documents")
WHAT = "Excel workbook"


def extract_xlsx(path: Path, name: str, limits: DocumentLimits, cancel: threading.Event) -> ExtractedDocument:
    check_office_file(path, name, WHAT, limits)
    import openpyxl

    notes: list[str] = []
    sections: list[str] = []
    chars = 0
    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as err:  # untrusted input: broken XML, missing parts
        log.info("could not open the workbook %s: %s: %s", name, type(err).__name__, err)
        raise damaged(name, WHAT) from err
    try:
        sheets = workbook.worksheets
        if len(sheets) > limits.max_sheets:
            raise DocumentError(
                f"{name} has {len(sheets):,} sheets; "
                f"Threadline attaches workbooks of up to {limits.max_sheets:,}.",
                OverLimit("sheets", limits.max_sheets),
            )
        for sheet in sheets:
            rows = sheet.iter_rows(values_only=True) if hasattr(sheet, "iter_rows") else iter(())
            table, note = _table(rows, f"Sheet '{sheet.title}'", limits, cancel)
            sections.append(f"## Sheet: {sheet.title}\n\n{table or '(empty)'}")
            chars += len(sections[-1])
            if chars > limits.max_chars:
                raise DocumentError(too_much_text(name, limits), OverLimit("characters", limits.max_chars))
            if note:
                notes.append(note)
        count = len(sheets)
    except (DocumentError, ExtractionCancelled):
        raise
    except Exception as err:
        log.info("could not read the workbook %s: %s: %s", name, type(err).__name__, err)
        raise damaged(name, WHAT) from err
    finally:
        workbook.close()
    text = "\n\n".join(sections)
    return ExtractedDocument(name, DocumentKind.XLSX, text, page_count=count, notes=tuple(notes))


def csv_to_text(text: str, name: str, limits: DocumentLimits, cancel: threading.Event) -> ExtractedDocument:
    """A decoded CSV (or TSV) file as one table; the delimiter is sniffed from its start."""
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        table, note = _table(csv.reader(io.StringIO(text), dialect), "The file", limits, cancel)
    except csv.Error as err:
        raise DocumentError(f"{name} could not be read as CSV ({err}).") from err
    if len(table) > limits.max_chars:
        raise DocumentError(too_much_text(name, limits), OverLimit("characters", limits.max_chars))
    return ExtractedDocument(name, DocumentKind.CSV, table, notes=(note,) if note else ())


def _table(
    rows: Iterable[Sequence[object]], what: str, limits: DocumentLimits, cancel: threading.Event
) -> tuple[str, str]:
    """The rows as a Markdown table (empty rows skipped) and a note when rows or columns were cut."""
    kept: list[list[str]] = []
    total = 0
    widest = 0
    for number, row in enumerate(rows):
        if number % 256 == 0 and cancel.is_set():
            raise ExtractionCancelled
        cells = trim_row([cell_text(value) for value in row])
        if not cells:
            continue
        total += 1
        widest = max(widest, len(cells))
        if total <= limits.max_rows_per_sheet:
            kept.append(cells[: limits.max_columns])
    cut: list[str] = []
    if total > limits.max_rows_per_sheet:
        cut.append(f"first {limits.max_rows_per_sheet:,} of {total:,} rows")
    if widest > limits.max_columns:
        cut.append(f"first {limits.max_columns:,} of {widest:,} columns")
    note = f"{what}: only the {' and '.join(cut)} are included." if cut else ""
    return markdown_table(kept), note
