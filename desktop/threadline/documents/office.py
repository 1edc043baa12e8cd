"""Checks shared by the Office formats (DOCX, XLSX, PPTX) before their library opens them.

An Office file protected with a password is not a zip at all but an encrypted OLE
container; telling the user so beats "damaged". Every other file goes through the
zip guard, so the parser never meets a zip bomb.
"""

from __future__ import annotations

from pathlib import Path

from threadline.documents.limits import DocumentLimits
from threadline.documents.model import DocumentError
from threadline.documents.zip_guard import check_zip

OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def check_office_file(path: Path, name: str, what: str, limits: DocumentLimits) -> None:
    with path.open("rb") as stream:
        head = stream.read(8)
    if head == OLE_SIGNATURE:
        raise DocumentError(
            f"{name} is password-protected or saved in an old Office format; "
            f"remove the password (or save it as a current {what}) and attach it again."
        )
    check_zip(path, name, what, limits)


def damaged(name: str, what: str) -> DocumentError:
    return DocumentError(f"{name} could not be read: the {what} is damaged or incomplete.")
