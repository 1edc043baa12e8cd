"""A file past a reader's size limit: a knowledge base says it was skipped, an attachment
keeps the advice to attach a smaller file (the same readers serve both)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from tests.support.documents import write_encrypted_pdf

from threadline.documents import DocumentError, extract_document
from threadline.documents.limits import DocumentLimits
from threadline.knowledge.reading import read_file, reason_of


def _refusal(path: Path) -> DocumentError:
    with pytest.raises(DocumentError) as caught:
        read_file(path, threading.Event())
    return caught.value


def test_an_oversized_file_in_a_base_is_said_to_be_skipped_without_attach_advice(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as handle:
        handle.truncate(17 * 1024 * 1024)  # past the 16 MB a text file may be
    reason = reason_of(_refusal(big), big)
    assert reason == "is larger than the 16 MB a knowledge base reads; it was skipped"
    assert "attach" not in reason.lower()


def test_a_file_with_too_much_text_in_a_base_is_said_to_be_skipped(tmp_path: Path) -> None:
    long = tmp_path / "long.txt"
    long.write_text("word " * 820_000, encoding="utf-8")  # 4,100,000 characters, past 4,000,000
    reason = reason_of(_refusal(long), long)
    assert reason == (
        "has more than 4,000,000 characters, more than a knowledge base reads of one file; it was skipped"
    )


def test_an_attachment_past_the_limit_keeps_its_advice(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text("x" * 2048, encoding="utf-8")
    with pytest.raises(DocumentError) as caught:
        extract_document(big, limits=DocumentLimits(max_text_file_bytes=1024))
    assert caught.value.user_message == "big.txt is larger than 1 KB; attach a smaller file."
    long = tmp_path / "long.txt"
    long.write_text("x" * 101, encoding="utf-8")
    with pytest.raises(DocumentError) as caught:
        extract_document(long, limits=DocumentLimits(max_chars=100))
    assert caught.value.user_message == (
        "long.txt holds more than 100 characters of text, more than a model can read at once. "
        "Attach a part of it."
    )


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600),  # an old Word file
        ("locked.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600),  # an encrypted one
        ("locked.pdf", None),
    ],
)
def test_a_file_of_a_base_is_never_told_to_be_attached_again(
    tmp_path: Path, name: str, content: bytes | None
) -> None:
    path = tmp_path / name
    if content is None:
        write_encrypted_pdf(path, "The answer is on this page.")
    else:
        path.write_bytes(content)
    reason = reason_of(_refusal(path), path)
    assert "attach" not in reason.lower(), reason
    assert reason.endswith("at the next indexing."), reason
