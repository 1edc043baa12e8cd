"""Real documents of every attachable kind, written by the tests themselves.

PDFs are written byte by byte (a catalog, pages with a Helvetica text stream, a
correct cross-reference table), so the reader under test meets a real file and not
one made by the library that reads it. Encrypted ones are made with pypdf's own
``encrypt``; Office files with python-docx, openpyxl and python-pptx.
"""

from __future__ import annotations

import zipfile
from pathlib import Path


def _pdf_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_pdf(path: Path, pages: list[str]) -> Path:
    """A PDF with one page per entry; each line of an entry is a line of text (an empty entry: no text)."""
    objects: list[bytes] = []
    count = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, text in enumerate(pages):
        page = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>"
        )
        objects.append(page.encode())
        if text:
            lines = [f"({_pdf_string(line)}) Tj T*" for line in text.split("\n")]
            stream = "BT /F1 12 Tf 14 TL 72 720 Td " + " ".join(lines) + " ET"
        else:
            stream = "0.5 g 72 72 200 200 re f"  # a grey box: a page with marks but no text
        data = stream.encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def write_encrypted_pdf(path: Path, text: str, password: str = "secret") -> Path:
    from pypdf import PdfReader, PdfWriter

    plain = write_pdf(path.with_name("plain-" + path.name), [text])
    writer = PdfWriter(clone_from=PdfReader(plain))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="AES-128")
    with path.open("wb") as out:
        writer.write(out)
    return path


def write_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.add_heading("Quarterly report", level=1)
    document.add_paragraph("Revenue grew by 12 percent in the PELICAN region.")
    document.add_paragraph("Hire two engineers", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Region"
    table.cell(0, 1).text = "Sales"
    table.cell(1, 0).text = "North"
    table.cell(1, 1).text = "1,200"
    document.add_paragraph("The end.")
    document.save(str(path))
    return path


def write_xlsx(path: Path, rows_in_second_sheet: int = 3) -> Path:
    import openpyxl

    workbook = openpyxl.Workbook()
    first = workbook.active
    assert first is not None
    first.title = "Budget"
    first.append(["Item", "Cost"])
    first.append(["Laptop", 1499.0])
    first.append(["Desk", 300])
    first["C2"] = "=B2+B3"  # a formula never calculated: no cached value, so read as empty
    second = workbook.create_sheet("Log")
    second.append(["Row", "Value"])
    for n in range(1, rows_in_second_sheet + 1):
        second.append([n, f"entry {n}"])
    workbook.save(str(path))
    return path


def write_pptx(path: Path) -> Path:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Launch plan"
    first.placeholders[1].text = "Ship the PELICAN release in May"
    first.notes_slide.notes_text_frame.text = "Mention the beta testers."
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Numbers"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    table.cell(0, 0).text = "Month"
    table.cell(0, 1).text = "Users"
    table.cell(1, 0).text = "May"
    table.cell(1, 1).text = "5000"
    deck.save(str(path))
    return path


def write_zip_bomb_xlsx(path: Path, inflated: int = 64 * 1024 * 1024) -> Path:
    """An .xlsx-named zip with one sheet that inflates to ``inflated`` bytes from a few tens of KB."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as member:
            chunk = b"\0" * (1024 * 1024)
            for _ in range(inflated // len(chunk)):
                member.write(chunk)
    return path


def truncated(source: Path, target: Path, keep: float = 0.5) -> Path:
    data = source.read_bytes()
    target.write_bytes(data[: int(len(data) * keep)])
    return target
