"""Documents attached to a prompt, turned into text a model can read (no Qt, no network).

PDF (pypdf), Word (python-docx), Excel (openpyxl), PowerPoint (python-pptx), CSV,
Markdown, HTML (the standard library's parser) and any text or source file. The
libraries are imported only when a file of their kind is attached, so starting the
app or ``threadline ask`` without ``--attach`` pays nothing for them.
"""

from threadline.documents.extract import (
    extract_document,
    extract_in_thread,
    file_dialog_filter,
    is_quick,
    kind_of,
)
from threadline.documents.limits import DEFAULT_LIMITS, DocumentLimits
from threadline.documents.model import (
    DocumentError,
    DocumentKind,
    ExtractedDocument,
    ExtractionCancelled,
    count_label,
    describe_context_file,
    token_label,
)

__all__ = [
    "DEFAULT_LIMITS",
    "DocumentError",
    "DocumentKind",
    "DocumentLimits",
    "ExtractedDocument",
    "ExtractionCancelled",
    "count_label",
    "describe_context_file",
    "extract_document",
    "extract_in_thread",
    "file_dialog_filter",
    "is_quick",
    "kind_of",
    "token_label",
]
