"""An Office file whose zip directory lies: a part declared small that inflates to a gigabyte.

The directory alone looked harmless, and the parser, reading the part whole through
``zipfile``, inflated all of it before anything compared it with the declared size.
Every part is now inflated once on the stream before the parser opens the file.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from tests.support.documents import write_docx
from tests.support.peak_memory import MB, traced_peak
from tests.support.zip_bombs import write_zip_bomb

from threadline.documents.extract import extract_document
from threadline.documents.model import DocumentError

SMALL = 64 * MB


def lying_docx(tmp_path: Path, *, fill: bytes) -> Path:
    """A real Word document whose body is replaced by a gigabyte declared as its real size."""
    real = write_docx(tmp_path / "real.docx")
    with zipfile.ZipFile(real) as archive:
        parts = {info.filename: archive.read(info) for info in archive.infolist()}
    body = parts.pop("word/document.xml")
    return write_zip_bomb(
        tmp_path / "report.docx",
        inflated=1024 * MB,
        prefix=body[: body.index(b"<w:body>") + len(b"<w:body>")],
        fill=fill,
        name="word/document.xml",
        declared=len(body),
        beside=parts,
    )


@pytest.mark.parametrize("fill", [b"\0", b" "], ids=["zeros", "blanks"])
def test_a_part_that_inflates_past_its_declared_size_is_refused_in_small_memory(
    tmp_path: Path, fill: bytes
) -> None:
    bomb = lying_docx(tmp_path, fill=fill)

    def attach() -> str:
        try:
            extract_document(bomb)
        except DocumentError as error:
            return str(error)
        return "opened"

    outcome, peak = traced_peak(attach)
    print(f"peak {peak / MB:.1f} MB")
    assert outcome == (
        "report.docx holds a part that unpacks to far more than its size; "
        "Threadline does not open it (it may be a zip bomb)."
    )
    assert peak < SMALL


def test_a_real_document_still_opens(tmp_path: Path) -> None:
    assert "PELICAN" in extract_document(write_docx(tmp_path / "real.docx")).text
