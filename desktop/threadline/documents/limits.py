"""How big an attached document may be before Threadline refuses it.

An attached file is untrusted input: a PDF of a hundred thousand pages, a workbook
whose zip inflates a thousandfold, or a text file of a gigabyte would otherwise
freeze extraction or fill memory, and a model could not read the result anyway.
The limits are generous for real documents and cheap to check before parsing.
Extracted text above ``max_chars`` is refused rather than cut, so nothing is ever
half-attached without the user deciding it; the one exception is the row cap of a
spreadsheet, which sends the first rows of each sheet and says so in a note.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class DocumentLimits:
    max_file_bytes: int = 64 * MIB
    """A PDF, Office file or other document as stored on disk."""
    max_text_file_bytes: int = 16 * MIB
    """A plain text, Markdown, HTML, CSV or source file."""
    max_chars: int = 1_500_000
    """Characters of extracted text (about 375,000 tokens: more than any model's window)."""
    max_pages: int = 3000
    """Pages of a PDF or slides of a presentation."""
    max_sheets: int = 200
    max_rows_per_sheet: int = 2000
    """Rows of one sheet (or a CSV file) put in the text; the rest is named in a note."""
    max_columns: int = 100
    """Columns of one sheet put in the text."""
    max_zip_entries: int = 10_000
    max_unzipped_bytes: int = 512 * MIB
    """All members of an Office file (a zip) inflated, as its directory declares them."""
    max_compression_ratio: int = 200
    """A member that inflates more than this many times its stored size is a zip bomb (judged
    from the directory first, then on the stream as each member is inflated once)."""


DEFAULT_LIMITS = DocumentLimits()


@dataclass(frozen=True, slots=True)
class OverLimit:
    """The limit a refused file passed: ``limit`` of ``unit``, one of "bytes", "characters",
    "pages", "slides" or "sheets"."""

    unit: str
    limit: int


def describe_size(size: int) -> str:
    """``size`` bytes for a person: "12 MB", "800 KB"."""
    if size >= MIB:
        return f"{size / MIB:.0f} MB"
    return f"{max(1, round(size / 1024))} KB"


def too_much_text(name: str, limits: DocumentLimits) -> str:
    """The refusal for a file whose extracted text passes ``max_chars``."""
    return (
        f"{name} holds more than {limits.max_chars:,} characters of text, more than a model can read "
        "at once. Attach a part of it."
    )
