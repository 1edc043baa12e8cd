"""Text of a PDF, page by page, with pypdf (pure Python; imported only when a PDF is attached).

Each page's text follows a ``--- Page N ---`` line so the model (and the user
asking about "page 7") can tell the pages apart. A PDF encrypted with an empty
user password (only printing or copying restricted) opens as usual; one that needs
a password is refused. A PDF whose pages carry no text at all is a scan or a set of
images: it is refused, because sending nothing would look like success; a PDF with
some textless pages is sent with a note naming how many.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from threadline.documents.limits import DocumentLimits, OverLimit, too_much_text
from threadline.documents.model import DocumentError, DocumentKind, ExtractedDocument, ExtractionCancelled

log = logging.getLogger("threadline.documents")

PASSWORD_PROTECTED = (
    "This PDF is password-protected: Threadline cannot read it. Remove the password and attach it again."
)
NO_TEXT_LAYER = "This PDF has no text layer (it may be scanned) — nothing to send."


def extract_pdf(path: Path, name: str, limits: DocumentLimits, cancel: threading.Event) -> ExtractedDocument:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError

    def damaged(err: BaseException) -> DocumentError:
        log.info("could not read the PDF %s: %s: %s", name, type(err).__name__, err)
        return DocumentError(f"{name} could not be read: the PDF is damaged or incomplete.")

    with path.open("rb") as head:
        if b"%PDF-" not in head.read(1024):
            raise DocumentError(f"{name} is not a PDF (it does not start like one).")
    try:
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except (DependencyError, NotImplementedError) as err:
                raise DocumentError(f"{name}: {PASSWORD_PROTECTED}") from err
            if not opened:
                raise DocumentError(f"{name}: {PASSWORD_PROTECTED}")
        count = len(reader.pages)
    except DocumentError:
        raise
    except FileNotDecryptedError as err:
        raise DocumentError(f"{name}: {PASSWORD_PROTECTED}") from err
    except Exception as err:  # untrusted input: pypdf raises many kinds of errors on a broken file
        raise damaged(err) from err
    if count == 0:
        raise DocumentError(f"{name} has no pages.")
    if count > limits.max_pages:
        raise DocumentError(
            f"{name} has {count:,} pages; Threadline attaches PDFs of up to {limits.max_pages:,}.",
            OverLimit("pages", limits.max_pages),
        )

    parts: list[str] = []
    chars = 0
    textless = 0
    for number in range(count):
        if cancel.is_set():
            raise ExtractionCancelled
        try:
            text = (reader.pages[number].extract_text() or "").strip()
        except FileNotDecryptedError as err:
            raise DocumentError(f"{name}: {PASSWORD_PROTECTED}") from err
        except Exception as err:  # a broken page stream, an unknown font encoding…
            raise damaged(err) from err
        if not text:
            textless += 1
        parts.append(f"--- Page {number + 1} ---\n{text or '(no text on this page)'}")
        chars += len(text)
        if chars > limits.max_chars:
            raise DocumentError(too_much_text(name, limits), OverLimit("characters", limits.max_chars))
    if textless == count:
        raise DocumentError(f"{name}: {NO_TEXT_LAYER}")
    notes: tuple[str, ...] = ()
    if textless:
        notes = (f"{textless:,} of {count:,} pages have no text (they may be scanned images).",)
    return ExtractedDocument(name, DocumentKind.PDF, "\n\n".join(parts), page_count=count, notes=notes)
