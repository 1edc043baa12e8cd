"""Text of a Word document (DOCX) with python-docx, in reading order.

Paragraphs and tables come in the order they appear in the body; headings become
Markdown ``#`` lines and list paragraphs ``-`` lines, tables become Markdown tables,
so the model sees the document's structure. A DOCX has no page count of its own
(pages exist only when Word lays it out), so none is claimed.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from threadline.documents.limits import DocumentLimits, OverLimit, too_much_text
from threadline.documents.model import DocumentError, DocumentKind, ExtractedDocument, ExtractionCancelled
from threadline.documents.office import check_office_file, damaged
from threadline.documents.tables import cell_text, markdown_table, trim_row

log = logging.getLogger("threadline.documents")
WHAT = "Word document"


def extract_docx(path: Path, name: str, limits: DocumentLimits, cancel: threading.Event) -> ExtractedDocument:
    check_office_file(path, name, WHAT, limits)
    import docx
    from docx.table import Table

    try:
        document = docx.Document(str(path))
        blocks: list[str] = []
        chars = 0
        for item in document.iter_inner_content():
            if cancel.is_set():
                raise ExtractionCancelled
            if isinstance(item, Table):
                rows = [trim_row([cell_text(cell.text) for cell in row.cells]) for row in item.rows]
                text = markdown_table(row for row in rows if row)
            else:
                text = _paragraph(item.text, item.style.name if item.style is not None else "")
            if text:
                blocks.append(text)
                chars += len(text)
                if chars > limits.max_chars:
                    raise DocumentError(
                        too_much_text(name, limits), OverLimit("characters", limits.max_chars)
                    )
    except (DocumentError, ExtractionCancelled):
        raise
    except Exception as err:  # untrusted input: broken XML, missing parts, odd relationships
        log.info("could not read the Word document %s: %s: %s", name, type(err).__name__, err)
        raise damaged(name, WHAT) from err
    return ExtractedDocument(name, DocumentKind.DOCX, "\n\n".join(blocks))


def _paragraph(text: str, style: str) -> str:
    text = text.strip()
    if not text:
        return ""
    if style == "Title":
        return f"# {text}"
    if style.startswith("Heading "):
        level = style.removeprefix("Heading ").strip()
        if level.isdigit():
            return "#" * min(6, int(level)) + f" {text}"
    if style.startswith("List"):
        return f"- {text}"
    return text
