"""Turning an attached file into text: which reader a file needs, the size limits, the thread.

``extract_document`` does the work synchronously and checks ``cancel`` between
pages, sheets and slides; ``extract_in_thread`` runs it off the event loop's thread
(the window must keep painting while a 500-page PDF is read) and stops it when the
awaiting task is cancelled. Every refusal is a ``DocumentError`` whose message names
the file, says what is wrong and what to do; nothing is returned half-read.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

from threadline.documents.html_text import html_to_text
from threadline.documents.limits import (
    DEFAULT_LIMITS,
    DocumentLimits,
    OverLimit,
    describe_size,
    too_much_text,
)
from threadline.documents.model import DocumentError, DocumentKind, ExtractedDocument
from threadline.documents.pdf import extract_pdf
from threadline.documents.slides import extract_pptx
from threadline.documents.text_files import decode_text
from threadline.documents.word import extract_docx
from threadline.documents.workbook import csv_to_text, extract_xlsx

SUFFIX_KINDS: dict[str, DocumentKind] = {
    ".pdf": DocumentKind.PDF,
    ".docx": DocumentKind.DOCX,
    ".xlsx": DocumentKind.XLSX,
    ".xlsm": DocumentKind.XLSX,
    ".csv": DocumentKind.CSV,
    ".tsv": DocumentKind.CSV,
    ".pptx": DocumentKind.PPTX,
    ".md": DocumentKind.MARKDOWN,
    ".markdown": DocumentKind.MARKDOWN,
    ".html": DocumentKind.HTML,
    ".htm": DocumentKind.HTML,
    ".xhtml": DocumentKind.HTML,
}
"""Formats read by a parser; any other file is read as text (source code, logs, config…)."""

OLD_FORMATS = {
    ".doc": "Word document (.docx)",
    ".xls": "Excel workbook (.xlsx)",
    ".ppt": "PowerPoint presentation (.pptx)",
}
"""Binary Office formats of before 2007: no well-kept pure-Python reader, so the user is asked to convert."""

BINARY_KINDS = frozenset({DocumentKind.PDF, DocumentKind.DOCX, DocumentKind.XLSX, DocumentKind.PPTX})

QUICK_TEXT_BYTES = 256 * 1024
"""A plain text file this small is read on the spot: decoding it takes less than a frame."""

Reader = Callable[[Path, str, DocumentLimits, threading.Event], ExtractedDocument]
_READERS: dict[DocumentKind, Reader] = {
    DocumentKind.PDF: extract_pdf,
    DocumentKind.DOCX: extract_docx,
    DocumentKind.XLSX: extract_xlsx,
    DocumentKind.PPTX: extract_pptx,
}


def kind_of(path: Path) -> DocumentKind:
    return SUFFIX_KINDS.get(path.suffix.lower(), DocumentKind.TEXT)


def is_quick(path: Path) -> bool:
    """Whether ``path`` is a small plain text or Markdown file, fine to read on the GUI thread."""
    if kind_of(path) not in (DocumentKind.TEXT, DocumentKind.MARKDOWN):
        return False
    try:
        return path.stat().st_size <= QUICK_TEXT_BYTES
    except OSError:
        return True  # reading it fails at once, with the reason


def extract_document(
    path: Path, *, limits: DocumentLimits = DEFAULT_LIMITS, cancel: threading.Event | None = None
) -> ExtractedDocument:
    """The text of ``path`` with its facts; ``DocumentError`` when it cannot be attached."""
    name = path.name
    cancel = cancel or threading.Event()
    suffix = path.suffix.lower()
    if suffix in OLD_FORMATS:
        raise DocumentError(
            f"{name} is in an old Office format Threadline cannot read; "
            f"save it as a {OLD_FORMATS[suffix]} or PDF and attach that."
        )
    kind = kind_of(path)
    try:
        if not path.is_file():
            raise DocumentError(f"{name} is not a file Threadline can attach.")
        size = path.stat().st_size
    except OSError as err:
        raise DocumentError(f"{name} cannot be read ({err.strerror or err}).") from err
    cap = limits.max_file_bytes if kind in BINARY_KINDS else limits.max_text_file_bytes
    if size > cap:
        raise DocumentError(
            f"{name} is larger than {describe_size(cap)}; attach a smaller file.", OverLimit("bytes", cap)
        )
    if size == 0:
        raise DocumentError(f"{name} is empty.")
    try:
        reader = _READERS.get(kind)
        if reader is not None:
            document = reader(path, name, limits, cancel)
        else:
            document = _text_document(path.read_bytes(), name, kind, limits, cancel)
    except OSError as err:
        raise DocumentError(f"{name} cannot be read ({err.strerror or err}).") from err
    if len(document.text) > limits.max_chars:
        raise DocumentError(too_much_text(name, limits), OverLimit("characters", limits.max_chars))
    if not document.text.strip():
        raise DocumentError(f"{name} holds no text to send.")
    return document


def _text_document(
    data: bytes, name: str, kind: DocumentKind, limits: DocumentLimits, cancel: threading.Event
) -> ExtractedDocument:
    text = decode_text(data, name)
    if kind is DocumentKind.CSV:
        return csv_to_text(text, name, limits, cancel)
    if kind is DocumentKind.HTML:
        text = html_to_text(text)
    return ExtractedDocument(name, kind, text)


async def extract_in_thread(path: Path, *, limits: DocumentLimits = DEFAULT_LIMITS) -> ExtractedDocument:
    """``extract_document`` in a worker thread; cancelling the awaiting task stops the worker too."""
    cancel = threading.Event()
    try:
        return await asyncio.to_thread(extract_document, path, limits=limits, cancel=cancel)
    except asyncio.CancelledError:
        cancel.set()  # the thread stops at its next page, sheet or slide
        raise


def file_dialog_filter() -> str:
    """The attach dialog's filter: documents and text first, images, then anything."""
    documents = " ".join(f"*{s}" for s in SUFFIX_KINDS)
    return ";;".join(
        [
            f"Documents and text ({documents} *.txt *.py *.js *.ts *.json *.yaml *.yml *.toml *.xml *.log)",
            "Images (*.png *.jpg *.jpeg *.gif *.webp)",
            "All files (*)",
        ]
    )
