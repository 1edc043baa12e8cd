"""Extracting attached documents: real files of every kind, made here, and the ways they go wrong."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.support.documents import (
    truncated,
    write_docx,
    write_encrypted_pdf,
    write_pdf,
    write_pptx,
    write_xlsx,
    write_zip_bomb_xlsx,
)

from threadline.core.messages import ContextFile
from threadline.documents import (
    DocumentError,
    DocumentKind,
    DocumentLimits,
    ExtractedDocument,
    ExtractionCancelled,
    describe_context_file,
    extract_document,
    extract_in_thread,
)
from threadline.documents.html_text import html_to_text
from threadline.documents.text_files import decode_text


def test_a_pdf_gives_its_text_page_by_page_with_the_page_count(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "report.pdf", ["Revenue grew (a lot)\nin PELICAN", "Second page text"])
    doc = extract_document(pdf)
    assert doc.kind is DocumentKind.PDF and doc.page_count == 2 and doc.notes == ()
    assert doc.text == "--- Page 1 ---\nRevenue grew (a lot)\nin PELICAN\n\n--- Page 2 ---\nSecond page text"
    assert doc.tokens == (len(doc.text) + 3) // 4
    context = doc.to_context()
    assert context == ContextFile("report.pdf", doc.text, document_type="pdf", page_count=2)
    assert describe_context_file(context) == f"report.pdf · 2 pages · ≈{doc.tokens} tokens"


def test_a_pdf_with_some_textless_pages_is_sent_with_a_note(tmp_path: Path) -> None:
    doc = extract_document(write_pdf(tmp_path / "mixed.pdf", ["Typed page", ""]))
    assert doc.notes == ("1 of 2 pages have no text (they may be scanned images).",)
    assert "(no text on this page)" in doc.text


def test_a_scanned_pdf_without_a_text_layer_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DocumentError) as refused:
        extract_document(write_pdf(tmp_path / "scan.pdf", ["", ""]))
    assert refused.value.user_message == (
        "scan.pdf: This PDF has no text layer (it may be scanned) — nothing to send."
    )


def test_an_encrypted_pdf_is_refused_as_password_protected(tmp_path: Path) -> None:
    pdf = write_encrypted_pdf(tmp_path / "locked.pdf", "Top secret PELICAN")
    with pytest.raises(DocumentError) as refused:
        extract_document(pdf)
    assert "locked.pdf: This PDF is password-protected" in refused.value.user_message


def test_a_pdf_locked_only_against_copying_opens(tmp_path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    plain = write_pdf(tmp_path / "plain.pdf", ["Readable PELICAN"])
    writer = PdfWriter(clone_from=PdfReader(plain))
    writer.encrypt(user_password="", owner_password="owner", algorithm="AES-128")
    locked = tmp_path / "restricted.pdf"
    with locked.open("wb") as out:
        writer.write(out)
    assert "Readable PELICAN" in extract_document(locked).text


@pytest.mark.parametrize("keep", [0.3, 0.6])
def test_a_truncated_pdf_is_refused_as_damaged(tmp_path: Path, keep: float) -> None:
    whole = write_pdf(tmp_path / "whole.pdf", ["Page one text", "Page two text", "Page three"])
    with pytest.raises(DocumentError) as refused:
        extract_document(truncated(whole, tmp_path / "broken.pdf", keep))
    assert refused.value.user_message == "broken.pdf could not be read: the PDF is damaged or incomplete."


def test_a_file_named_pdf_that_is_not_one_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "fake.pdf"
    fake.write_text("just words", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"fake.pdf is not a PDF"):
        extract_document(fake)


def test_a_pdf_with_more_pages_than_the_limit_is_refused(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "long.pdf", [f"page {n}" for n in range(5)])
    with pytest.raises(DocumentError, match=r"long.pdf has 5 pages; Threadline attaches PDFs of up to 4"):
        extract_document(pdf, limits=DocumentLimits(max_pages=4))


def test_text_beyond_the_character_limit_is_refused_not_cut(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "wordy.pdf", ["x" * 80, "y" * 80])
    with pytest.raises(DocumentError, match=r"more than 100 characters of text"):
        extract_document(pdf, limits=DocumentLimits(max_chars=100))


def test_a_word_document_keeps_headings_lists_and_tables_in_order(tmp_path: Path) -> None:
    doc = extract_document(write_docx(tmp_path / "report.docx"))
    assert doc.kind is DocumentKind.DOCX and doc.page_count is None
    assert doc.text == (
        "# Quarterly report\n\nRevenue grew by 12 percent in the PELICAN region.\n\n- Hire two engineers\n\n"
        "| Region | Sales |\n| --- | --- |\n| North | 1,200 |\n\nThe end."
    )


def test_a_damaged_word_document_is_refused(tmp_path: Path) -> None:
    broken = truncated(write_docx(tmp_path / "whole.docx"), tmp_path / "broken.docx")
    with pytest.raises(DocumentError) as refused:
        extract_document(broken)
    assert refused.value.user_message == (
        "broken.docx could not be read: the Word document is damaged or incomplete."
    )


def test_a_password_protected_office_file_says_so(tmp_path: Path) -> None:
    locked = tmp_path / "locked.xlsx"
    locked.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 2000)
    with pytest.raises(DocumentError, match=r"locked.xlsx is password-protected"):
        extract_document(locked)


def test_a_workbook_gives_each_sheet_as_a_table_of_values(tmp_path: Path) -> None:
    doc = extract_document(write_xlsx(tmp_path / "budget.xlsx"))
    assert doc.kind is DocumentKind.XLSX and doc.page_count == 2 and doc.notes == ()
    assert doc.text == (
        "## Sheet: Budget\n\n| Item | Cost |\n| --- | --- |\n| Laptop | 1499 |\n| Desk | 300 |\n\n"
        "## Sheet: Log\n\n| Row | Value |\n| --- | --- |\n| 1 | entry 1 |\n| 2 | entry 2 |\n| 3 | entry 3 |"
    )
    assert "=B2" not in doc.text  # values, never formulas


def test_a_long_sheet_keeps_its_first_rows_and_says_so(tmp_path: Path) -> None:
    doc = extract_document(
        write_xlsx(tmp_path / "log.xlsx", rows_in_second_sheet=30),
        limits=DocumentLimits(max_rows_per_sheet=10),
    )
    assert doc.notes == ("Sheet 'Log': only the first 10 of 31 rows are included.",)
    assert "| 9 | entry 9 |" in doc.text and "entry 10" not in doc.text


def test_a_zip_bomb_named_xlsx_is_refused_before_parsing(tmp_path: Path) -> None:
    bomb = write_zip_bomb_xlsx(tmp_path / "bomb.xlsx")
    assert bomb.stat().st_size < 1024 * 1024  # 64 MB of zeros stored in well under 1 MB
    with pytest.raises(DocumentError, match=r"bomb.xlsx holds a part that unpacks .* times its size"):
        extract_document(bomb)
    with pytest.raises(DocumentError, match=r"unpacks to more than 32 MB"):
        extract_document(bomb, limits=DocumentLimits(max_unzipped_bytes=32 * 1024 * 1024))


def test_a_presentation_gives_its_slides_with_tables_and_notes(tmp_path: Path) -> None:
    doc = extract_document(write_pptx(tmp_path / "deck.pptx"))
    assert doc.kind is DocumentKind.PPTX and doc.page_count == 2
    assert doc.text == (
        "--- Slide 1 ---\nLaunch plan\n\nShip the PELICAN release in May\n\nNotes: Mention the beta testers."
        "\n\n--- Slide 2 ---\nNumbers\n\n| Month | Users |\n| --- | --- |\n| May | 5000 |"
    )
    assert describe_context_file(doc.to_context()).startswith("deck.pptx · 2 slides · ≈")


def test_csv_and_tsv_become_tables(tmp_path: Path) -> None:
    (tmp_path / "people.csv").write_text('name,city\nAda,"London, UK"\nAlan,Wilmslow\n', encoding="utf-8")
    (tmp_path / "people.tsv").write_text("name\tcity\nAda\tLondon\n", encoding="utf-8")
    assert extract_document(tmp_path / "people.csv").text == (
        "| name | city |\n| --- | --- |\n| Ada | London, UK |\n| Alan | Wilmslow |"
    )
    assert (
        extract_document(tmp_path / "people.tsv").text == "| name | city |\n| --- | --- |\n| Ada | London |"
    )


def test_html_keeps_its_text_and_structure_without_scripts_or_styles(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><title>Release notes</title><style>p{color:red}</style>"
        "<script>alert('x')</script></head><body><h2>What&rsquo;s new</h2>"
        "<p>Faster   start.</p><ul><li>One</li><li>Two &amp; three</li></ul>"
        "<noscript>enable js</noscript></body></html>",
        encoding="utf-8",
    )
    doc = extract_document(page)
    assert doc.kind is DocumentKind.HTML
    assert doc.text == "# Release notes\n\n## What’s new\n\nFaster start.\n\n- One\n- Two & three"


def test_markdown_and_source_files_are_sent_as_written(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Title\n\n*emphasis*\n", encoding="utf-8")
    (tmp_path / "main.rs").write_text("fn main() {}\r\n", encoding="utf-8")
    assert extract_document(tmp_path / "README.md").kind is DocumentKind.MARKDOWN
    code = extract_document(tmp_path / "main.rs")
    assert code.kind is DocumentKind.TEXT and code.text == "fn main() {}\n"


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ("naïve café".encode(), "naïve café"),
        ("\ufeffwith bom".encode("utf-8"), "with bom"),
        ("utf-16 ünïcode".encode("utf-16"), "utf-16 ünïcode"),
        ("utf-16be".encode("utf-16-be").join([b"\xfe\xff", b""]), "utf-16be"),
        ("ancien café".encode("latin-1"), "ancien café"),
    ],
)
def test_text_encodings_are_recognised(data: bytes, text: str) -> None:
    assert decode_text(data, "f.txt") == text


def test_a_binary_file_is_refused(tmp_path: Path) -> None:
    blob = tmp_path / "program.bin"
    blob.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(DocumentError, match=r"program.bin is not a text file"):
        extract_document(blob)


def test_old_office_formats_empty_and_oversized_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0")
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "big.txt").write_text("a" * 2048, encoding="utf-8")
    with pytest.raises(DocumentError, match=r"old.doc is in an old Office format .* Word document"):
        extract_document(tmp_path / "old.doc")
    with pytest.raises(DocumentError, match=r"empty.txt is empty"):
        extract_document(tmp_path / "empty.txt")
    with pytest.raises(DocumentError, match=r"big.txt is larger than 1 KB"):
        extract_document(tmp_path / "big.txt", limits=DocumentLimits(max_text_file_bytes=1024))
    with pytest.raises(DocumentError, match=r"gone.pdf is not a file"):
        extract_document(tmp_path / "gone.pdf")


def test_html_to_text_ignores_unclosed_script_content() -> None:
    assert html_to_text("<p>Visible</p><script>var hidden = 1;") == "Visible"


def test_extraction_stops_when_cancelled(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "long.pdf", ["text"] * 3)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ExtractionCancelled):
        extract_document(pdf, cancel=cancel)


@pytest.mark.asyncio
async def test_extraction_runs_in_a_worker_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threadline.documents.extract as extract_module

    pdf = write_pdf(tmp_path / "report.pdf", ["Threaded PELICAN"])
    threads: list[threading.Thread] = []
    real = extract_module.extract_document

    def spy(path: Path, **kwargs: Any) -> ExtractedDocument:
        threads.append(threading.current_thread())
        return real(path, **kwargs)

    monkeypatch.setattr(extract_module, "extract_document", spy)
    doc = await asyncio.wait_for(extract_in_thread(pdf), timeout=60)
    assert "Threaded PELICAN" in doc.text
    assert threads and threads[0] is not threading.main_thread()


@pytest.mark.asyncio
async def test_cancelling_the_task_stops_the_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threadline.documents.extract as extract_module

    started = threading.Event()
    stopped = threading.Event()

    def slow(path: Path, *, limits: DocumentLimits, cancel: threading.Event) -> ExtractedDocument:
        started.set()
        cancel.wait(60)  # a long document: the reader checks ``cancel`` between pages
        stopped.set()
        raise ExtractionCancelled

    monkeypatch.setattr(extract_module, "extract_document", slow)
    task = asyncio.ensure_future(extract_in_thread(tmp_path / "big.pdf"))
    await asyncio.to_thread(started.wait, 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(stopped.wait, 60)
