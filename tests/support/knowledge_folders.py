"""A folder of real documents for knowledge tests: PDFs, a Word file, Markdown and code."""

from __future__ import annotations

from pathlib import Path

from tests.support.documents import write_docx, write_pdf

PDF_ANSWER = "The ALBATROSS valve must be torqued to 42 newton metres."


def knowledge_folder(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write_pdf(
        root / "manual.pdf",
        [
            "Chapter one\nUnpacking the pump and checking the parts.",
            "Chapter two\nMounting the pump on a flat surface.",
            f"Chapter three\n{PDF_ANSWER}",
            "Chapter four\nCleaning and storage in winter.",
        ],
    )
    write_pdf(root / "other.pdf", ["A short note about gardening and tomatoes."])
    write_docx(root / "report.docx")
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "setup.md").write_text(
        "# Setup\n\n"
        + "Install the tools first, then read the rest of this page. " * 5
        + "\n\n## Network\n\nThe proxy listens on port 3128 for the KESTREL lab.\n",
        encoding="utf-8",
    )
    (root / "code").mkdir(exist_ok=True)
    (root / "code" / "billing.py").write_text(
        "import math\n\n\n"
        "def invoice_total(lines):\n    return sum(line.amount for line in lines)\n\n\n"
        "class Ledger:\n    def post(self, entry):\n        self.entries.append(entry)\n",
        encoding="utf-8",
    )
    return root
