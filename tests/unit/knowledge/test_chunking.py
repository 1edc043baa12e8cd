"""Chunks follow the structure of what they cut: pages, headings, definitions; each knows its place."""

from __future__ import annotations

from threadline.documents import DocumentKind
from threadline.knowledge import chunk_text
from threadline.knowledge.chunking import MAX_CHARS


def test_pdf_text_is_cut_at_its_pages_and_each_chunk_knows_its_page() -> None:
    text = "--- Page 1 ---\n" + "alpha " * 60 + "\n\n--- Page 2 ---\n" + "beta " * 60
    chunks = chunk_text(text, DocumentKind.PDF)
    assert [(c.page, c.text.split()[0]) for c in chunks] == [(1, "alpha"), (2, "beta")]


def test_markdown_sections_keep_their_heading_and_line_range() -> None:
    body = "word " * 50
    text = f"# Intro\n\n{body}\n\n## Usage\n\n{body}\nlast line\n"
    chunks = chunk_text(text, DocumentKind.MARKDOWN)
    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [("Intro", 1, 3), ("Usage", 5, 8)]
    assert chunks[1].text.startswith("## Usage") and chunks[1].text.endswith("last line")


def test_a_heading_inside_a_code_fence_is_not_a_section() -> None:
    text = "# Real\n\n```sh\n# a shell comment\necho hi\n```\n" + "more " * 50
    chunks = chunk_text(text, DocumentKind.MARKDOWN)
    assert [c.heading for c in chunks] == ["Real"]


def test_source_code_is_cut_at_top_level_definitions_with_their_decorators() -> None:
    filler = "    x = 1\n" * 30
    text = f"import os\n\n\n@cache\ndef first():\n{filler}\n\nclass Second:\n{filler}"
    chunks = chunk_text(text, DocumentKind.TEXT, ".py")
    assert [c.heading for c in chunks] == ["first", "Second"]
    assert chunks[0].text.startswith("import os") or chunks[0].line_start == 4
    assert any(c.text.startswith("@cache\ndef first") or "@cache" in c.text for c in chunks)
    assert chunks[1].text.startswith("class Second")


def test_a_long_text_is_cut_in_pieces_no_longer_than_the_bound_and_nothing_is_lost() -> None:
    paragraphs = [f"paragraph {i} " + "lorem ipsum " * 30 for i in range(40)]
    text = "\n\n".join(paragraphs)
    chunks = chunk_text(text, DocumentKind.TEXT, ".txt")
    assert len(chunks) > 5
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    joined = " ".join(c.text for c in chunks)
    assert all(f"paragraph {i} " in joined for i in range(40))
    assert chunks[0].line_start == 1 and chunks[-1].line_end == text.count("\n") + 1


def test_one_enormous_line_is_cut_too() -> None:
    chunks = chunk_text("x" * (MAX_CHARS * 3 + 5), DocumentKind.TEXT, ".js")
    assert [len(c.text) for c in chunks] == [MAX_CHARS, MAX_CHARS, MAX_CHARS, 5]
