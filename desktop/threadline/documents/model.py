"""What extracting a document gives: its text, a few facts about it, or a reason it was refused.

A document attached to a prompt becomes text the model can read. The facts (how
many pages, sheets or slides; how many characters and about how many tokens) are
what the composer's chip shows, so the user can see what they are about to send
before they send it. Problems come in two strengths: a ``DocumentError`` refuses the
whole file (nothing is attached), a note in ``ExtractedDocument.notes`` says what was
left out of a file that is still worth sending (rows past a sheet's cap, pages
without text).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from threadline.core.messages import ContextFile
from threadline.core.request import estimate_tokens_by_chars
from threadline.documents.limits import OverLimit


class DocumentKind(StrEnum):
    PDF = "pdf"
    DOCX = "docx"
    XLSX = "xlsx"
    CSV = "csv"
    PPTX = "pptx"
    MARKDOWN = "markdown"
    HTML = "html"
    TEXT = "text"
    """Plain text and source code: sent as they are, once decoded."""


COUNT_WORDS: dict[str, tuple[str, str]] = {
    DocumentKind.PDF: ("page", "pages"),
    DocumentKind.XLSX: ("sheet", "sheets"),
    DocumentKind.PPTX: ("slide", "slides"),
}
"""The unit that ``page_count`` counts, by document type (other types have none)."""


def count_label(document_type: str, count: int | None) -> str:
    """``"12 pages"``, ``"1 sheet"``, ``"8 slides"``; "" when the type counts nothing."""
    words = COUNT_WORDS.get(document_type)
    if words is None or count is None:
        return ""
    return f"{count:,} {words[0] if count == 1 else words[1]}"


def token_label(tokens: int) -> str:
    """``"≈4,300 tokens"``: rounded, because it is an estimate and should look like one."""
    if tokens >= 1000:
        tokens = round(tokens, -2)
    return f"≈{tokens:,} tokens"


def describe_context_file(file: ContextFile) -> str:
    """The chip's text for an attached file: ``"report.pdf · 12 pages · ≈4,300 tokens"``."""
    parts = [file.name]
    if counted := count_label(file.document_type, file.page_count):
        parts.append(counted)
    parts.append(token_label(estimate_tokens_by_chars(file.text)))
    return " · ".join(parts)


class DocumentError(Exception):
    """The file cannot be attached; ``user_message`` says why and what to do, naming the file.

    ``over`` names the size limit the file passed, if that is why: ``user_message`` gives an
    attachment's advice ("attach a smaller file"), and a knowledge base that reads the same
    file from a folder words its own reason from ``over`` instead (docs/knowledge.md).
    """

    def __init__(self, user_message: str, over: OverLimit | None = None) -> None:
        super().__init__(user_message)
        self.user_message = user_message
        self.over = over


class ExtractionCancelled(Exception):
    """The user removed the file while it was being read (not an error to show)."""


@dataclass(frozen=True, slots=True)
class ExtractedDocument:
    name: str
    kind: DocumentKind
    text: str
    page_count: int | None = None
    """Pages of a PDF, sheets of a workbook, slides of a presentation; ``None`` otherwise."""
    notes: tuple[str, ...] = ()
    """What was left out of a file that is still attached ("Sheet 'Data': first 2,000 of 9,000 rows")."""

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def tokens(self) -> int:
        return estimate_tokens_by_chars(self.text)

    def to_context(self) -> ContextFile:
        return ContextFile(self.name, self.text, document_type=self.kind.value, page_count=self.page_count)
