"""Text of a presentation (PPTX) with python-pptx, slide by slide.

Each slide follows a ``--- Slide N ---`` line: its title first, then the text of
its shapes (groups opened, tables as Markdown tables), then its speaker notes,
which often say more than the slide itself.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from threadline.documents.limits import DocumentLimits, OverLimit, too_much_text
from threadline.documents.model import DocumentError, DocumentKind, ExtractedDocument, ExtractionCancelled
from threadline.documents.office import check_office_file, damaged
from threadline.documents.tables import cell_text, markdown_table, trim_row

log = logging.getLogger("threadline.documents")
WHAT = "PowerPoint presentation"
MAX_GROUP_DEPTH = 20


def extract_pptx(path: Path, name: str, limits: DocumentLimits, cancel: threading.Event) -> ExtractedDocument:
    check_office_file(path, name, WHAT, limits)
    from pptx import Presentation

    try:
        presentation = Presentation(str(path))
        slides = list(presentation.slides)
        if len(slides) > limits.max_pages:
            raise DocumentError(
                f"{name} has {len(slides):,} slides; Threadline attaches presentations of up to "
                f"{limits.max_pages:,}.",
                OverLimit("slides", limits.max_pages),
            )
        parts: list[str] = []
        chars = 0
        for number, slide in enumerate(slides, start=1):
            if cancel.is_set():
                raise ExtractionCancelled
            texts = list(_shape_texts(slide.shapes, 0))
            if slide.has_notes_slide and (notes := slide.notes_slide.notes_text_frame) is not None:
                texts.append(f"Notes: {notes.text.strip()}" if notes.text.strip() else "")
            parts.append(f"--- Slide {number} ---\n" + "\n\n".join(t for t in texts if t))
            chars += len(parts[-1])
            if chars > limits.max_chars:
                raise DocumentError(too_much_text(name, limits), OverLimit("characters", limits.max_chars))
    except (DocumentError, ExtractionCancelled):
        raise
    except Exception as err:  # untrusted input: broken XML, missing parts
        log.info("could not read the presentation %s: %s: %s", name, type(err).__name__, err)
        raise damaged(name, WHAT) from err
    return ExtractedDocument(name, DocumentKind.PPTX, "\n\n".join(parts), page_count=len(slides))


def _shape_texts(shapes: Iterable[Any], depth: int) -> Iterable[str]:
    for shape in shapes:
        if hasattr(shape, "shapes"):  # a group
            if depth < MAX_GROUP_DEPTH:
                yield from _shape_texts(shape.shapes, depth + 1)
        elif getattr(shape, "has_table", False):
            rows = [trim_row([cell_text(cell.text) for cell in row.cells]) for row in shape.table.rows]
            yield markdown_table(row for row in rows if row)
        elif getattr(shape, "has_text_frame", False):
            yield shape.text_frame.text.strip()
